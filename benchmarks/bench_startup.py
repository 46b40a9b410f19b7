"""Start-up: ``toolbench --help`` wall time against ``python -c pass``, as a ratio.

Also checks that ``--help`` does not import LiteLLM (about 4 s on its own).
Run: ``python benchmarks/bench_startup.py``.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

REPEAT = 7


def _time(cmd: list[str]) -> float:
    times = []
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    base = _time([sys.executable, "-c", "pass"])
    help_cmd = [sys.executable, "-c", "from toolbench.cli.app import main; main()", "--help"]
    helped = _time(help_cmd)
    probe = subprocess.run(
        [sys.executable, "-c",
         "import sys\nfrom toolbench.cli.app import run_cli\nimport contextlib, io\n"
         "with contextlib.redirect_stdout(io.StringIO()): run_cli(['--help'])\n"
         "print('litellm' in sys.modules)"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    imported = probe.stdout.strip().splitlines()[-1]
    print(f"python -c pass      : {base * 1000:7.1f} ms (median of {REPEAT})")
    print(f"toolbench --help    : {helped * 1000:7.1f} ms (median of {REPEAT})")
    print(f"ratio               : {helped / base:7.1f}x")
    print(f"litellm imported    : {imported}")


if __name__ == "__main__":
    main()
