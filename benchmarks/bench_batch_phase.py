"""What ``run --batch`` costs per trial on this machine, phase by phase, beside a live run.

One matrix (``--trials`` samples of one single-turn scenario, prompt-json,
``openai/gpt-4o-mini`` so LiteLLM prices it from its cost map) against the fake batch
server (tests/support/fake_batch.py, in this process), run ``--rounds`` times with
``--batch`` and once live (``--record all``). Per trial it prints the CPU (every thread of
this process) and wall time of the batch phase's two per-trial stages: capturing each
request as the live call would send it (LiteLLM's ``acompletion`` answered at the HTTP
boundary, :mod:`toolbench.runner.batch.first_request`, at the phase's capture width) and
writing each answer into its trial's cassette (:mod:`toolbench.runner.batch.answer_cassette`),
then the whole command's, batch and live. The best round of each is shown (the least CPU).

Run: ``python benchmarks/bench_batch_phase.py [--trials 400] [--rounds 3] [--width N]
[--dir DIR]`` (``--width``: requests captured at once, by default the phase's; ``--dir``:
where the runs write, by default the repository's ``runs/``: the system's ``/tmp`` costs
more system CPU per file created); ``--tiny``: 8 trials, one round.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_concurrency import CALL, SCENARIO  # noqa: E402  (the same matrix)

MODEL = "openai/gpt-4o-mini"


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


@dataclass
class Stage:
    """CPU and wall seconds spent in one stage of the phase, summed over its calls."""

    cpu: float = 0.0
    wall: float = 0.0


@dataclass
class Round:
    capture: Stage = field(default_factory=Stage)
    write: Stage = field(default_factory=Stage)
    whole: Stage = field(default_factory=Stage)
    ok: int = 0


def _timed(stage_of: Callable[[], Stage], fn: Any) -> Any:
    """``fn`` (an async method) with its CPU and wall time added to the current stage."""

    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        c0, t0 = _cpu(), time.perf_counter()
        try:
            return await fn(*args, **kwargs)
        finally:
            stage = stage_of()
            stage.cpu += _cpu() - c0
            stage.wall += time.perf_counter() - t0

    return wrapper


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=ROOT / "runs")
    ap.add_argument("--width", type=int, default=None, help="requests captured at once")
    ap.add_argument("--tiny", action="store_true", help="8 trials, one round")
    args = ap.parse_args()
    if args.tiny:
        args.trials, args.rounds = 8, 1
    os.environ.setdefault("OPENAI_API_KEY", "bench-key-not-secret")

    from tests.support.fake_batch import FakeBatchServer

    from toolbench.cli.app import run_cli
    from toolbench.runner.batch import batch_wait, phase
    from toolbench.store import load_results

    batch_wait.POLL_S = 0.05  # the fake ends a batch at its first ask: no real wait
    if args.width is not None:
        phase.CAPTURE_WIDTH = args.width
    current = Round()
    # The phase's two per-trial stages: all requests captured (one gather), all answers
    # written (one batch here, so one call).
    phase._Phase._groups = _timed(lambda: current.capture, phase._Phase._groups)  # type: ignore[method-assign]
    phase._Phase._take = _timed(lambda: current.write, phase._Phase._take)  # type: ignore[method-assign]

    args.dir.mkdir(parents=True, exist_ok=True)
    n = args.trials
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp, FakeBatchServer(lambda _b: CALL) as s:
        scen = Path(tmp) / "bench.yaml"
        scen.write_text(SCENARIO, encoding="utf-8")

        def run(name: str, *extra: str, samples: int = n) -> Round:
            nonlocal current
            current = Round()
            c0, t0 = _cpu(), time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):  # the run's summary table
                run_cli(["run", "--models", MODEL, "--formats", "prompt-json", "--scenarios",
                         str(scen), "--samples", str(samples), "--api-base", s.base_url,
                         "--out", f"{tmp}/{name}", "--cassettes", f"{tmp}/cas-{name}",
                         "--quiet", "--no-report", *extra])  # fmt: skip
            current.whole = Stage(_cpu() - c0, time.perf_counter() - t0)
            current.ok = sum(r.status == "ok" for r in load_results(Path(f"{tmp}/{name}")))
            return current

        run("warm", "--batch", samples=2)  # imports LiteLLM, fills its caches
        batch = min((run(f"b{i}", "--batch") for i in range(args.rounds)),
                    key=lambda r: r.whole.cpu)  # fmt: skip
        live = run("live", "--record", "all")

    def ms(seconds: float) -> str:
        return f"{1000 * seconds / n:6.2f}"

    print(f"trials                : {n} ({MODEL}, prompt-json), best of {args.rounds} rounds")
    print(f"capture width         : {phase.CAPTURE_WIDTH}")
    print(f"batch: capture        : {ms(batch.capture.cpu)} ms CPU a trial, "
          f"{ms(batch.capture.wall)} ms wall a trial")  # fmt: skip
    print(f"batch: write answers  : {ms(batch.write.cpu)} ms CPU a trial, "
          f"{ms(batch.write.wall)} ms wall a trial")  # fmt: skip
    print(f"batch: whole command  : {ms(batch.whole.cpu)} ms CPU a trial, "
          f"{batch.whole.wall:.2f} s wall, {batch.ok}/{n} ok")  # fmt: skip
    print(f"live:  whole command  : {ms(live.whole.cpu)} ms CPU a trial, "
          f"{live.whole.wall:.2f} s wall, {live.ok}/{n} ok")  # fmt: skip
    print(f"load average          : {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
