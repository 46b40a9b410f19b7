"""An MCP server's start per trial, and a replayed MCP trial beside a todo-environment one.

Issue 36: starting an MCP server per trial is measured and reported, and a replayed MCP
trial starts no process. Two parts, both with the ``inventory`` server shipped with
toolbench (``toolbench.environments.demo_mcp_server``, stdio):

- **start**: what a trial that runs the server live pays for it, through toolbench's own
  client (:class:`~toolbench.environments.mcp_client.McpClient`): start (the process,
  ``initialize``, ``tools/list``), one ``tools/call``, stop; wall time of each, the CPU of
  this process (the client's thread and event loop) and the server's own CPU (its
  process, reaped), the least and the median of the cycles.
- **replay**: one conversation recorded against the fake OpenAI server twice, once with
  its tool run by the MCP server (no ``tools`` in the scenario: the server's
  ``tools/list``) and once in the built-in ``todo`` environment (two exchanges, one call,
  ``prompt-json``, ``expect.rounds`` both); then each replayed offline (``--record
  none``) in a warm process of its own, CPU (user + system of the process) a trial. The
  server's command writes its process id to a file: the replays must start none.

Run from the repository root: ``python benchmarks/bench_mcp_start.py [ROUNDS]`` (default
20 start cycles, 5 replay rounds of 40 trials a kind); ``--tiny`` (checks it still runs;
the figures mean nothing): 2 cycles, one round of 2 trials.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULE = "toolbench.environments.demo_mcp_server"

SCENARIOS = {
    "mcp": """\
scenarios:
  - id: mcp-add
    messages:
      - {role: user, content: "Add 5 wrenches to the inventory."}
    environment: {name: inventory}
    expect:
      max_turns: 2
      rounds:
        - calls: [{name: add_item, arguments: {name: wrench, quantity: 5}}]
""",
    "todo": """\
scenarios:
  - id: todo-add
    tools:
      - name: add_task
        parameters: {type: object, properties: {title: {type: string}}, required: [title]}
    messages:
      - {role: user, content: "Add milk to my list."}
    environment: {name: todo, state: {tasks: []}}
    expect:
      max_turns: 2
      rounds:
        - calls: [{name: add_task, arguments: {title: milk}}]
""",
}

REPLIES = {
    '"wrench"': "Done: 5 wrenches are in stock.",
    '"id"': "Done: milk is on your list.",
    "Add 5 wrenches": '{"tool": "add_item", "arguments": {"name": "wrench", "quantity": 5}}',
    "Add milk": '{"tool": "add_task", "arguments": {"title": "milk"}}',
}
"""The fake model's reply by the last message (a tool result, or the user's request)."""


def _server_command(pids: Path) -> list[str]:
    """The shipped server, its process id appended to ``pids`` first."""
    code = (
        f"import os, runpy; open({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n'); "
        f"runpy.run_module({MODULE!r}, run_name='__main__')"
    )
    return [sys.executable, "-c", code]


def start_cycles(cycles: int) -> dict[str, list[float]]:
    """Per cycle: ms of wall time to start, call, stop; CPU ms of this process and of the
    server."""
    from toolbench.environments.mcp_client import McpClient
    from toolbench.environments.mcp_config import McpServer

    server = McpServer(command=[sys.executable, "-m", MODULE])
    out: dict[str, list[float]] = {k: [] for k in ("start", "call", "stop", "cpu", "server")}
    for _ in range(cycles):
        kept: list[object] = []
        client = McpClient("inventory", server, kept.append)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        c0, t0 = time.process_time(), time.perf_counter()
        client.start()
        t1 = time.perf_counter()
        result = client.call("add_item", {"name": "wrench", "quantity": 5})
        t2 = time.perf_counter()
        client.close()
        t3, c1 = time.perf_counter(), time.process_time()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if "wrench" not in json.dumps(result) or client.alive:
            raise SystemExit(f"the server answered {result!r}")
        server_cpu = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
        for key, value in (("start", t1 - t0), ("call", t2 - t1), ("stop", t3 - t2),
                           ("cpu", c1 - c0), ("server", server_cpu)):  # fmt: skip
            out[key].append(1000 * value)
    return out


def _options(tmp: Path, kind: str, out: str, samples: int) -> list[str]:
    return [
        "run", "--models", "openai/fake", "--formats", "prompt-json",
        "--scenarios", str(tmp / f"{kind}.yaml"), "--samples", str(samples),
        "--api-base", (tmp / "api_base").read_text(), "--cassettes", str(tmp / "cas"),
        "--out", str(tmp / out), "--quiet", "--no-report", "--record", "new",
    ]  # fmt: skip


def record(tmp: Path, samples: int) -> None:
    """Both scenarios' cassettes, from the fake server; every trial must pass."""
    from toolbench.cli.app import run_cli
    from toolbench.providers.fake import FakeServer, by_last_user
    from toolbench.store import load_results

    command = json.dumps(_server_command(tmp / "pids"))
    (tmp / "toolbench.toml").write_text(f"[mcp.inventory]\ncommand = {command}\n")
    with FakeServer(by_last_user(REPLIES)) as fake:
        (tmp / "api_base").write_text(fake.base_url)
        for kind, text in SCENARIOS.items():
            (tmp / f"{kind}.yaml").write_text(text)
            with contextlib.redirect_stdout(io.StringIO()):
                rc = run_cli(_options(tmp, kind, f"rec-{kind}", samples))
            if rc != 0:
                raise SystemExit(f"recording {kind} failed")
            results = load_results(tmp / f"rec-{kind}")
            passed = [r for r in results if r.scores and r.scores.get("call_accuracy")]
            if len(passed) != samples:
                raise SystemExit(f"{kind}: {len(passed)} of {samples} passed")


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


def _started(tmp: Path) -> int:
    pids = tmp / "pids"
    return len(pids.read_text().split()) if pids.is_file() else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("rounds", nargs="?", type=int, default=5)
    ap.add_argument("--tiny", action="store_true", help="2 cycles, one round of 2 trials")
    opts = ap.parse_args()
    cycles, rounds, samples = (2, 1, 2) if opts.tiny else (20, opts.rounds, 40)
    os.environ.setdefault("OPENAI_API_KEY", "bench-key-not-secret-0000")
    cycle = start_cycles(cycles)
    print(f"start cycles         : {cycles} (start, one tools/call, stop; stdio)")
    for how, pick in (("least", min), ("median", statistics.median)):
        c = {k: pick(v) for k, v in cycle.items()}
        print(
            f"{how:6} a cycle       : start {c['start']:.0f} ms, call {c['call']:.1f} ms, stop "
            f"{c['stop']:.0f} ms wall; CPU {c['cpu']:.0f} ms toolbench, {c['server']:.0f} ms server"
        )
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        os.chdir(tmp)  # the runs read ./toolbench.toml, as a user's do
        record(tmp, samples)
        recorded = _started(tmp)
        per: dict[str, list[float]] = {}
        for kind in SCENARIOS:
            done = subprocess.run(
                [sys.executable, __file__, "--one", str(tmp), kind, str(samples), str(rounds)],
                check=True, cwd=tmp, stdout=subprocess.PIPE, text=True,
            )  # fmt: skip
            per[kind] = [float(x) for x in done.stdout.split()]
        replayed = _started(tmp) - recorded
    print(f"servers started      : {recorded} recording {samples} MCP trials, {replayed} replaying")
    for how, pick in (("least", min), ("median", statistics.median)):
        mcp, todo = pick(per["mcp"]), pick(per["todo"])
        print(
            f"{how:6} of {len(per['mcp']):2} rounds : MCP {mcp:.2f} ms, todo {todo:.2f} ms CPU a "
            f"replayed trial ({samples} a round): {mcp / todo:.2f}x"
        )
    print(f"load average         : {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:  # one kind's rounds, in a process of its own
        tmp, kind, samples, rounds = sys.argv[2:6]
        print(*(f"{x:.4f}" for x in one_kind(Path(tmp), kind, int(samples), int(rounds))))
    else:
        main()
