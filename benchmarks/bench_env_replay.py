"""Environment replay against scripted replay: CPU a trial of the same conversation.

Issue 36 asks that a replayed trial whose tool calls run in an environment cost at most
twice the CPU of a replayed scripted multi-turn trial with the same number of turns. Two
scenarios here are the same conversation: the user asks for a task to be added and
checked off, the model calls ``add_task``, then ``complete_task``, then answers (three
exchanges, two calls). One gets its results by running the calls in the built-in
``todo`` environment (a loop: ``environment`` + ``expect.turns``, scored by the loop
scorer, which also runs the ground truth in a fresh environment); the other gets the same
results from its script (``expect.rounds``). Both are recorded once against the fake
OpenAI server (``--samples`` gives the trials, each sample its own cassette) and then
replayed offline, each kind in its own warm process (round after round, after one round
that warms it; the kinds' processes alternated), CPU (user + system of this process) a
trial, the least and the median round. ``bench_mcp_start.py`` replays its kinds with the
same functions (:func:`record_kinds`, :func:`replay_kinds`).

Run from the repository root: ``python benchmarks/bench_env_replay.py [ROUNDS]``
(default 5 rounds of 200 trials a kind); ``--tiny`` (checks it still runs; the figures
mean nothing): one round of 4 trials, one process a kind.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TOOLS = """\
    tools:
      - name: add_task
        parameters: {type: object, properties: {title: {type: string}}, required: [title]}
      - name: complete_task
        parameters: {type: object, properties: {id: {type: integer}}, required: [id]}
    messages:
      - {role: user, content: "Add milk to my list, then mark it done."}
"""

SCENARIOS = {
    "environment": f"""\
scenarios:
  - id: env-loop
{TOOLS}\
    environment: {{name: todo, state: {{tasks: []}}}}
    expect:
      max_turns: 3
      turns:
        - calls:
            - {{name: add_task, arguments: {{title: milk}}}}
            - {{name: complete_task, arguments: {{id: 1}}}}
""",
    "scripted": f"""\
scenarios:
  - id: scripted-rounds
{TOOLS}\
    expect:
      max_turns: 3
      rounds:
        - calls: [{{name: add_task, arguments: {{title: milk}}, result: {{id: 1}}}}]
        - calls: [{{name: complete_task, arguments: {{id: 1}}, result: {{id: 1, done: true}}}}]
""",
}

REPLIES = {
    '"done"': "Done: milk is on your list and checked off.",
    '"id"': '{"tool": "complete_task", "arguments": {"id": 1}}',
    "Add milk": '{"tool": "add_task", "arguments": {"title": "milk"}}',
}
"""The fake model's reply by the last message (a tool result, or the user's request)."""


def run_options(tmp: Path, kind: str, out: str, samples: int, record: str) -> list[str]:
    """``toolbench run`` of ``tmp/<kind>.yaml`` against the fake server whose URL is in
    ``tmp/api_base``, cassettes in ``tmp/cas``, into ``tmp/<out>``."""
    return [
        "run", "--models", "openai/fake", "--formats", "prompt-json",
        "--scenarios", str(tmp / f"{kind}.yaml"), "--samples", str(samples),
        "--api-base", (tmp / "api_base").read_text(), "--cassettes", str(tmp / "cas"),
        "--out", str(tmp / out), "--quiet", "--no-report", "--record", record,
    ]  # fmt: skip


def record_kinds(
    tmp: Path, scenarios: dict[str, str], replies: dict[str, str], samples: int,
    turns: int | None = None,
) -> None:  # fmt: skip
    """Each kind's cassettes, from the fake server answering by ``replies``; every trial
    must pass (and take ``turns`` exchanges, when given)."""
    from toolbench.cli.app import run_cli
    from toolbench.providers.fake import FakeServer, by_last_user
    from toolbench.store import load_results

    with FakeServer(by_last_user(replies)) as fake:
        (tmp / "api_base").write_text(fake.base_url)
        for kind, text in scenarios.items():
            (tmp / f"{kind}.yaml").write_text(text)
            with contextlib.redirect_stdout(io.StringIO()):
                rc = run_cli(run_options(tmp, kind, f"rec-{kind}", samples, "new"))
            if rc != 0:
                raise SystemExit(f"recording {kind} failed")
            results = load_results(tmp / f"rec-{kind}")
            passed = [r for r in results if r.scores and r.scores.get("call_accuracy")]
            took = {len(r.turns) for r in results}
            if len(passed) != samples or (turns is not None and took != {turns}):
                raise SystemExit(f"{kind}: {len(passed)} of {samples} passed, turns {took}")


def one_kind(tmp: Path, kind: str, samples: int, rounds: int) -> list[float]:
    """CPU ms a trial of ``kind``'s replay (planned, then timed: run, score, store),
    ``rounds`` times in this process (after one round that warms it)."""
    from toolbench.runner.options import RunOptions
    from toolbench.runner.run import execute_run, plan_run
    from toolbench.store import load_results

    out: list[float] = []
    for i in range(rounds + 1):
        cfg = RunOptions(
            record="none", out=tmp / f"{kind}-{os.getpid()}-{i}", samples=samples,
            scenarios=[str(tmp / f"{kind}.yaml")], models=["openai/fake"],
            formats=["prompt-json"], cassette_dir=tmp / "cas",
            api_base=(tmp / "api_base").read_text(),
        )  # fmt: skip
        plan = plan_run(cfg)
        t0 = time.process_time()
        execute_run(plan, lambda _r: None)
        if i:  # the first round warms the process
            out.append(1000 * (time.process_time() - t0) / len(plan.specs))
        assert cfg.out is not None
        ok = [r for r in load_results(cfg.out) if r.status == "ok"]
        if len(ok) != samples:
            raise SystemExit(f"replaying {kind}: {len(ok)} of {samples} trials ok")
    return out


def replay_kinds(
    tmp: Path, kinds: list[str], samples: int, rounds: int, processes: int, cwd: Path
) -> dict[str, list[float]]:
    """Each kind's replay rounds (:func:`one_kind`) in a warm process of its own, the
    kinds' processes alternated ``processes`` times; CPU ms a trial, by kind."""
    per: dict[str, list[float]] = {kind: [] for kind in kinds}
    for _ in range(processes):
        for kind in kinds:
            done = subprocess.run(
                [sys.executable, __file__, "--one", str(tmp), kind, str(samples), str(rounds)],
                check=True, cwd=cwd, stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            per[kind] += [float(x) for x in done.stdout.split()]
    return per


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("rounds", nargs="?", type=int, default=5)
    ap.add_argument("--tiny", action="store_true", help="one round of 4 trials")
    opts = ap.parse_args()
    rounds, samples, processes = (1, 4, 1) if opts.tiny else (opts.rounds, 200, 2)
    os.environ.setdefault("OPENAI_API_KEY", "bench-key-not-secret-0000")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        record_kinds(tmp, SCENARIOS, REPLIES, samples, turns=3)
        per = replay_kinds(tmp, list(SCENARIOS), samples, rounds, processes, ROOT)
    print(f"trials a round       : {samples} a kind, 3 exchanges and 2 calls each (prompt-json)")
    for how, pick in (("least", min), ("median", statistics.median)):
        env, scripted = pick(per["environment"]), pick(per["scripted"])
        print(
            f"{how:6} of {len(per['scripted']):2} rounds : environment {env:.2f} ms, scripted "
            f"{scripted:.2f} ms CPU a trial: {env / scripted:.2f}x (aim <= 2)"
        )
    print(f"load average         : {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:  # one kind's rounds, in a process of its own
        tmp, kind, samples, rounds = sys.argv[2:6]
        print(*(f"{x:.4f}" for x in one_kind(Path(tmp), kind, int(samples), int(rounds))))
    else:
        main()
