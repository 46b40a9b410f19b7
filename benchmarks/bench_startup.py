"""Start-up: ``toolbench --help`` and usage errors against ``python -c pass``, side by side.

Each command runs ``REPEAT`` times, interleaved (so a busy machine slows them alike), in
an empty scratch directory; printed: the median and least wall time and the median CPU
time (user + system, of the child) of each, and its ratios to ``python -c pass`` (median
to median, least to least: on a shared machine the least is the steadier figure).

The usage errors are of two kinds. Those click finds while parsing (a missing argument,
an unknown option, a value of the wrong type) are printed before any command runs: they
should cost no more than ``--help``. Those a command finds in its options once it runs
(``run --concurrency 0``, ``run --formats nosuch``, ``gate`` of a folder with no results)
are checked by light modules before the runner or the report is imported, and should
cost little more. Also checked: ``--help`` imports neither LiteLLM nor rich, and a
missing argument, ``run --formats nosuch`` and ``gate`` of a folder with no results
import none of pydantic, detect-secrets, rich or LiteLLM.
Run: ``python benchmarks/bench_startup.py``; ``--tiny``: each command once (checks it still
runs).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPEAT = 21
CLI = [sys.executable, "-c", "from toolbench.cli.app import main; main()"]
HELP = "toolbench --help"
COMMANDS = {
    "python -c pass": ([sys.executable, "-c", "pass"], 0),
    HELP: ([*CLI, "--help"], 0),
    # found by click while parsing
    "missing argument": ([*CLI, "report"], 2),
    "unknown option": ([*CLI, "report", "r", "--nope"], 2),
    "not an integer": ([*CLI, "run", "--concurrency", "abc"], 2),
    # found by the command in its options
    "run --concurrency 0": ([*CLI, "run", "--concurrency", "0"], 2),
    "run --formats nosuch": ([*CLI, "run", "--formats", "nosuch"], 2),
    "gate, no results": ([*CLI, "gate", "nosuch", "--min", "call_accuracy=0.5"], 2),
}
HEAVY = ("litellm", "rich", "pydantic", "detect_secrets")
LIGHT = ("missing argument", "run --formats nosuch", "gate, no results")
"""Usage errors whose imports are checked (the command line after ``CLI``)."""
PROBE = (
    "import sys, contextlib, io\nfrom toolbench.cli.app import run_cli\n"
    "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):"
    " run_cli(sys.argv[1:])\n"
    f"print(*('{{}}={{}}'.format(m, m in sys.modules) for m in {HEAVY!r}))"
)


def _once(cmd: list[str], code: int, cwd: str) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``cmd`` (which must exit ``code``)."""
    before = os.times()
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, cwd=cwd)
    wall = time.perf_counter() - t0
    after = os.times()
    if done.returncode != code:
        sys.exit(f"{cmd}: exit {done.returncode}, expected {code}: {done.stderr.decode()}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu


def _imported(argv: list[str], cwd: str) -> dict[str, bool]:
    """Which of :data:`HEAVY` a command line imported, run in a fresh process."""
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], check=True, capture_output=True, text=True, cwd=cwd
    )
    pairs = (item.split("=") for item in probe.stdout.strip().splitlines()[-1].split())
    return {name: value == "True" for name, value in pairs}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiny", action="store_true", help="each command once")
    repeat = 1 if ap.parse_args().tiny else REPEAT
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in COMMANDS}
    with tempfile.TemporaryDirectory() as cwd:
        for _ in range(repeat):
            for name, (cmd, code) in COMMANDS.items():
                times[name].append(_once(cmd, code, cwd))
        at_help = _imported(["--help"], cwd)
        at_error = {name: _imported(COMMANDS[name][0][3:], cwd) for name in LIGHT}
    wall = {name: statistics.median(w for w, _ in runs) for name, runs in times.items()}
    least = {name: min(w for w, _ in runs) for name, runs in times.items()}
    cpu = {name: statistics.median(c for _, c in runs) for name, runs in times.items()}
    base, base_least = wall["python -c pass"], least["python -c pass"]
    print(f"(median of {repeat}, least in brackets; wall ms, CPU ms; ratio to python -c pass)")
    for name in COMMANDS:
        print(
            f"{name:20}: {wall[name] * 1000:7.1f} ms ({least[name] * 1000:6.1f})"
            f"  cpu {cpu[name] * 1000:6.1f} ms"
            f"  {wall[name] / base:5.1f}x ({least[name] / base_least:4.1f}x)"
        )
    print(f"ratio               : {wall[HELP] / base:7.1f}x")
    print(f"usage error ratio   : {wall['missing argument'] / base:7.1f}x")
    print(f"litellm imported    : {at_help['litellm']}")
    print(f"rich imported       : {at_help['rich']}")
    for name, imported in at_error.items():
        heavy = [module for module, loaded in imported.items() if loaded]
        print(f"{name} imports: {', '.join(heavy) or 'none'} of {', '.join(HEAVY)}")


if __name__ == "__main__":
    main()
