"""A newcomer's first run: ``toolbench run`` with no arguments, from the repository root.

It replays the committed cassettes of the default matrix (the ``recorded`` selection) and
writes a run and its report, as a first run does; the target is at most 2 minutes on 2
cores with ``infra_error_rate`` 0. Wall and CPU time (the command's own process and its
children) are printed, then the run and report it wrote are removed.
Run: ``python benchmarks/bench_first_run.py`` (with the project installed).
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    script = Path(sys.executable).parent / "toolbench"
    env = {k: v for k, v in os.environ.items() if k != "TOOLBENCH_SCENARIOS"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([str(script), "run"], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=False)  # fmt: skip
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    found = re.search(r"results: (\S+)/results\.jsonl", done.stdout)
    if done.returncode != 0 or found is None:
        sys.exit(f"toolbench run exited {done.returncode}: {done.stderr.strip()[-500:]}")
    run_dir = ROOT / found.group(1)
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    not_ok = sum(1 for r in rows if r["status"] != "ok")
    print(f"toolbench run (no arguments): {len(rows)} trials, {not_ok} not ok")
    print(f"wall {wall:.1f} s, CPU {cpu:.1f} s, load average {os.getloadavg()[0]:.1f}")
    shutil.rmtree(run_dir)
    (ROOT / "reports" / f"{run_dir.name}.html").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
