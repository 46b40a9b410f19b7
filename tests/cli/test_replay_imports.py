"""A replay of committed cassettes as a whole command loads neither vcrpy, nor pandas,
nor LiteLLM, nor matplotlib: the replay is answered at the provider boundary and the
summary counted without pandas (each was a tenth to a third of replaying the 1,000
``bfcl-smoke`` trials). ``--replay full`` reaches HTTP through LiteLLM, answered by the
same trial cassettes (still without vcrpy, which serves only ``cassettes migrate``), and
gives the same results."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("vcr", "pandas", "litellm", "matplotlib")


def _replay(out: Path, *extra: str) -> tuple[int, list[str]]:
    probe = (
        "import sys, io, contextlib\n"
        "from toolbench.cli.app import run_cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    rc = run_cli(['run', '--record', 'none', '--quiet', '--no-report', '--out',"
        f" {str(out)!r}, '--scenarios', 'calculate-product,mt-order-status',"
        f" '--formats', 'xml,native,prompt-json:shots=2,xml:stream,native:stream', *{extra!r}])\n"
        f"print(rc, [m for m in {HEAVY!r} if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=False
    )
    rc, loaded = done.stdout.splitlines()[-1].split(" ", 1)
    return int(rc), eval(loaded)  # a list literal the probe printed


def _trials(out: Path) -> list[dict[str, object]]:
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    for r in rows:  # what differs between two runs of the same cassettes
        for key in ("run_id", "started_at", "finished_at", "wall_s", "harness_s"):
            r.pop(key, None)
    return sorted(rows, key=lambda r: (r["model"], r["format"], r["scenario_id"]))


def test_a_boundary_replay_loads_none_of_them_and_full_replay_agrees(tmp_path: Path) -> None:
    rc, loaded = _replay(tmp_path / "boundary")
    assert (rc, loaded) == (0, [])
    rc, loaded = _replay(tmp_path / "full", "--replay", "full")
    assert rc == 0
    assert "litellm" in loaded and "vcr" not in loaded  # HTTP through LiteLLM, no vcrpy
    boundary, full = _trials(tmp_path / "boundary"), _trials(tmp_path / "full")
    assert len(boundary) == 20
    assert {r["status"] for r in boundary} == {"ok"}
    assert [r["scores"] for r in boundary] == [r["scores"] for r in full]
    assert [r["turns"] for r in boundary] == [r["turns"] for r in full]
