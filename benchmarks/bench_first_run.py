"""A newcomer's first run: ``toolbench run`` with no arguments, from the repository root.

It replays the committed cassettes of the default matrix (the ``recorded`` selection) and
writes a run and its report, as a first run does; the target is at most 2 minutes on 2
cores with ``infra_error_rate`` 0. Wall and CPU time (the command's own process and its
children) are printed, then the run and report it wrote are removed.
Run: ``python benchmarks/bench_first_run.py`` (with the project installed); ``--tiny`` adds
``--scenarios calculate-product`` (10 trials: checks it still runs, as the tests do).
"""

from __future__ import annotations

import argparse
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
TINY = ("--scenarios", "calculate-product")
"""One recorded scenario: both local models x its formats, 10 trials."""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiny", action="store_true", help="one recorded scenario, not the default")
    args = ap.parse_args()
    script = Path(sys.executable).parent / "toolbench"
    env = {k: v for k, v in os.environ.items() if k != "TOOLBENCH_SCENARIOS"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    argv = [str(script), "run", *(TINY if args.tiny else ())]
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    found = re.search(r"results: (\S+)/results\.jsonl", done.stdout)
    if done.returncode != 0 or found is None:
        sys.exit(f"toolbench run exited {done.returncode}: {done.stderr.strip()[-500:]}")
    run_dir = ROOT / found.group(1)
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    not_ok = sum(1 for r in rows if r["status"] != "ok")
    what = " ".join(TINY) if args.tiny else "no arguments"
    print(f"toolbench run ({what}): {len(rows)} trials, {not_ok} not ok")
    print(f"wall {wall:.1f} s, CPU {cpu:.1f} s, load average {os.getloadavg()[0]:.1f}")
    shutil.rmtree(run_dir)
    (ROOT / "reports" / f"{run_dir.name}.html").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
