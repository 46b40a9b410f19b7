"""An MCP server's start per trial against a pooled server, and a replayed MCP trial
beside a todo-environment one.

Issue 36: starting an MCP server per trial is measured and reported (and pooled where
state allows), and a replayed MCP trial starts no process. All parts use the
``inventory`` server shipped with toolbench (``toolbench.environments.demo_mcp_server``,
stdio) with a ``reset`` tool added (its stock back to the start), its process id
written to a file so the servers started are counted:

- **start**: what a trial that runs the server live pays for it, through toolbench's own
  client (:class:`~toolbench.environments.mcp_client.McpClient`): start (the process,
  ``initialize``, ``tools/list``), one ``tools/call``, stop; wall time of each, the CPU of
  this process (the client's thread and event loop) and the server's own CPU (its
  process, reaped), the least and the median of the cycles.
- **pooled**: the same trial on a pooled server (:class:`~toolbench.environments.mcp_pool.Pool`,
  started once before the cycles): taken (``tools/list`` and ``reset``), one
  ``tools/call``, given back.
- **live runs**: ``toolbench run --record all`` of one MCP scenario (one call, two
  exchanges, against the fake OpenAI server, ``--concurrency 2``), the server started
  per trial and then pooled (``pool = true``, ``reset = "reset"``): wall time of the
  whole command a trial, servers started.
- **replay**: one conversation recorded against the fake OpenAI server twice, once with
  its tool run by the MCP server (no ``tools`` in the scenario: the server's
  ``tools/list``) and once in the built-in ``todo`` environment (two exchanges, one call,
  ``prompt-json``, ``expect.rounds`` both); then each replayed offline (``--record
  none``) in a warm process of its own, CPU (user + system of the process) a trial
  (with ``bench_env_replay.py``'s functions). The replays must start no server.

Run from the repository root: ``python benchmarks/bench_mcp_start.py [ROUNDS]`` (default
20 start and pooled cycles, live runs of 20 trials, 5 replay rounds of 40 trials a kind);
``--tiny`` (checks it still runs; the figures mean nothing): 2 cycles, live runs of 2
trials, one round of 2 trials.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_env_replay import record_kinds, replay_kinds, run_options

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


SERVER_CODE = """\
import os
open({pids!r}, "a").write(f"{{os.getpid()}}\\n")
from toolbench.environments import demo_mcp_server as demo

@demo.server.tool()
def reset() -> str:
    \"\"\"Put the stock back as it was at the start.\"\"\"
    demo.stock.clear()
    demo.stock.update(demo.START_STOCK)
    return "reset"

demo.main()
"""
"""The shipped server with a ``reset`` tool, its process id appended to a file first."""


def _server_command(pids: Path) -> list[str]:
    return [sys.executable, "-c", SERVER_CODE.format(pids=str(pids))]


def _started(pids: Path) -> int:
    return len(pids.read_text().split()) if pids.is_file() else 0


def _reaped_cpu() -> float:
    """CPU seconds of the child processes reaped so far (a stopped server's)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _running_cpu(pids: Path) -> Callable[[], float]:
    """CPU seconds the servers in ``pids`` have used so far, read from /proc while they
    run (a pooled server is not reaped during the cycles)."""
    tick = os.sysconf("SC_CLK_TCK")

    def used() -> float:
        total = 0
        for pid in pids.read_text().split():
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / tick

    return used


def _timed(
    keys: tuple[str, ...], steps: Callable[[], list[float]], cycles: int,
    server_cpu: Callable[[], float] = _reaped_cpu,
) -> dict[str, list[float]]:  # fmt: skip
    """``cycles`` runs of ``steps`` (the perf_counter after each step, starting with the
    one before): ms of wall time a step and of this process's CPU and the server's."""
    out: dict[str, list[float]] = {k: [] for k in (*keys, "cpu", "server")}
    for _ in range(cycles):
        s0, c0 = server_cpu(), time.process_time()
        marks = steps()
        c1, s1 = time.process_time(), server_cpu()
        for key, t0, t1 in zip(keys, marks, marks[1:], strict=False):
            out[key].append(1000 * (t1 - t0))
        out["cpu"].append(1000 * (c1 - c0))
        out["server"].append(1000 * (s1 - s0))
    return out


def _check(result: object) -> None:
    if "wrench" not in json.dumps(result):
        raise SystemExit(f"the server answered {result!r}")


def start_cycles(cycles: int, pids: Path) -> dict[str, list[float]]:
    """Per cycle: ms of wall time to start, call, stop; CPU ms of this process and of the
    server."""
    from toolbench.environments.mcp_client import McpClient
    from toolbench.environments.mcp_config import McpServer

    server = McpServer(command=_server_command(pids))

    def cycle() -> list[float]:
        client = McpClient("inventory", server, lambda _x: None)
        t0 = time.perf_counter()
        client.start()
        t1 = time.perf_counter()
        _check(client.call("add_item", {"name": "wrench", "quantity": 5}))
        t2 = time.perf_counter()
        client.close()
        if client.alive:
            raise SystemExit("the server did not stop")
        return [t0, t1, t2, time.perf_counter()]

    return _timed(("start", "call", "stop"), cycle, cycles)


def pooled_cycles(cycles: int, pids: Path) -> dict[str, list[float]]:
    """Per cycle on a pooled server (started before the first): ms of wall time to take it
    (``tools/list``, ``reset``), call, give it back; CPU ms of this process, and the
    server's (read while it runs) over all the cycles, a cycle."""
    from toolbench.environments.mcp_config import McpServer
    from toolbench.environments.mcp_pool import Pool

    server = McpServer(command=_server_command(pids), pool=True, reset="reset")
    pool = Pool("inventory", server)
    pool.give_back(pool.take(lambda _x: None, lambda c: c.call("reset", {})))
    before = _started(pids)

    def cycle() -> list[float]:
        t0 = time.perf_counter()
        client = pool.take(lambda _x: None, lambda c: c.call("reset", {}))
        t1 = time.perf_counter()
        _check(client.call("add_item", {"name": "wrench", "quantity": 5}))
        t2 = time.perf_counter()
        pool.give_back(client)
        return [t0, t1, t2, time.perf_counter()]

    server_cpu = _running_cpu(pids)
    try:
        s0 = server_cpu()
        out = _timed(("take", "call", "give"), cycle, cycles, server_cpu)
        # /proc counts in clock ticks (10 ms), more than a cycle takes: the mean of all
        out["server"] = [1000 * (server_cpu() - s0) / cycles] * cycles
    finally:
        pool.close()
    if _started(pids) != before:
        raise SystemExit("a pooled cycle started a server")
    return out


def live_run(tmp: Path, pooled: bool, samples: int) -> tuple[float, int]:
    """``toolbench run --record all`` of the MCP scenario, ``samples`` trials: wall
    seconds of the whole command, servers started."""
    from toolbench.cli.app import run_cli
    from toolbench.providers.fake import FakeServer, by_last_user
    from toolbench.store import load_results

    tmp.mkdir()
    os.chdir(tmp)  # the run reads ./toolbench.toml, as a user's does
    pids = tmp / "pids"
    table = f"[mcp.inventory]\ncommand = {json.dumps(_server_command(pids))}\n"
    (tmp / "toolbench.toml").write_text(table + ('pool = true\nreset = "reset"\n' * pooled))
    (tmp / "mcp.yaml").write_text(SCENARIOS["mcp"])
    with FakeServer(by_last_user(REPLIES)) as fake:
        (tmp / "api_base").write_text(fake.base_url)
        argv = [*run_options(tmp, "mcp", "out", samples, "all"), "--concurrency", "2"]
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            rc = run_cli(argv)
        took = time.perf_counter() - t0
    ok = [r for r in load_results(tmp / "out") if r.scores and r.scores.get("call_accuracy")]
    if rc != 0 or len(ok) != samples:
        raise SystemExit(f"live run (pooled {pooled}): {len(ok)} of {samples} passed")
    return took, _started(pids)


def _cycle_lines(title: str, cycle: dict[str, list[float]], keys: tuple[str, str, str]) -> None:
    a, b, c = keys
    for how, pick in (("least", min), ("median", statistics.median)):
        v = {k: pick(x) for k, x in cycle.items()}
        print(
            f"{how:6} {title:13}: {a} {_ms(v[a])} ms, call {v[b]:.1f} ms, {c} {_ms(v[c])} ms "
            f"wall; CPU {_ms(v['cpu'])} ms toolbench, {_ms(v['server'])} ms server"
        )


def _ms(value: float) -> str:
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("rounds", nargs="?", type=int, default=5)
    ap.add_argument("--tiny", action="store_true", help="2 cycles, runs of 2 trials")
    opts = ap.parse_args()
    cycles, rounds, samples, live = (2, 1, 2, 2) if opts.tiny else (20, opts.rounds, 40, 20)
    os.environ.setdefault("OPENAI_API_KEY", "bench-key-not-secret-0000")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        cycle = start_cycles(cycles, tmp / "cycle-pids")
        print(f"start cycles         : {cycles} (start, one tools/call, stop; stdio)")
        _cycle_lines("a cycle", cycle, ("start", "call", "stop"))
        pooled = pooled_cycles(cycles, tmp / "pool-pids")
        print(f"pooled cycles        : {cycles} (take: tools/list + reset, one tools/call, give)")
        _cycle_lines("pooled", pooled, ("take", "call", "give"))
        for name, is_pooled in (("fresh", False), ("pooled", True)):
            took, servers = live_run(tmp / f"live-{name}", is_pooled, live)
            print(
                f"live run, {name:6}     : {live} trials, {servers} servers started, "
                f"{took:.2f} s wall ({1000 * took / live:.0f} ms a trial, --concurrency 2)"
            )
        os.chdir(tmp)  # the replays read ./toolbench.toml, as a user's do
        pids = tmp / "pids"
        command = json.dumps(_server_command(pids))
        (tmp / "toolbench.toml").write_text(f"[mcp.inventory]\ncommand = {command}\n")
        record_kinds(tmp, SCENARIOS, REPLIES, samples)
        recorded = _started(pids)
        per = replay_kinds(tmp, list(SCENARIOS), samples, rounds, 1, tmp)
        replayed = _started(pids) - recorded
    print(f"servers started      : {recorded} recording {samples} MCP trials, {replayed} replaying")
    for how, pick in (("least", min), ("median", statistics.median)):
        mcp, todo = pick(per["mcp"]), pick(per["todo"])
        print(
            f"{how:6} of {len(per['mcp']):2} rounds : MCP {mcp:.2f} ms, todo {todo:.2f} ms CPU a "
            f"replayed trial ({samples} a round): {mcp / todo:.2f}x"
        )
    print(f"load average         : {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
