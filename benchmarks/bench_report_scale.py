"""Scale benchmark of the analysis commands (not a test: run it by hand).

Generates two synthetic runs of 50,040 trials each (3 models x 4 formats x 834
scenarios x 5 samples, turns with a request and a reply of a few hundred characters,
~15% failures, ~1% infra errors), then times ``toolbench report`` (HTML), ``gate`` and
``compare`` each in its own subprocess and prints wall seconds and peak RSS
(``getrusage(RUSAGE_CHILDREN).ru_maxrss`` measured in a fresh wrapper per command)
next to the targets: 10 s and 1 GB each.

    /work/devvenv/bin/python benchmarks/bench_report_scale.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from toolbench.formats.base import ModelReply, ParseResult, ToolCall
from toolbench.results import RunInfo, TrialResult, TrialScores, TurnRecord

MODELS = ("qwen2.5-7b", "llama-3.1-8b", "gpt-4o-mini")
FORMATS = ("prompt-json", "react", "xml", "native")
N_SCENARIOS = 834
SAMPLES = 5
TARGET_S = 10.0
TARGET_MB = 1024.0

SYSTEM = (
    "You can call these tools. get_weather(city: string, unit: celsius|fahrenheit): current "
    "weather for a city. get_stock_price(symbol: string): latest price. To call a tool, reply "
    'with {"tool": "<name>", "arguments": {...}} and stop; results come back as Tool Result '
    "messages. When no tool is needed, answer in plain text. " * 2
)


def _template() -> dict[str, Any]:
    parsed = ParseResult(
        calls=[ToolCall(name="get_weather", arguments={"city": "Paris"})],
        content="",
        status="strict",
        attempted=True,
    )
    turn = TurnRecord(
        request={
            "model": "m",
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": "What is the weather in Paris right now?"},
            ],
            "stop": ["Observation:"],
            "temperature": 0.0,
        },
        reply=ModelReply(text="", finish_reason="stop"),
        parsed=parsed,
        latency_s=0.8,
        prompt_tokens=310,
        completion_tokens=40,
        cost=0.00012,
    )
    scores = TrialScores.of(
        parse="strict",
        parse_strict_ok=True,
        parse_ok=True,
        call_accuracy=True,
        args_schema_valid=True,
        stop="clean",
        stop_compliant=True,
        leak_raw=False,
        leak_sanitized=False,
        no_call_correct=None,
        final_answer_ok=None,
    )
    t = TrialResult(
        run_id="bench",
        toolbench_version="0.1.0",
        model="m",
        format="f",
        scenario_id="s",
        turns=[turn],
        scores=scores,
    )
    return t.model_dump(mode="json")


def generate(run_dir: Path, seed: int) -> int:
    rng = random.Random(seed)
    base = _template()
    run_dir.mkdir(parents=True, exist_ok=True)
    n = 0
    with (run_dir / "results.jsonl").open("w", encoding="utf-8") as fh:
        for m_i, model in enumerate(MODELS):
            for f_i, fmt in enumerate(FORMATS):
                fail_p = 0.05 + 0.05 * m_i + 0.04 * f_i
                for s in range(N_SCENARIOS):
                    sid = f"scenario-{s:04d}"
                    for sample in range(SAMPLES):
                        d = _copy(base)
                        d.update(model=model, format=fmt, scenario_id=sid, sample=sample)
                        d["run_id"] = run_dir.name
                        d["latency_s"] = round(rng.uniform(0.3, 3.0), 3)
                        d["prompt_tokens"] = 300 + 20 * f_i
                        d["completion_tokens"] = rng.randint(20, 80)
                        d["cost"] = 0.0001
                        if rng.random() < 0.01:
                            d.update(status="infra_error", infra_error="HTTP 503", turns=[])
                            d["scores"] = None
                        else:
                            ok = rng.random() > fail_p
                            reply = (
                                f"Thought: I should check the weather in Paris for request {s}.\n"
                                'Action: {"tool": "get_weather", "arguments": {"city": "Paris"}}'
                                + ("" if ok else "\nObservation: it is sunny and 21C. " * 3)
                            )
                            turn = d["turns"][0]
                            turn["reply"]["text"] = reply * 2
                            turn["parsed"]["content"] = "" if ok else "it is sunny and 21C."
                            sc = d["scores"]
                            sc["call_accuracy"] = ok
                            sc["stop_compliant"] = ok
                            sc["stop"] = "clean" if ok else "hallucinated_result"
                            sc["leak_sanitized"] = not ok and rng.random() < 0.3
                            if not ok:
                                sc["errors"] = ["args.mismatch", "stop.hallucinated_result"]
                                sc["reasons"] = ["city: expected Paris", "invented Observation"]
                        fh.write(json.dumps(d) + "\n")
                        n += 1
    info = RunInfo(
        run_id=run_dir.name,
        toolbench_version="0.1.0",
        created_at="2026-01-01T00:00:00Z",
        models=list(MODELS),
        formats=list(FORMATS),
        scenarios=[f"scenario-{s:04d}" for s in range(N_SCENARIOS)],
        samples=SAMPLES,
    )
    (run_dir / "run.json").write_text(info.model_dump_json(indent=2), encoding="utf-8")
    return n


def _copy(d: dict[str, Any]) -> dict[str, Any]:
    out = dict(d)
    turn = dict(d["turns"][0])
    turn["reply"] = dict(turn["reply"])
    turn["parsed"] = dict(turn["parsed"])
    out["turns"] = [turn]
    out["scores"] = dict(d["scores"])
    return out


def measure(cmd: list[str]) -> None:
    """Run ``cmd``; print wall seconds, peak child RSS (MB) and exit code as JSON."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - t0
    rss_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    err = proc.stderr.decode(errors="replace")[-500:]
    print(json.dumps({"wall": wall, "rss_mb": rss_kb / 1024, "rc": proc.returncode, "err": err}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", type=Path, help="Generate into this directory and keep it.")
    ap.add_argument("--measure", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        measure(args.measure)
        return
    root = args.keep or Path(tempfile.mkdtemp(prefix="toolbench-bench-"))
    try:
        run_all(root)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


def run_all(root: Path) -> None:
    t0 = time.perf_counter()
    n = generate(root / "runs" / "big", seed=1)
    generate(root / "runs" / "big2", seed=2)
    size = (root / "runs" / "big" / "results.jsonl").stat().st_size / 2**20
    print(f"generated 2 runs of {n} trials ({size:.0f} MB each) in {time.perf_counter() - t0:.1f}s")
    cli = [sys.executable, "-c", "from toolbench.cli.app import main; main()"]
    big, big2 = str(root / "runs" / "big"), str(root / "runs" / "big2")
    commands = {
        "report (html)": [*cli, "report", big, "-o", str(root / "big.html")],
        "gate": [*cli, "gate", big, "--min", "call_accuracy=0.5", "--per-cell"],
        "compare": [*cli, "compare", big, big2],
    }
    print(f"{'command':<15} {'wall s':>8} {'target':>7} {'peak RSS MB':>12} {'target':>7}  ok")
    for name, cmd in commands.items():
        out = subprocess.run(
            [sys.executable, __file__, "--measure", *cmd],
            capture_output=True,
            text=True,
            check=True,
        )
        r = json.loads(out.stdout)
        ok = r["rc"] == 0 and r["wall"] <= TARGET_S and r["rss_mb"] <= TARGET_MB
        print(
            f"{name:<15} {r['wall']:>8.2f} {TARGET_S:>7.0f} {r['rss_mb']:>12.0f} "
            f"{TARGET_MB:>7.0f}  {'yes' if ok else 'NO'}"
            + (f"  (exit {r['rc']}: {r['err']})" if r["rc"] else "")
        )
    html = root / "big.html"
    if html.exists():
        print(f"HTML report: {html.stat().st_size / 2**20:.1f} MB")


if __name__ == "__main__":
    main()
