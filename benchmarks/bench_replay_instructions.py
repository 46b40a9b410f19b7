"""Streamed against plain replay counted in instructions, not seconds (issue 21's ratio).

CPU seconds on this shared machine drift by half within minutes (the same command took
1.7 s on one spell and 2.5 s on the next), which moves a ratio of two per-trial figures
either way. Instructions executed do not drift: this runs the four commands of
``bench_replay_cpu.py``'s whole-command figure (every scenario whose streamed cassettes are
committed, and one, each plain and streamed, both local models, the five default formats)
under valgrind's callgrind and reports the instructions a trial (the difference of the two
sizes, so start-up cancels) and their ratio. It is a proxy, beside the CPU figures, not
instead of them: an instruction is not a fixed time (cache misses, allocation). About
three minutes. Run from the repository root: ``python benchmarks/bench_replay_instructions.py``;
``--tiny``: two streamed scenarios against one (checks it still runs; still slow under
callgrind, so the test suite runs it with a stand-in ``valgrind`` that only runs the command).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_replay_cpu import MODELS, ROOT, STREAMED

_COLLECTED = re.compile(r"Collected : (\d+)")


def instructions(*args: str) -> int:
    """Instructions executed by one ``toolbench run --record none`` (callgrind)."""
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
             sys.executable, "-m", "toolbench", "run", "--record", "none", "--quiet",
             "--no-report", "--out", str(Path(tmp) / "r"), *args],
            check=False, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
    if done.returncode not in (0, 3):  # 3: a cell measured nothing (the run went through)
        raise SystemExit(f"toolbench run {' '.join(args)} exited {done.returncode}")
    found = _COLLECTED.search(done.stderr)
    if found is None:
        raise SystemExit(f"callgrind gave no count:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiny", action="store_true", help="two streamed scenarios against one")
    streamed = STREAMED[:2] if ap.parse_args().tiny else STREAMED
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    trials = len(streamed) * 2 * 5
    per: dict[str, float] = {}
    for label, extra in (("plain", ()), ("streamed", ("--stream", "on"))):
        big = instructions("--scenarios", ",".join(streamed), "--models", MODELS, *extra)
        small = instructions("--scenarios", streamed[0], "--models", MODELS, *extra)
        per[label] = (big - small) / (trials - 10)
        print(f"{label:8} replay : {per[label] / 1e6:.2f} M instructions a trial "
              f"({big / 1e9:.2f} G for {trials} trials, {small / 1e9:.2f} G for 10)")  # fmt: skip
    if per["plain"] > 0:  # at --tiny's size the difference can vanish
        print(f"streamed / plain: {per['streamed'] / per['plain']:.2f} (aim <= 2)")


if __name__ == "__main__":
    main()
