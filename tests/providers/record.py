"""Record the committed provider cassettes: ``python -m tests.providers.record``.

Runs every provider of :data:`~tests.providers.cases.CASES` against its fake, every
format, the Lisbon scenario, into ``tests/data/provider_rt/`` (replacing what is there),
and again streamed for the fakes that stream (:data:`STREAMING`), and writes
``manifest.json``: per provider, the model, the api base it was recorded against (replay
matches on host and port) and the expected results that ``test_committed_replay.py``
compares a replay with (``expected_stream``: the streamed run's).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.providers.cases import CASES, DUMMY_KEY, FORMATS, KEY_ENVS, LISBON, Case
from tests.providers.servers.base import FakeServer
from toolbench.cli.app import run_cli
from toolbench.results import TrialResult, TrialScores
from toolbench.store import load_results
from toolbench.store.schema import SCHEMA_5_CHECKS

ROOT = Path(__file__).parents[1] / "data" / "provider_rt"
PORT_BASE = 47310


def digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def schema_5_shape(scores: TrialScores) -> dict[str, Any]:
    """The scores as schema 5 stored them, which the manifest's digests were taken of: the
    built-in checks as fields (``fallback_rescued`` only where given), then ``errors``,
    ``reasons``, and the other named values under ``values`` (only when there are any)."""
    out: dict[str, Any] = {}
    others: dict[str, Any] = {}
    for name, v in scores.values.items():
        if name in SCHEMA_5_CHECKS:
            out[name] = v.value
        else:
            others[name] = v.model_dump(mode="json")
    out.update(errors=scores.errors, reasons=scores.reasons)
    if others:
        out["values"] = others
    return out


def summary(results: list[TrialResult]) -> dict[str, Any]:
    """What a replay must reproduce of each trial, by ``format``: its status and scores,
    and a digest of every request sent and reply read (the texts are in the cassettes)."""
    out: dict[str, Any] = {}
    for r in sorted(results, key=lambda r: r.format):
        out[r.format] = {
            "status": r.status,
            "call_accuracy": r.scores.get("call_accuracy") if r.scores else None,
            "final_answer_ok": r.scores.get("final_answer_ok") if r.scores else None,
            "scores": digest(schema_5_shape(r.scores) if r.scores else None),
            "requests": digest([t.request for t in r.turns]),
            "replies": digest([t.reply.model_dump(mode="json") for t in r.turns]),
        }
    return out


STREAMING = ("openai_chat",)
"""The fakes that also answer streamed (``stream: true``): their cases are recorded
streamed too (``expected_stream`` in the manifest)."""


def run_args(model: str, base: str, out: Path, record: str, stream: str = "off") -> list[str]:
    return [
        "run", "--models", model, "--formats", ",".join(FORMATS),
        "--scenarios", str(LISBON), "--api-base", base,
        "--out", str(out), "--cassettes", str(ROOT / "cassettes"), "--record", record,
        "--stream", stream, "--quiet", "--no-report",
    ]  # fmt: skip


def _serve(case: Case, port: int) -> FakeServer:
    """``case``'s fake on ``port``. The port is in the system's ephemeral range: a client
    connection of an earlier case may hold it in TIME_WAIT (up to a minute), so a bind
    that fails is tried again."""
    for _ in range(BIND_TRIES - 1):
        try:
            return case.server(port)
        except OSError:
            time.sleep(2)
    return case.server(port)


BIND_TRIES = 45


def main() -> None:
    for env in KEY_ENVS:
        os.environ[env] = DUMMY_KEY
    shutil.rmtree(ROOT, ignore_errors=True)
    manifest: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n, case in enumerate(CASES):
            # A fixed port per provider: a re-recording changes the cassettes' bytes only
            # where the exchange changed (and the Date header).
            with _serve(case, PORT_BASE + n) as server:
                out = Path(tmp) / case.id
                rc = run_cli(run_args(case.model, server.base_url, out, "all"))
                if rc != 0:
                    raise SystemExit(f"{case.id}: run exited {rc}")
                manifest[case.id] = {
                    "model": case.model,
                    "api_base": server.base_url,
                    "expected": summary(load_results(out)),
                }
                if case.module in STREAMING:
                    out = Path(tmp) / f"{case.id}-stream"
                    rc = run_cli(run_args(case.model, server.base_url, out, "all", "on"))
                    if rc != 0:
                        raise SystemExit(f"{case.id} streamed: run exited {rc}")
                    manifest[case.id]["expected_stream"] = summary(load_results(out))
    text = json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False)
    (ROOT / "manifest.json").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
