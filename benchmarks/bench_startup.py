"""Start-up: ``toolbench --help`` and a usage error against ``python -c pass``, side by side.

Each command runs ``REPEAT`` times, interleaved (so a busy machine slows them alike); the
median wall time and the median CPU time (user + system, of the child) of each, and the
ratios to ``python -c pass``. Also checks that ``--help`` imports neither LiteLLM (seconds
on its own) nor rich (typer's rich help, most of the start-up before the plain help).
Run: ``python benchmarks/bench_startup.py``; ``--tiny``: each command once (checks it still
runs).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

REPEAT = 15
CLI = [sys.executable, "-c", "from toolbench.cli.app import main; main()"]
COMMANDS = {
    "python -c pass": ([sys.executable, "-c", "pass"], 0),
    "toolbench --help": ([*CLI, "--help"], 0),
    "usage error": ([*CLI, "report"], 2),  # a missing argument: one line, exit 2
}


def _once(cmd: list[str], code: int) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``cmd`` (which must exit ``code``)."""
    before = os.times()
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True)
    wall = time.perf_counter() - t0
    after = os.times()
    if done.returncode != code:
        sys.exit(f"{cmd}: exit {done.returncode}, expected {code}: {done.stderr.decode()}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiny", action="store_true", help="each command once")
    repeat = 1 if ap.parse_args().tiny else REPEAT
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in COMMANDS}
    for _ in range(repeat):
        for name, (cmd, code) in COMMANDS.items():
            times[name].append(_once(cmd, code))
    wall = {name: statistics.median(w for w, _ in runs) for name, runs in times.items()}
    cpu = {name: statistics.median(c for _, c in runs) for name, runs in times.items()}
    probe = subprocess.run(
        [*CLI[:2], "import sys, contextlib, io\nfrom toolbench.cli.app import run_cli\n"
         "with contextlib.redirect_stdout(io.StringIO()): run_cli(['--help'])\n"
         "print('litellm' in sys.modules, 'rich' in sys.modules)"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    litellm, rich = probe.stdout.strip().splitlines()[-1].split()
    base = wall["python -c pass"]
    print(f"(median of {repeat}; wall ms, CPU ms)")
    for name in COMMANDS:
        print(f"{name:20}: {wall[name] * 1000:7.1f} ms  cpu {cpu[name] * 1000:6.1f} ms")
    print(f"ratio               : {wall['toolbench --help'] / base:7.1f}x")
    print(f"usage error ratio   : {wall['usage error'] / base:7.1f}x")
    print(f"litellm imported    : {litellm}")
    print(f"rich imported       : {rich}")


if __name__ == "__main__":
    main()
