"""The Ray executor's cost per trial beside the local executor's, on this machine.

One matrix (``--trials`` samples of one single-turn scenario, prompt-json, recorded
live) against a fake OpenAI-compatible server in its own process that answers after
``--delay`` seconds, run three times: by the local executor (this process, asyncio at
``--concurrency``), then by the Ray executor on a local Ray instance of two CPUs, twice:
"cold" (its workers start and import toolbench during the run) and "warm" (workers up).
Ray's own start-up (``ray.init``) is timed apart: a run pays it once, whatever its size.
Then the recorded matrix is replayed (``--record none``) by each executor, Ray's warm:
the driver reads every cassette and sends it with its batch. Prints the wall time per
trial of each and the differences, Ray minus local.

A Ray task carries a batch of trials through the same scheduler as the local executor,
``--concurrency`` at a time, and two run at once here: the Ray runs have up to twice the
local run's trials in flight. With the server's delay at 0 the figures are the harness's
own cost; with a delay, how much of it the extra width hides.

Run: ``python benchmarks/bench_ray_overhead.py [--trials 400] [--delay 0.02]
[--concurrency 4]``; ``--tiny``: 8 trials (checks it still runs; the figures mean nothing).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_concurrency import fake_server, plan_matrix  # the same matrix and server


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--delay", type=float, default=0.02, help="the server's seconds per reply")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--tiny", action="store_true", help="8 trials")
    args = ap.parse_args()
    if args.tiny:
        args.trials = 8
    try:
        import ray
    except ImportError:
        print("ray is not installed (pip install -e '.[ray]'): nothing measured")
        return
    os.environ.setdefault("OPENAI_API_KEY", "bench-not-a-secret")  # before Ray's workers start
    from toolbench.providers import litellm_api

    litellm_api.warm()  # LiteLLM's import is start-up, in either executor
    with tempfile.TemporaryDirectory() as kept, fake_server(args.delay) as (base_url, _pid):
        cas = Path(kept) / "cas"  # what the recording runs write and the replays read
        local = _timed("local", args, base_url, cas)
        local_replay = _timed("local", args, base_url, cas, "none")
        t0 = time.perf_counter()
        ray.init(
            num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False
        )
        start = time.perf_counter() - t0
        try:
            cold = _timed("ray", args, base_url, cas)
            warm = _timed("ray", args, base_url, cas)
            ray_replay = _timed("ray", args, base_url, cas, "none")
        finally:
            ray.shutdown()
    n = args.trials
    print(f"trials              : {n} per run, server delay {args.delay} s, "
          f"concurrency {args.concurrency}")  # fmt: skip
    print(
        f"load average        : {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
        f"on {os.cpu_count()} cores (at the end)"
    )
    print(f"ray start-up        : {start:.2f} s (ray.init, once per run)")
    rows = [("local", local), ("ray cold", cold), ("ray warm", warm),
            ("replay, local", local_replay), ("replay, ray warm", ray_replay)]  # fmt: skip
    for name, wall in rows:
        print(f"{name:<20}: {wall:.2f} s wall, {wall / n * 1000:.2f} ms / trial")
    print(f"ray - local / trial : cold {(cold - local) / n * 1000:+.2f} ms, "
          f"warm {(warm - local) / n * 1000:+.2f} ms")  # fmt: skip
    print(f"replay, ray - local : {(ray_replay - local_replay) / n * 1000:+.2f} ms / trial "
          "(the driver sends each cassette with its batch)")  # fmt: skip


def _timed(
    executor: str, args: argparse.Namespace, base_url: str, cas: Path,
    record: Literal["all", "none"] = "all",
) -> float:  # fmt: skip
    """Wall seconds of one run of the matrix by ``executor`` (planning excluded):
    recorded live into ``cas``, or replayed from it."""
    from toolbench.runner.run import execute_run

    with tempfile.TemporaryDirectory() as tmp:
        plan = plan_matrix(Path(tmp), args.trials, args.concurrency, base_url,
                           executor=executor, record=record, cassettes=cas)  # fmt: skip
        done: list[object] = []
        t0 = time.perf_counter()
        execute_run(plan, done.append)
        wall = time.perf_counter() - t0
    assert len(done) == args.trials, f"{executor}: {len(done)} of {args.trials} trials"
    return wall


if __name__ == "__main__":
    main()
