"""Live CPU per trial, split: toolbench's own against LiteLLM's and the HTTP client's.

The same live run (trials at concurrency 16 against the fake OpenAI-compatible server
answering after 100 ms, in its own process; cassettes recorded, replies parsed and
scored, results written) is made three ways, alternated, and each run's process CPU is
divided by its trials:

- ``litellm``: the LiteLLM kind as a run uses it;
- ``bare``: the same kind with its transport replaced by one ``httpx.AsyncClient`` post
  (a kind only sends: the shared call, cassettes, parsing, scoring and the store are the
  same code);
- ``httpx``: the bare posts alone (no toolbench), the HTTP client's own share.

toolbench's own CPU per trial is ``bare - httpx``; LiteLLM's share (with the OpenAI SDK
it drives) is ``litellm - bare``. toolbench's own is also split into user CPU (its Python)
and system CPU (the kernel's work beyond httpx's own sockets: the cassette file a recorded
trial creates, the results line): creating one file costs this VM's disk 0.01 to 0.8 ms of
system CPU from one minute to the next, a swing of its own beside the Python's.
LiteLLM's import and first-call imports happen before any clock, and every kind is run
once before the rounds. The machine is shared: each round runs the three kinds back to
back in a turning order, and the spread of the rounds is printed (least, median, most),
with the load average before and after and what creating one file costs here.
Run: ``python benchmarks/bench_live_cpu.py [--trials 400] [--rounds 5]``; ``--tiny``: 8 trials
at concurrency 4, one round (checks it still runs; the figures mean nothing).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_concurrency import DELAY_S, SCENARIO, fake_server


def bare_kind() -> type:
    """The LiteLLM kind with its transport replaced by a plain httpx post."""
    import httpx

    from toolbench.providers.litellm_api import LiteLLMAPI
    from toolbench.providers.model_api import Endpoint

    class Bare(LiteLLMAPI):
        client: Any = None  # one per run (a run is one event loop)

        async def send(self, endpoint: Endpoint, request: dict[str, Any]) -> Any:
            if self.client is None:
                self.client = httpx.AsyncClient(timeout=endpoint.timeout_s)
            body = {**request, "model": request["model"].partition("/")[2]}
            resp = await self.client.post(f"{endpoint.api_base}/chat/completions", json=body)
            resp.raise_for_status()
            return resp.json()

        def cost(self, response: Any) -> float | None:
            return None

    return Bare


RUNS = Path(__file__).resolve().parents[1] / "runs"
"""Where the runs write their cassettes and results by default: the repository's file
system, as a run does (``cassettes/``, ``runs/``). The system's ``/tmp`` here costs about
0.3 ms of system CPU to create a file (0.03-0.05 ms under the repository), which a
benchmark in ``/tmp`` counted as toolbench's own."""


def _cpu() -> tuple[float, float]:
    """This process's CPU seconds so far, every thread's: (user + system, system)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime, ru.ru_stime


def _since(start: tuple[float, float]) -> tuple[float, float]:
    now = _cpu()
    return now[0] - start[0], now[1] - start[1]


def run_trials(
    trials: int, concurrency: int, base_url: str, kind: str, where: Path | None = None
) -> tuple[tuple[float, float], int]:
    """CPU seconds of this process for one run of ``trials`` (total, of it system), and
    the trials ok."""
    from toolbench.providers import kind_registry as registry
    from toolbench.providers.litellm_api import LiteLLMAPI
    from toolbench.runner.options import RunOptions
    from toolbench.runner.run import execute_run, plan_run

    # The registry hands out copies of its table: the kind is replaced in the registry
    # itself (a copy's entry would leave the run on LiteLLM).
    registry.KINDS.register(bare_kind() if kind == "bare" else LiteLLMAPI, replace=True)
    assert registry.api_class("litellm").__name__ == ("Bare" if kind == "bare" else "LiteLLMAPI")
    if where is not None:
        where.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=where) as tmp:
        scen = Path(tmp) / "bench.yaml"
        scen.write_text(SCENARIO)
        cfg = RunOptions(
            models=["openai/bench"], formats=["prompt-json"], scenarios=[str(scen)],
            samples=trials, concurrency=concurrency, record="all",
            out=Path(tmp) / "run", cassette_dir=Path(tmp) / "cas", api_base=base_url,
        )  # fmt: skip
        plan = plan_run(cfg)
        done: list[Any] = []
        c0 = _cpu()
        execute_run(plan, done.append)
        cpu = _since(c0)
    bad = [r for r in done if r.status != "ok"]
    if bad:
        print(f"{kind}: {len(bad)} not ok, e.g. {bad[0].status} {bad[0].error_code} "
              f"{(bad[0].infra_error or '')[:200]}")  # fmt: skip
    return cpu, len(done) - len(bad)


def bare_posts(trials: int, concurrency: int, base_url: str) -> tuple[float, float]:
    """CPU seconds of ``trials`` httpx posts of the same request, ``concurrency`` at once
    (total, of it system)."""
    import httpx

    body = {"model": "bench", "messages": [{"role": "user", "content": "Weather in Paris?"}],
            "temperature": 0, "seed": 1}  # fmt: skip

    async def go() -> None:
        sem = asyncio.Semaphore(concurrency)
        async with httpx.AsyncClient(timeout=30) as client:

            async def one() -> None:
                async with sem:
                    for attempt in range(3):  # the fake server drops a connection now and then
                        try:
                            r = await client.post(f"{base_url}/chat/completions", json=body)
                            break
                        except httpx.TransportError:
                            if attempt == 2:
                                raise
                            dropped.append(1)
                    r.json()

            await asyncio.gather(*(one() for _ in range(trials)))

    dropped: list[int] = []
    c0 = _cpu()
    asyncio.run(go())
    cpu = _since(c0)
    if dropped:
        print(f"httpx posts: {len(dropped)} connection(s) dropped by the server, asked again")
    return cpu


def file_create_cpu(where: Path, n: int = 200) -> float:
    """CPU milliseconds this process spends creating one small file under ``where`` (the
    one file system operation a recorded trial cannot share: its cassette's temporary
    file), least of three rounds of ``n``. Printed beside the split, not subtracted: it
    is toolbench's own work, but its price is the machine's (0.01 ms to 1 ms seen here)."""
    where.mkdir(parents=True, exist_ok=True)
    best = float("inf")
    for _ in range(3):
        with tempfile.TemporaryDirectory(dir=where) as tmp:
            c0 = time.process_time()
            for i in range(n):
                fd = os.open(f"{tmp}/f{i}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                os.close(fd)
            best = min(best, (time.process_time() - c0) / n * 1000)
    return best


KINDS = ("litellm", "bare", "httpx")


def one_round(
    kind: str, trials: int, concurrency: int, base_url: str, where: Path
) -> tuple[float, float]:
    """CPU milliseconds a trial (a request, for ``httpx``) of one run of ``kind``: total,
    and of it system CPU (the kernel's work: sockets, and a recorded trial's file)."""
    if kind == "httpx":
        cpu = bare_posts(trials, concurrency, base_url)
    else:
        cpu, ok = run_trials(trials, concurrency, base_url, kind, where)
        assert ok == trials, f"{kind}: {ok} of {trials} ok"
    return cpu[0] / trials * 1000, cpu[1] / trials * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", type=Path, default=RUNS,
                    help="where the runs write (default: runs/ of the repository)")  # fmt: skip
    ap.add_argument("--tiny", action="store_true", help="8 trials at concurrency 4, one round")
    args = ap.parse_args()
    if args.tiny:
        args.trials, args.concurrency, args.rounds = 8, 4, 1
    os.environ.setdefault("OPENAI_API_KEY", "bench-not-a-secret")
    from toolbench.providers import litellm_api

    litellm_api.warm()
    load_before = os.getloadavg()
    per: dict[str, list[float]] = {k: [] for k in KINDS}
    system: dict[str, list[float]] = {k: [] for k in KINDS}
    with fake_server() as (base_url, _pid):
        for kind in KINDS:  # warm every path (imports, first-call caches, the pool)
            one_round(kind, min(16, args.trials), args.concurrency, base_url, args.dir)
        for r in range(args.rounds):
            # Each round runs the three kinds back to back, in an order that turns each
            # round: a slow spell of the machine falls on every kind alike.
            for kind in KINDS[r % 3 :] + KINDS[: r % 3]:
                total, kernel = one_round(kind, args.trials, args.concurrency, base_url,
                                          args.dir)  # fmt: skip
                per[kind].append(total)
                system[kind].append(kernel)
    creating = file_create_cpu(args.dir)
    load_after = os.getloadavg()

    def spread(xs: list[float]) -> str:
        return (f"least {min(xs):.2f}, median {statistics.median(xs):.2f}, "
                f"most {max(xs):.2f}")  # fmt: skip

    own = [b - h for b, h in zip(per["bare"], per["httpx"], strict=True)]
    own_system = [b - h for b, h in zip(system["bare"], system["httpx"], strict=True)]
    own_user = [o - k for o, k in zip(own, own_system, strict=True)]
    lite = [a - b for a, b in zip(per["litellm"], per["bare"], strict=True)]

    def load(xs: tuple[float, float, float]) -> str:
        return " ".join(f"{x:.1f}" for x in xs)

    print(f"trials {args.trials} at concurrency {args.concurrency}, server {DELAY_S} s, "
          f"{args.rounds} rounds (kinds alternated); load average {load(load_before)} "
          f"before, {load(load_after)} after, on {os.cpu_count()} cores; "
          f"written under {args.dir}")  # fmt: skip
    print(f"CPU / trial, LiteLLM kind       : {spread(per['litellm'])} ms")
    print(f"CPU / trial, bare httpx kind    : {spread(per['bare'])} ms")
    print(f"CPU / request, httpx posts alone: {spread(per['httpx'])} ms")
    print(f"toolbench's own (bare - httpx)  : {spread(own)} ms a round (aim <= 2); "
          f"least bare - least httpx {min(per['bare']) - min(per['httpx']):.2f} ms")  # fmt: skip
    print(f"  of it user CPU (Python)       : {spread(own_user)} ms a round")
    print(f"  of it system CPU (the kernel) : {spread(own_system)} ms a round (beyond "
          "httpx's own sockets: the cassette file, the results line)")  # fmt: skip
    print(f"LiteLLM + SDK (litellm - bare)  : {spread(lite)} ms a round")
    print(
        f"creating one file here          : {creating:.3f} ms CPU (a recorded trial "
        "creates one, its cassette; part of toolbench's own above)"
    )


if __name__ == "__main__":
    main()
