"""Scale benchmark of the analysis commands.

Generates two synthetic runs of 50,040 trials each (3 models x 4 formats x 834
scenarios x 5 samples, turns with a request and a reply of a few hundred characters,
~15% failures, ~1% infra errors), then times ``toolbench report`` (HTML), ``gate`` and
``compare`` each in its own subprocess and prints wall seconds and peak RSS
(``getrusage(RUSAGE_CHILDREN).ru_maxrss`` measured in a fresh wrapper per command)
next to the targets: 10 s and 1 GB each.

    python benchmarks/bench_report_scale.py [--keep DIR] [--tiny]

The trials are built through toolbench's own models (``TrialResult``, ``TrialScores``),
so they are always the current results schema. A command that refuses the runs (an exit
code other than its verdicts) makes the benchmark exit non-zero. ``--tiny`` generates 20
scenarios x 1 sample, so the test suite can run it in seconds (tests/benchmarks).
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

from toolbench import codes
from toolbench.formats.base import ModelReply, ParseResult, ToolCall
from toolbench.results import RunInfo, TrialResult, TrialScores, TurnRecord

MODELS = ("qwen2.5-7b", "llama-3.1-8b", "gpt-4o-mini")
FORMATS = ("prompt-json", "react", "xml", "native")
N_SCENARIOS = 834
SAMPLES = 5
TINY = (20, 1)
"""``--tiny``: 20 scenarios x 1 sample (240 trials a run), so the test suite runs it."""
TARGET_S = 10.0
TARGET_MB = 1024.0

SYSTEM = (
    "You can call these tools. get_weather(city: string, unit: celsius|fahrenheit): current "
    "weather for a city. get_stock_price(symbol: string): latest price. To call a tool, reply "
    'with {"tool": "<name>", "arguments": {...}} and stop; results come back as Tool Result '
    "messages. When no tool is needed, answer in plain text. " * 2
)


REQUEST = {
    "model": "m",
    "messages": [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "What is the weather in Paris right now?"},
    ],
    "stop": ["Observation:"],
    "temperature": 0.0,
}


def trial(
    run_id: str, model: str, fmt: str, s: int, sample: int, rng: random.Random, fail_p: float
) -> TrialResult:
    """One synthetic trial, built through the package's own models so that what is
    written is always the current results schema (a hand-kept dict drifted once: it
    stayed at schema 5 and every analysis command refused it)."""
    common: dict[str, Any] = {
        "run_id": run_id,
        "toolbench_version": "0.1.0",
        "model": model,
        "format": fmt,
        "scenario_id": f"scenario-{s:04d}",
        "sample": sample,
        "latency_s": round(rng.uniform(0.3, 3.0), 3),
    }
    if rng.random() < 0.01:
        return TrialResult(**common, status="infra_error", infra_error="HTTP 503")
    ok = rng.random() > fail_p
    reply = (
        f"Thought: I should check the weather in Paris for request {s}.\n"
        'Action: {"tool": "get_weather", "arguments": {"city": "Paris"}}'
        + ("" if ok else "\nObservation: it is sunny and 21C. " * 3)
    )
    turn = TurnRecord(
        request=REQUEST,
        reply=ModelReply(text=reply * 2, finish_reason="stop"),
        parsed=ParseResult(
            calls=[ToolCall(name="get_weather", arguments={"city": "Paris"})],
            content="" if ok else "it is sunny and 21C.",
            status="strict",
            attempted=True,
        ),
        latency_s=0.8,
        prompt_tokens=310,
        completion_tokens=40,
        cost=0.00012,
    )
    errors, reasons = [], []
    if not ok:
        errors = [codes.ARGS_MISMATCH, codes.STOP_HALLUCINATED_RESULT]
        reasons = ["city: expected Paris", "invented Observation"]
    scores = TrialScores.of(
        errors,
        reasons,
        parse="strict",
        parse_strict_ok=True,
        parse_ok=True,
        call_accuracy=ok,
        args_schema_valid=True,
        stop="clean" if ok else "hallucinated_result",
        stop_compliant=ok,
        leak_raw=False,
        leak_sanitized=not ok and rng.random() < 0.3,
        no_call_correct=None,
        final_answer_ok=None,
    )
    return TrialResult(
        **common,
        turns=[turn],
        scores=scores,
        prompt_tokens=300 + 20 * FORMATS.index(fmt),
        completion_tokens=rng.randint(20, 80),
        cost=0.0001,
    )


def generate(run_dir: Path, seed: int, n_scenarios: int, samples: int) -> int:
    rng = random.Random(seed)
    run_dir.mkdir(parents=True, exist_ok=True)
    n = 0
    with (run_dir / "results.jsonl").open("w", encoding="utf-8") as fh:
        for m_i, model in enumerate(MODELS):
            for f_i, fmt in enumerate(FORMATS):
                fail_p = 0.05 + 0.05 * m_i + 0.04 * f_i
                for s in range(n_scenarios):
                    for sample in range(samples):
                        t = trial(run_dir.name, model, fmt, s, sample, rng, fail_p)
                        fh.write(t.model_dump_json() + "\n")
                        n += 1
    info = RunInfo(
        run_id=run_dir.name,
        toolbench_version="0.1.0",
        created_at="2026-01-01T00:00:00Z",
        models=list(MODELS),
        formats=list(FORMATS),
        scenarios=[f"scenario-{s:04d}" for s in range(n_scenarios)],
        samples=samples,
    )
    (run_dir / "run.json").write_text(info.model_dump_json(indent=2), encoding="utf-8")
    return n


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
    ap.add_argument(
        "--tiny", action="store_true", help="20 scenarios x 1 sample: checks it still runs"
    )
    ap.add_argument("--measure", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        measure(args.measure)
        return
    root = args.keep or Path(tempfile.mkdtemp(prefix="toolbench-bench-"))
    try:
        failed = run_all(root, *(TINY if args.tiny else (N_SCENARIOS, SAMPLES)))
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    if failed:
        sys.exit(f"{failed} command(s) failed on the generated runs")


def run_all(root: Path, n_scenarios: int, samples: int) -> int:
    """Generate the two runs, time the three commands; the number that failed."""
    t0 = time.perf_counter()
    n = generate(root / "runs" / "big", 1, n_scenarios, samples)
    generate(root / "runs" / "big2", 2, n_scenarios, samples)
    size = (root / "runs" / "big" / "results.jsonl").stat().st_size / 2**20
    print(f"generated 2 runs of {n} trials ({size:.0f} MB each) in {time.perf_counter() - t0:.1f}s")
    cli = [sys.executable, "-c", "from toolbench.cli.app import main; main()"]
    big, big2 = str(root / "runs" / "big"), str(root / "runs" / "big2")
    # Each command with the exit codes that mean it read the runs: gate's 1 is its verdict
    # (the synthetic runs break the default leak and infra bounds), 2 is bad input.
    commands = {
        "report (html)": ([*cli, "report", big, "-o", str(root / "big.html")], (0,)),
        "gate": ([*cli, "gate", big, "--min", "call_accuracy=0.5", "--per-cell"], (0, 1)),
        "compare": ([*cli, "compare", big, big2], (0,)),
    }
    print(f"{'command':<15} {'wall s':>8} {'target':>7} {'peak RSS MB':>12} {'target':>7}  ok")
    failed = 0
    for name, (cmd, read) in commands.items():
        out = subprocess.run(
            [sys.executable, __file__, "--measure", *cmd],
            capture_output=True,
            text=True,
            check=True,
        )
        r = json.loads(out.stdout)
        failed += r["rc"] not in read
        ok = r["rc"] == 0 and r["wall"] <= TARGET_S and r["rss_mb"] <= TARGET_MB
        print(
            f"{name:<15} {r['wall']:>8.2f} {TARGET_S:>7.0f} {r['rss_mb']:>12.0f} "
            f"{TARGET_MB:>7.0f}  {'yes' if ok else 'NO'}"
            + (f"  (exit {r['rc']}: {r['err']})" if r["rc"] not in read else "")
            + (f"  (exit {r['rc']}: its verdict)" if r["rc"] and r["rc"] in read else "")
        )
    html = root / "big.html"
    if html.exists():
        print(f"HTML report: {html.stat().st_size / 2**20:.1f} MB")
    return failed


if __name__ == "__main__":
    main()
