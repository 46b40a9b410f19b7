"""Start-up: ``toolbench --help`` wall time against ``python -c pass``, as a ratio.

Also checks that ``--help`` does not import LiteLLM (about 4 s on its own).
Run: ``python benchmarks/bench_startup.py``; ``--tiny``: each command once (checks it still
runs).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

REPEAT = 7


def _time(cmd: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiny", action="store_true", help="each command once")
    repeat = 1 if ap.parse_args().tiny else REPEAT
    base = _time([sys.executable, "-c", "pass"], repeat)
    help_cmd = [sys.executable, "-c", "from toolbench.cli.app import main; main()", "--help"]
    helped = _time(help_cmd, repeat)
    probe = subprocess.run(
        [sys.executable, "-c",
         "import sys\nfrom toolbench.cli.app import run_cli\nimport contextlib, io\n"
         "with contextlib.redirect_stdout(io.StringIO()): run_cli(['--help'])\n"
         "print('litellm' in sys.modules)"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    imported = probe.stdout.strip().splitlines()[-1]
    print(f"python -c pass      : {base * 1000:7.1f} ms (median of {repeat})")
    print(f"toolbench --help    : {helped * 1000:7.1f} ms (median of {repeat})")
    print(f"ratio               : {helped / base:7.1f}x")
    print(f"litellm imported    : {imported}")


if __name__ == "__main__":
    main()
