"""Replay CPU of LiteLLM kinds' cassettes, whole command, at the boundary and in full.

A replay at the boundary answers from the replies the recording kept as read
(:func:`toolbench.providers.replay.replay_kept`: each kept message read by the one reader
as the one event of its reply) and never imports LiteLLM; ``--replay full`` re-derives
every reply from the recorded bytes through LiteLLM (the path every LiteLLM kind's replay
took before replies were kept, but for the boundary replay of OpenAI chat bodies).
Measured, each the least of ``ROUNDS`` runs (default 3), the two modes alternated:

* plain: ``toolbench run --record none`` of the committed provider cassettes of openai,
  anthropic and gemini (tests/data/provider_rt: six formats, two turns each), a fresh
  process each (start-up, imports, scoring, results and summary included); the same,
  streamed, of the committed streamed fixtures of openai and deepseek-reasoner;
* streamed: the two streamed turns of each round-trip wire (openai, anthropic, gemini,
  ollama, bedrock; recorded here against the fakes of ``tests/providers``) replayed
  through the shared call in a fresh process.

Each line says whether the process imported LiteLLM. Run from the repository root:
``python benchmarks/bench_provider_replay.py [ROUNDS]``; ``--tiny``: one round of the
first case of each kind, at the boundary only (checks it still runs).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.providers.record import ROOT as FIXTURES  # noqa: E402
from tests.providers.record import run_args  # noqa: E402

PLAIN = ("openai", "anthropic", "gemini")
STREAMED_FIXTURES = ("openai", "deepseek-reasoner")
"""Committed provider fixtures recorded streamed too (the OpenAI-compatible family)."""
STREAMED = ("openai", "anthropic", "gemini", "ollama", "bedrock")
RUN = """
import sys
from toolbench.cli.app import run_cli
rc = run_cli(sys.argv[1:])
print("litellm" in sys.modules, rc)
"""
STREAM = """
import asyncio, sys
from pathlib import Path
from tests.providers.test_call_round_trips import WIRES, _two_turns
wire = next(w for w in WIRES if w.id == sys.argv[1])
asyncio.run(_two_turns(wire, "http://127.0.0.1:9", True, Path(sys.argv[2]), record="none",
                       live=False, replay=sys.argv[3]))
print("litellm" in sys.modules, 0)
"""


def _cpu(code: str, *args: str) -> tuple[float, bool]:
    """CPU seconds (user + system) of ``python -c code args`` and whether it imported
    LiteLLM."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    got = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT,
        check=True, env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'harness'}"},
    )  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    imported, rc = got.stdout.split()[-2:]
    if rc != "0":
        raise SystemExit(f"exit {rc}: {got.stderr[-2000:]}")
    return cpu, imported == "True"


def command(case: str, mode: str, tmp: Path, stream: str = "off") -> tuple[float, bool]:
    """``toolbench run --record none`` of a committed provider fixture."""
    entry = json.loads((FIXTURES / "manifest.json").read_text(encoding="utf-8"))[case]
    out = tmp / f"{case}-{mode}-{len(list(tmp.iterdir()))}"
    argv = [*run_args(entry["model"], entry["api_base"], out, "none", stream), "--replay", mode]
    return _cpu(RUN, *argv)


def record_streams(tmp: Path, wires: tuple[str, ...] = STREAMED) -> None:
    from tests.providers.test_call_round_trips import WIRES, Scripted, _two_turns

    for wire in WIRES:
        if wire.id not in wires:
            continue
        for name, value in wire.env:
            os.environ[name] = value
        with Scripted(wire, True).server as server:
            asyncio.run(_two_turns(wire, server.base_url, True, tmp / wire.id))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("rounds", nargs="?", type=int, default=3)
    ap.add_argument("--tiny", action="store_true", help="one round, one case of each kind")
    args = ap.parse_args()
    rounds, cut = (1, 1) if args.tiny else (args.rounds, None)
    plain, fixtures, streamed = PLAIN[:cut], STREAMED_FIXTURES[:cut], STREAMED[:cut]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "runs").mkdir()
        record_streams(tmp, streamed)
        jobs = [(f"plain {c}", lambda m, c=c: command(c, m, tmp / "runs")) for c in plain]
        jobs += [
            (f"streamed run {c}", lambda m, c=c: command(c, m, tmp / "runs", "on"))
            for c in fixtures
        ]
        jobs += [
            (f"streamed {w}", lambda m, w=w: _cpu(STREAM, w, str(tmp / w), m)) for w in streamed
        ]
        for name, job in jobs:
            # --tiny replays at the boundary only (in full, each job imports LiteLLM)
            modes = ("boundary",) if args.tiny else ("boundary", "full")
            best: dict[str, tuple[float, bool]] = {}
            for _ in range(rounds):
                for mode in modes:
                    cpu, imported = job(mode)
                    if mode not in best or cpu < best[mode][0]:
                        best[mode] = (cpu, imported)
            b = best["boundary"]
            line = f"{name:20s} boundary {b[0]:5.2f} s CPU (LiteLLM imported: {b[1]})"
            if "full" in best:
                f = best["full"]
                line += f", full {f[0]:5.2f} s (LiteLLM imported: {f[1]})"
            print(line)


if __name__ == "__main__":
    main()
