"""Replay speed: trials per second when replaying at least 1,000 cassette trials, next to
the floor for the same files (reading and decoding the cassettes and parsing the replies,
with no LiteLLM and no HTTP), as a ratio; and the harness overhead per trial (each
trial's ``harness_s``: its wall time, queueing excluded, less the provider's, which on a
replay is none), with the share of exchanges answered at the provider boundary.

Replays the committed cassettes of the default matrix (both local models, four formats,
the bundled scenarios tagged ``recorded``, the ones with cassettes) as many times as
needed to pass 1,000 trials.
Run from the repository root: ``python benchmarks/bench_replay.py [--min-trials 1000]``;
``--tiny``: one recorded scenario, replayed once (checks it still runs).
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from toolbench.cassettes import recording
from toolbench.formats.base import ModelReply
from toolbench.formats.format_registry import get_format


def _replies(cassette: Path) -> list[ModelReply]:
    out = []
    for exchange in recording.load(cassette).exchanges:
        body: Any = exchange.response.body
        choice = body["choices"][0]
        msg = choice["message"]
        out.append(
            ModelReply(
                text=msg.get("content") or "",
                tool_calls=msg.get("tool_calls") or [],
                finish_reason=choice.get("finish_reason"),
                raw_message=msg,
            )
        )
    return out


def floor(plan: Any, repeat: int) -> tuple[int, float]:
    """Decode every cassette and parse every reply, ``repeat`` times."""
    t0 = time.perf_counter()
    n = 0
    for _ in range(repeat):
        for spec in plan.specs:
            if not spec.cassette.is_file():
                continue  # nothing recorded (a hung generation): replay skips it too
            fmt = get_format(spec.fmt.spec)
            for reply in _replies(spec.cassette):
                fmt.parse_reply(reply, spec.scenario.tools)
            n += 1
    return n, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--min-trials", type=int, default=1000)
    ap.add_argument("--tiny", action="store_true", help="one recorded scenario, once")
    args = ap.parse_args()
    if args.tiny:
        args.min_trials = 1

    from toolbench.providers import litellm_api
    from toolbench.runner.options import RunOptions
    from toolbench.runner.run import execute_run, plan_run

    lm = litellm_api.litellm()  # import cost is start-up, not replay speed
    full_path: list[int] = []
    acompletion = lm.acompletion

    async def counted(**kw: Any) -> Any:
        full_path.append(1)
        return await acompletion(**kw)

    lm.acompletion = counted
    harness: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        # the other bundled scenarios have no cassettes yet
        recorded = ["calculate-product"] if args.tiny else ["recorded"]
        cfg0 = RunOptions(record="none", out=Path(tmp) / "probe", scenarios=recorded)
        per_run = len(plan_run(cfg0).specs)
        repeat = max(1, math.ceil(args.min_trials / per_run))
        total, wall, ok, exchanges = 0, 0.0, 0, 0
        for i in range(repeat):
            cfg = RunOptions(record="none", out=Path(tmp) / f"r{i}", scenarios=recorded)
            plan = plan_run(cfg)
            done: list[Any] = []
            t0 = time.perf_counter()
            execute_run(plan, done.append)
            wall += time.perf_counter() - t0
            total += len(done)
            ok += sum(1 for r in done if r.status == "ok")
            harness += [r.harness_s for r in done if r.status == "ok" and r.harness_s is not None]
            exchanges += sum(len(r.turns) for r in done if r.status == "ok")
        n_floor, floor_wall = floor(plan_run(cfg0), repeat)
    replay_rate = ok / wall
    floor_rate = n_floor / floor_wall
    print(f"replayed trials     : {total} ({ok} with a cassette) in {wall:.2f} s")
    print(f"replay              : {replay_rate:.1f} trials/s (trials with a cassette)")
    print(f"floor (decode+parse): {n_floor} in {floor_wall:.2f} s -> {floor_rate:.1f} trials/s")
    print(f"replay / floor      : {replay_rate / floor_rate:.2f} (aim >= 0.33)")
    # On a replay every millisecond is the harness's: wall / trials is its cost per trial.
    # A trial's own harness_s is longer: trials interleave on one event loop (concurrency
    # 4), so it also holds the time the loop spent on the others meanwhile.
    print(f"harness per trial   : {1000 * wall / total:.1f} ms (wall / trials; aim < 5 ms)")
    mean_ms = 1000 * statistics.fmean(harness)
    p50_ms = 1000 * statistics.median(harness)
    print(f"trials' harness_s   : mean {mean_ms:.1f} ms, median {p50_ms:.1f} ms (interleaved)")
    print(f"full-path exchanges : {len(full_path)} of {exchanges} (the rest at the boundary)")


if __name__ == "__main__":
    main()
