"""Replay CPU with the one cassette format (issue 21's speed figures), measured in one run:

* the replay of the 1,000 ``bfcl-smoke`` trials as a whole command (``toolbench run
  --record none``, a fresh process: start-up, imports and the report summary included),
  its CPU (user + system) beside the decode-and-parse floor of the same cassettes (read
  and decode each JSON cassette, parse each reply with its format; no HTTP, no LiteLLM);
* streamed against plain replay, CPU per trial, on the scenarios whose streamed cassettes
  are committed (both local models, the five default formats): each measured as the
  difference between a run of every such scenario and a run of one, so start-up cancels
  (the four commands alternated, round by round), and again in warm processes, each
  running one kind round after round (the steadier figure: nothing to subtract), the
  kinds' processes alternated; the least and the median round of each.

The whole commands run as an installed toolbench runs: its modules byte-compiled first,
as pip compiles them when it installs the package (in a checkout with
``PYTHONDONTWRITEBYTECODE`` set, every command would otherwise compile toolbench's ~190
modules from source again: 0.2-0.3 s of CPU, measured, that no installed copy pays).

Each figure is the least of ``ROUNDS`` runs (default 3). Run from the repository root:
``python benchmarks/bench_replay_cpu.py [ROUNDS]``. ``--tiny`` (checks it still runs; the
figures mean nothing): one round, ``bfcl-smoke`` with one model and one format, two
streamed scenarios against one, one warm process a kind.
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from toolbench.formats.format_registry import get_format

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_replay import _replies

ROOT = Path(__file__).resolve().parents[1]
MODELS = "local/smollm2-135m,local/gemma3-270m"
BFCL_FORMATS = "prompt-json,prompt-json:shots=2,react,xml,native"
STREAMED = sorted(p.stem for p in (ROOT / "cassettes/local_smollm2-135m/xml_stream").glob("*.json"))


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def command_cpu(*args: str) -> float:
    """CPU seconds of one ``toolbench run --record none`` in a fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        before = _children_cpu()
        done = subprocess.run(
            [sys.executable, "-m", "toolbench", "run", "--record", "none", "--quiet",
             "--no-report", "--out", str(Path(tmp) / "r"), *args],
            check=False, cwd=ROOT, stdout=subprocess.DEVNULL,
        ).returncode  # fmt: skip
        if done not in (0, 3):  # 3: a cell measured nothing (the run itself went through)
            raise SystemExit(f"toolbench run {' '.join(args)} exited {done}")
        return _children_cpu() - before


def byte_compile() -> None:
    """Compile toolbench's modules to bytecode, as installing the package does."""
    import toolbench

    compileall.compile_dir(Path(toolbench.__file__).parent, quiet=1)


def floor_cpu(models: str = MODELS, formats: str = BFCL_FORMATS) -> tuple[int, float]:
    """Decode every ``bfcl-smoke`` cassette and parse every reply (CPU seconds)."""
    from toolbench.runner.options import RunOptions
    from toolbench.runner.run import plan_run

    with tempfile.TemporaryDirectory() as tmp:
        cfg = RunOptions(
            record="none", out=Path(tmp) / "p", scenarios=["bfcl-smoke"],
            models=models.split(","), formats=formats.split(","),
        )  # fmt: skip
        plan = plan_run(cfg)
        if plan.lock is not None:
            plan.lock.release()
        t0 = time.process_time()
        n = 0
        for spec in plan.specs:
            fmt = get_format(spec.fmt.spec)
            for reply in _replies(spec.cassette):
                fmt.parse_reply(reply, spec.scenario.tools)
            n += 1
        return n, time.process_time() - t0


def one_kind(stream: str, rounds: int, scenarios: list[str]) -> list[float]:
    """CPU ms a trial of the streamed-scenario matrix, replayed ``rounds`` times in this
    process with one stream mode (after one round that warms it)."""
    from toolbench.runner.options import RunOptions
    from toolbench.runner.run import execute_run, plan_run

    out: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(rounds + 1):
            cfg = RunOptions(
                record="none", out=Path(tmp) / f"{stream}{i}",
                scenarios=scenarios, models=MODELS.split(","), stream=stream,
            )  # fmt: skip
            plan = plan_run(cfg)
            t0 = time.process_time()
            execute_run(plan, lambda _r: None)
            if i:  # the first round warms the process
                out.append(1000 * (time.process_time() - t0) / len(plan.specs))
    return out


def in_process(rounds: int, scenarios: list[str], processes: int = 2) -> dict[str, list[float]]:
    """CPU ms a trial, plain and streamed, each kind in its own warm process (``rounds``
    rounds a process, two processes a kind, the kinds alternated). One process running
    both kinds in turn measured its streamed rounds up to a quarter slower than a process
    running streamed rounds alone, and than the same code as whole commands."""
    per: dict[str, list[float]] = {"off": [], "on": []}
    for _ in range(processes):
        for stream in ("off", "on"):
            done = subprocess.run(
                [sys.executable, __file__, "--one", stream, str(rounds), ",".join(scenarios)],
                check=True, cwd=ROOT, stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            per[stream] += [float(x) for x in done.stdout.split()]
    return per


def best(rounds: int, *args: str) -> float:
    """The least CPU of ``rounds`` runs of one command (the machine is shared: the least
    is the one least disturbed)."""
    return min(command_cpu(*args) for _ in range(rounds))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("rounds", nargs="?", type=int, default=3)
    ap.add_argument("--tiny", action="store_true", help="one round of a small matrix")
    opts = ap.parse_args()
    rounds = 1 if opts.tiny else opts.rounds
    models, formats = (MODELS.split(",")[0], "prompt-json") if opts.tiny else (MODELS, BFCL_FORMATS)
    stream_set = STREAMED[:2] if opts.tiny else STREAMED
    byte_compile()
    bfcl = ("--scenarios", "bfcl-smoke", "--models", models, "--formats", formats)
    whole = best(rounds, *bfcl)
    n, floor = min(floor_cpu(models, formats) for _ in range(rounds))
    print(f"bfcl-smoke replay, whole command : {whole:.2f} s CPU for {n:,} trials (aim <= 2 s "
          "for 1,000)")  # fmt: skip
    print(f"decode-and-parse floor (JSON)    : {floor:.2f} s CPU for {n} trials")
    print(f"floor / whole command            : {floor / whole:.2f}")
    one = stream_set[:1]
    trials = len(stream_set) * 2 * 5
    commands = {
        (label, size): ("--scenarios", ",".join(scenarios), *extra)
        for label, extra in (("plain", ()), ("streamed", ("--stream", "on")))
        for size, scenarios in (("big", stream_set), ("small", one))
    }
    # The four commands alternated round by round (the machine's speed drifts over
    # minutes: run one after the other, a slow spell fell on one kind only).
    least = dict.fromkeys(commands, float("inf"))
    for _ in range(rounds):
        for key, args in commands.items():
            least[key] = min(least[key], command_cpu(*args))
    per: dict[str, float] = {}
    for label in ("plain", "streamed"):
        big, small = least[(label, "big")], least[(label, "small")]
        per[label] = (big - small) / (trials - 10)
        print(f"{label:8} replay             : {1000 * per[label]:.2f} ms CPU a trial "
              f"({big:.2f} s for {trials} trials, {small:.2f} s for 10)")  # fmt: skip
    if per["plain"] > 0:  # at --tiny's size the difference can vanish in the noise
        print(f"streamed / plain                 : {per['streamed'] / per['plain']:.2f} (aim <= 2)")
    warm = in_process(rounds, stream_set, 1 if opts.tiny else 2)
    for how, pick in (("least", min), ("median", statistics.median)):
        plain, streamed = pick(warm["off"]), pick(warm["on"])
        print(f"warm processes, {how:6} of {len(warm['on'])} : plain {plain:.2f} ms, streamed "
              f"{streamed:.2f} ms a trial: {streamed / plain:.2f} (aim <= 2)")  # fmt: skip
    print(f"load average                     : {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:  # one kind's rounds, for in_process
        print(
            *(f"{x:.4f}" for x in one_kind(sys.argv[2], int(sys.argv[3]), sys.argv[4].split(",")))
        )
    else:
        main()
