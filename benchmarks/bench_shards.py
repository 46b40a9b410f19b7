"""Plan a 100,000-trial matrix, split it into 8 shards, and merge the 8 shard runs.

Run: ``python benchmarks/bench_shards.py [--trials N] [--shards K]``; ``--tiny``: 200
trials in 2 shards (checks it still runs). Targets: merge
under 30 s and under 1 GB peak RSS. The matrix is the bundled suite x 5 formats x 10
models x as many samples as reach the trial count; planning runs ``plan_run`` (no model
call, ``--record none``). Each shard's results are written as the runner would (one
realistic trial line per planned trial, its ``run.json`` from the plan), then
``toolbench merge`` runs in a child process so its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from toolbench.formats.base import ModelReply, ParseResult, ToolCall
from toolbench.results import TrialResult, TrialScores, TurnRecord
from toolbench.runner.options import RunOptions
from toolbench.runner.plan import run_info
from toolbench.runner.run import plan_run
from toolbench.scenarios.loader import load_scenarios
from toolbench.store.shards import Shard

FORMATS = ["prompt-json", "prompt-json:shots=2", "react", "xml", "native"]
MODELS = [f"openai/bench-model-{i}" for i in range(10)]


def template() -> dict[str, object]:
    """One realistic trial (a request, a reply, a parse, scores) as a JSON dict."""
    call = ToolCall(name="get_weather", arguments={"city": "Paris", "unit": "celsius"})
    reply = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    trial = TrialResult(
        run_id="x", toolbench_version="0", model="m", format="xml", scenario_id="s",
        turns=[TurnRecord(
            request={"model": "m", "messages": [{"role": "user", "content": "Weather?" * 20}],
                     "temperature": 0},
            reply=ModelReply(text=reply, finish_reason="stop"),
            parsed=ParseResult(calls=[call], content="", raw_content=reply, status="strict",
                               attempted=True),
            latency_s=0.4, prompt_tokens=300, completion_tokens=40,
        )],
        scores=TrialScores.of(
            parse="strict", parse_strict_ok=True, parse_ok=True, call_accuracy=True,
            args_schema_valid=True, stop="clean", stop_compliant=True, leak_raw=False,
            leak_sanitized=False, no_call_correct=None, final_answer_ok=None,
        ),
        latency_s=0.4, prompt_tokens=300, completion_tokens=40,
    )  # fmt: skip
    out: dict[str, object] = json.loads(trial.model_dump_json())
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=100_000)
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--tiny", action="store_true", help="200 trials in 2 shards")
    args = ap.parse_args()
    if args.tiny:
        args.trials, args.shards = 200, 2
    scenarios = [s.id for s in load_scenarios()]
    samples = math.ceil(args.trials / (len(scenarios) * len(FORMATS) * len(MODELS)))
    base = template()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cfg = RunOptions(models=MODELS, formats=FORMATS, samples=samples, record="none")
        t0 = time.perf_counter()
        whole = plan_run(dataclasses.replace(cfg, out=root / "whole"))
        planned = time.perf_counter() - t0
        assert whole.lock is not None
        whole.lock.release()
        total = len(whole.specs)

        t1 = time.perf_counter()
        dirs, sizes = [], []
        for k in range(1, args.shards + 1):
            out = root / f"shard-{k}"
            shard_cfg = dataclasses.replace(cfg, out=out, shard=Shard(index=k, count=args.shards))
            plan = plan_run(shard_cfg)
            assert plan.lock is not None
            plan.lock.release()
            sizes.append(len(plan.specs))
            (out / "run.json").write_text(run_info(plan).model_dump_json())
            with (out / "results.jsonl").open("w", encoding="utf-8") as fh:
                for s in plan.specs:
                    d = {**base, "run_id": out.name, "model": s.model, "format": s.fmt.spec,
                         "scenario_id": s.scenario.id, "sample": s.sample}  # fmt: skip
                    fh.write(json.dumps(d, separators=(",", ":")) + "\n")  # as stored
            dirs.append(out)
        sharded = time.perf_counter() - t1
        assert sum(sizes) == total, "the shards together are the whole matrix"

        t2 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "toolbench", "merge", *map(str, dirs), "-o", str(root / "m")],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        merged = time.perf_counter() - t2
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if proc.returncode != 0:
            sys.exit(f"merge failed: {proc.stderr.strip()}")
        n_out = sum(1 for _ in (root / "m" / "results.jsonl").open("rb"))
        size_mb = (root / "m" / "results.jsonl").stat().st_size / 1e6
    print(f"matrix              : {len(MODELS)} models x {len(FORMATS)} formats x "
          f"{len(scenarios)} scenarios x {samples} samples = {total} trials")  # fmt: skip
    print(f"plan (whole matrix) : {planned:6.2f} s")
    print(f"plan + write {args.shards} shards: {sharded:6.2f} s; sizes {min(sizes)}-{max(sizes)}")
    print(f"merge               : {merged:6.2f} s, peak RSS {rss_mb:.0f} MB, "
          f"{n_out} trials, {size_mb:.0f} MB")  # fmt: skip


if __name__ == "__main__":
    main()
