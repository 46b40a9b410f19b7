"""Live concurrency: 400 trials at concurrency 16 against a local fake OpenAI-compatible
server that answers after 100 ms. Prints achieved throughput as a fraction of the ideal
16 / 0.1 s = 160 trials/s (aim: at least 0.9).

The full path is measured: LiteLLM, real HTTP on 127.0.0.1, cassette recording per trial,
parsing, scoring and the flushed results file. LiteLLM's import happens before the clock.
Run: ``python benchmarks/bench_concurrency.py [--trials 400] [--concurrency 16]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.fake_openai import FakeOpenAI

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
    args = ap.parse_args()

    import os

    os.environ.setdefault("OPENAI_API_KEY", "bench-not-a-secret")
    from toolbench.runner.provider import litellm
    from toolbench.runner.run import RunConfig, execute_run, plan_run

    litellm()  # import cost is start-up, not throughput
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(delay_s=DELAY_S, default=CALL) as fake:
        scen = Path(tmp) / "bench.yaml"
        scen.write_text(SCENARIO)
        cfg = RunConfig(
            models=["openai/bench"], formats=["prompt-json"], scenarios=[str(scen)],
            samples=args.trials, concurrency=args.concurrency, record="all",
            out=Path(tmp) / "run", cassette_dir=Path(tmp) / "cas", api_base=fake.base_url,
            report=False,
        )  # fmt: skip
        plan = plan_run(cfg)
        done = []
        t0 = time.perf_counter()
        execute_run(cfg, plan, done.append)
        wall = time.perf_counter() - t0
        ok = sum(1 for r in done if r.status == "ok")
    ideal = args.concurrency / DELAY_S
    achieved = len(done) / wall
    print(f"trials              : {len(done)} ({ok} ok), concurrency {args.concurrency}")
    print(f"wall                : {wall:.2f} s")
    print(f"throughput          : {achieved:.1f} trials/s (ideal {ideal:.0f})")
    print(f"fraction of ideal   : {achieved / ideal:.2f} (aim >= 0.9)")


if __name__ == "__main__":
    main()
