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
it drives) is ``litellm - bare``. LiteLLM's import and first-call imports happen before
any clock. Run: ``python benchmarks/bench_live_cpu.py [--trials 400] [--rounds 2]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
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

    from toolbench.providers.base import Endpoint
    from toolbench.providers.litellm_api import LiteLLMAPI

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


def run_trials(
    trials: int, concurrency: int, base_url: str, kind: str, where: Path | None = None
) -> tuple[float, int]:
    """CPU seconds of this process for one run of ``trials``, and the trials ok."""
    from toolbench.providers import registry
    from toolbench.providers.litellm_api import LiteLLMAPI
    from toolbench.runner.run import RunConfig, execute_run, plan_run

    registry.kinds()["litellm"] = bare_kind() if kind == "bare" else LiteLLMAPI
    if where is not None:
        where.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=where) as tmp:
        scen = Path(tmp) / "bench.yaml"
        scen.write_text(SCENARIO)
        cfg = RunConfig(
            models=["openai/bench"], formats=["prompt-json"], scenarios=[str(scen)],
            samples=trials, concurrency=concurrency, record="all",
            out=Path(tmp) / "run", cassette_dir=Path(tmp) / "cas", api_base=base_url,
            report=False,
        )  # fmt: skip
        plan = plan_run(cfg)
        done: list[Any] = []
        c0 = time.process_time()
        execute_run(cfg, plan, done.append)
        cpu = time.process_time() - c0
    bad = [r for r in done if r.status != "ok"]
    if bad:
        print(f"{kind}: {len(bad)} not ok, e.g. {bad[0].status} {bad[0].error_code} "
              f"{(bad[0].infra_error or '')[:200]}")  # fmt: skip
    return cpu, len(done) - len(bad)


def bare_posts(trials: int, concurrency: int, base_url: str) -> float:
    """CPU seconds of ``trials`` httpx posts of the same request, ``concurrency`` at once."""
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
    c0 = time.process_time()
    asyncio.run(go())
    cpu = time.process_time() - c0
    if dropped:
        print(f"httpx posts: {len(dropped)} connection(s) dropped by the server, asked again")
    return cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--dir", type=Path, default=RUNS,
                    help="where the runs write (default: runs/ of the repository)")  # fmt: skip
    args = ap.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "bench-not-a-secret")
    from toolbench.providers import litellm_api

    litellm_api.warm()
    per: dict[str, list[float]] = {"litellm": [], "bare": [], "httpx": []}
    with fake_server() as (base_url, _pid):
        run_trials(16, args.concurrency, base_url, "litellm", args.dir)  # warm both paths
        run_trials(16, args.concurrency, base_url, "bare", args.dir)
        for _ in range(args.rounds):
            for kind in ("litellm", "bare"):
                cpu, ok = run_trials(args.trials, args.concurrency, base_url, kind, args.dir)
                assert ok == args.trials, f"{kind}: {ok} of {args.trials} ok"
                per[kind].append(cpu / args.trials * 1000)
            per["httpx"].append(bare_posts(args.trials, args.concurrency, base_url)
                                / args.trials * 1000)  # fmt: skip

    def span(xs: list[float]) -> str:
        return f"{min(xs):.2f}-{max(xs):.2f}" if len(xs) > 1 else f"{xs[0]:.2f}"

    own = [b - h for b, h in zip(per["bare"], per["httpx"], strict=True)]
    lite = [a - b for a, b in zip(per["litellm"], per["bare"], strict=True)]
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"trials {args.trials} at concurrency {args.concurrency}, server {DELAY_S} s, "
          f"{args.rounds} rounds; load average {load} on {os.cpu_count()} cores; "
          f"written under {args.dir}")  # fmt: skip
    print(f"CPU / trial, LiteLLM kind       : {span(per['litellm'])} ms")
    print(f"CPU / trial, bare httpx kind    : {span(per['bare'])} ms")
    print(f"CPU / request, httpx posts alone: {span(per['httpx'])} ms")
    print(f"toolbench's own (bare - httpx)  : {span(own)} ms (aim <= 2)")
    print(f"LiteLLM + SDK (litellm - bare)  : {span(lite)} ms")


if __name__ == "__main__":
    main()
