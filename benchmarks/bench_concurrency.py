"""Live concurrency: 400 trials at concurrency 16 against a local fake OpenAI-compatible
server that answers after 100 ms. Prints achieved throughput as a fraction of the ideal
16 / 0.1 s = 160 trials/s (aim: at least 0.9), and the latency toolbench recorded for a
server that takes 100 ms (the provider's time, request written to last byte: it should
read close to 0.1 s however busy the harness is), next to each trial's harness time.

The full path is measured: LiteLLM, real HTTP on 127.0.0.1, cassette recording per trial,
parsing, scoring and the flushed results file. LiteLLM's import happens before the clock.
Run: ``python benchmarks/bench_concurrency.py [--trials 400] [--concurrency 16]``;
``--tiny``: 8 trials at concurrency 4 (checks it still runs; the figures mean nothing).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


SCENARIO = """\
id: bench
tools:
  - name: get_weather
    description: Get the weather for a city.
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
messages:
  - {role: user, content: "Weather in Paris?"}
expect:
  calls:
    - name: get_weather
      arguments: {city: Paris}
"""
CALL = '{"tool": "get_weather", "arguments": {"city": "Paris"}}'
DELAY_S = 0.1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument(
        "--model", default="openai/bench",
        help="model name sent (openai/gpt-4o-mini: one LiteLLM has a price for)",
    )  # fmt: skip
    ap.add_argument("--tiny", action="store_true", help="8 trials at concurrency 4")
    args = ap.parse_args()
    if args.tiny:
        args.trials, args.concurrency = 8, 4

    os.environ.setdefault("OPENAI_API_KEY", "bench-not-a-secret")
    from toolbench.providers import litellm_api

    # Import cost (LiteLLM's, and what its first call imports) is start-up, not throughput.
    litellm_api.warm()
    with fake_server() as (base_url, pid):
        _bench(args.trials, args.concurrency, base_url, args.model, pid)


@contextmanager
def fake_server(delay: float = DELAY_S) -> Iterator[tuple[str, int]]:
    """The fake OpenAI-compatible server answering :data:`CALL` after ``delay``: its
    base URL and process id. It runs in its own process, as a real one would: in-process
    threads would compete with the runner's event loop for the GIL and measure that."""
    root = Path(__file__).resolve().parents[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "toolbench.providers.fake", "--delay", str(delay),
         "--reply", CALL],
        cwd=root, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert server.stdout is not None
    try:
        yield server.stdout.readline().strip(), server.pid
    finally:
        server.terminate()
        server.wait()


def plan_matrix(
    tmp: Path, trials: int, concurrency: int, base_url: str, model: str = "openai/bench",
    executor: str = "local", record: Literal["all", "none"] = "all",
    cassettes: Path | None = None,
) -> Any:  # fmt: skip
    """The benchmarks' matrix, planned in ``tmp``: ``trials`` samples of :data:`SCENARIO`
    (one single-turn scenario, prompt-json), recorded live (``--record all``) against
    ``base_url``, or replayed (``none``), by ``executor``, its cassettes in ``cassettes``
    (default: ``tmp/cas``). Run it with ``toolbench.runner.run.execute_run``."""
    from toolbench.runner.options import RunOptions
    from toolbench.runner.run import plan_run

    scen = tmp / "bench.yaml"
    scen.write_text(SCENARIO)
    return plan_run(RunOptions(
        models=[model], formats=["prompt-json"], scenarios=[str(scen)], samples=trials,
        concurrency=concurrency, record=record, out=tmp / "run",
        cassette_dir=cassettes or tmp / "cas",
        api_base=base_url, executor=executor,
    ))  # fmt: skip


def _bench(
    trials: int, concurrency: int, base_url: str, model: str = "openai/bench",
    server_pid: int | None = None,
) -> None:  # fmt: skip
    from toolbench.runner.run import execute_run

    with tempfile.TemporaryDirectory() as tmp:
        plan = plan_matrix(Path(tmp), trials, concurrency, base_url, model)
        done: list[Any] = []
        s0, c0 = _server_cpu(server_pid), time.process_time()
        t0 = time.perf_counter()
        execute_run(plan, done.append)
        wall = time.perf_counter() - t0
        cpu, s1 = time.process_time() - c0, _server_cpu(server_pid)
        ok = sum(1 for r in done if r.status == "ok")
    ideal = concurrency / DELAY_S
    achieved = len(done) / wall
    lat = sorted(r.latency_s for r in done if r.latency_s is not None)
    own = sorted(r.harness_s for r in done if r.harness_s is not None)
    print(f"trials              : {len(done)} ({ok} ok), concurrency {concurrency}")
    print(
        f"load average        : {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
        f"on {os.cpu_count()} cores (at the end)"
    )
    print(f"wall                : {wall:.2f} s")
    print(
        f"harness CPU / trial : {cpu / max(1, len(done)) * 1000:.2f} ms (this process; not the "
        f"server's; x {ideal:.0f}/s = {cpu / max(1, len(done)) * ideal:.2f} cores for the ideal)"
    )
    if s0 is not None and s1 is not None:
        print(f"server CPU / trial  : {(s1 - s0) / max(1, len(done)) * 1000:.2f} ms (the fake "
              f"server's process, on the same cores; a real provider's is not)")  # fmt: skip
    print(f"throughput          : {achieved:.1f} trials/s (ideal {ideal:.0f})")
    print(f"fraction of ideal   : {achieved / ideal:.2f} (aim >= 0.9)")
    if lat and own:
        p50, p95 = lat[len(lat) // 2], lat[int(len(lat) * 0.95)]
        print(f"recorded latency    : p50 {p50:.3f} s, p95 {p95:.3f} s (server: {DELAY_S} s)")
        print(f"trials' harness_s   : p50 {own[len(own) // 2]:.3f} s (interleaved)")


def _server_cpu(pid: int | None) -> float | None:
    """CPU seconds the server process has used (Linux /proc; None elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


if __name__ == "__main__":
    main()
