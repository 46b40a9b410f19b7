"""Every benchmark still runs: each script in ``benchmarks/`` at its ``--tiny`` size.

Nothing else runs the benchmarks, so a change of the results schema, of an option or of
a module they reach into broke them unnoticed (``bench_report_scale.py`` wrote schema-5
scores for a round, and every analysis command refused its runs). Each script runs in its
own process, as by hand, and must exit 0 and print its result lines; where a line states
a fact rather than a speed (LiteLLM not imported, the shards adding up to the matrix, the
analysis commands reading the synthetic runs), the fact is checked too. No figure is:
these are sizes at which the timings mean nothing.

``bench_replay_instructions.py`` counts instructions under valgrind's callgrind, which is
far too slow for the suite even at the tiny size; it runs here with a stand-in
``valgrind`` on ``PATH`` that runs the command and reports its CPU time in place of the
count, so its commands and options are still checked.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
HANG = 300
"""Seconds after which a benchmark is taken to hang (a guard, not a timing assertion)."""


@dataclass(frozen=True)
class Bench:
    script: str
    lines: tuple[str, ...]
    """Patterns (multi-line regular expressions) the output must match, each somewhere."""
    args: tuple[str, ...] = ()
    check: Callable[[str], None] | None = field(default=None, compare=False)
    """A further check of the output (facts that lines alone do not state)."""


def _shards_add_up(out: str) -> None:
    planned = re.search(r"^matrix .* = (\d+) trials$", out, re.M)
    merged = re.search(r"^merge .* MB, (\d+) trials, ", out, re.M)
    assert planned and merged
    assert int(planned.group(1)) == int(merged.group(1)) > 0


def _analysis_read_the_runs(out: str) -> None:
    # an exit code other than a verdict (gate's 1) beside a command: it refused the runs
    assert not re.search(r"\(exit \d+: (?!its verdict\))", out), out


def _replayed_all(out: str) -> None:
    found = re.search(r"^replayed trials\s+: (\d+) \((\d+) with a cassette\)", out, re.M)
    assert found
    assert int(found.group(1)) == int(found.group(2)) > 0


def _stream_replayed(out: str) -> None:
    counts = re.findall(r"^(?:plain|stream)\s+replay: (\d+) ok trials", out, re.M)
    assert len(counts) == 2
    assert all(int(n) > 0 for n in counts)


ATP = importlib.util.find_spec("agent_tool_parser") is not None

BENCHES = (
    Bench(
        "bench_batch_phase.py",
        (
            r"^batch: capture\s+: +[\d.]+ ms CPU a trial",
            r"^batch: whole command\s+: +[\d.]+ ms CPU a trial, [\d.]+ s wall, 8/8 ok$",
            r"^live:  whole command\s+: +[\d.]+ ms CPU a trial, [\d.]+ s wall, 8/8 ok$",
        ),
        ("--dir",),
    ),
    Bench(
        "bench_bfcl_import.py",
        (
            r"^import\s+: .* for [1-9]\d* scenarios in \d+ files$",
            r"^byte-identical again: True$",
            r"^validate the output : .*, 0 errors$",
        ),
    ),
    Bench(
        "bench_concurrency.py",
        (r"^trials\s+: 8 \(8 ok\), concurrency 4$", r"^fraction of ideal\s+: [\d.]+"),
    ),
    Bench(
        "bench_env_replay.py",
        (r"^least  of +\d+ rounds : environment [\d.]+ ms, scripted [\d.]+ ms CPU a trial",),
    ),
    Bench(
        "bench_mcp_start.py",
        (
            r"^least  a cycle +: start \d+ ms, call [\d.]+ ms, stop \d+ ms wall",
            r"^servers started +: [1-9]\d* recording 2 MCP trials, 0 replaying$",
            r"^least  of +\d+ rounds : MCP [\d.]+ ms, todo [\d.]+ ms CPU a replayed trial",
        ),
    ),
    Bench(
        "bench_first_run.py",
        (r"^toolbench run \(--scenarios calculate-product\): [1-9]\d* trials, 0 not ok$",),
    ),
    Bench(
        "bench_live_cpu.py",
        (
            r"^CPU / trial, LiteLLM kind\s+: least -?[\d.]+",
            r"^CPU / trial, bare httpx kind\s+: least",
            r"^toolbench's own \(bare - httpx\)\s+: least",
        ),
        # --dir is filled in with the test's own directory (not the repository's runs/)
        ("--dir",),
    ),
    Bench(
        "bench_parsers.py",
        (r"^parse: ms of CPU", r"^sanitize: ms of CPU", r"^case\s+.*prompt-json", r"^nesting "),
    ),
    Bench(
        "bench_provider_replay.py",
        (
            r"^plain openai\s+boundary\s+[\d.]+ s CPU \(LiteLLM imported: False\)$",
            r"^streamed run openai\s+boundary\s+[\d.]+ s CPU \(LiteLLM imported: False\)$",
            r"^streamed openai\s+boundary\s+[\d.]+ s CPU \(LiteLLM imported: False\)$",
        ),
    ),
    Bench(
        "bench_real_replies.py",
        (
            r"^100 real replies, ",
            r"^all\s+100\s+\d+\s+\d+/100",
            r"^call_accuracy / no_call_correct equal to BFCL's verdict: \d+/\d+",
        ),
    ),
    Bench(
        "bench_replay.py",
        (r"^replay / floor\s+: [\d.]+", r"^full-path exchanges : \d+ of \d+"),
        check=_replayed_all,
    ),
    Bench(
        "bench_replay_cpu.py",
        (
            r"^bfcl-smoke replay, whole command : [\d.]+ s CPU for [1-9][\d,]* trials",
            r"^plain\s+replay\s+: -?[\d.]+ ms CPU a trial",
            r"^streamed replay\s+: -?[\d.]+ ms CPU a trial",
            r"^warm processes, least  of 1 : plain [\d.]+ ms, streamed [\d.]+ ms",
        ),
    ),
    Bench(
        "bench_replay_instructions.py",
        (
            r"^plain\s+replay : -?[\d.]+ M instructions a trial",
            r"^streamed replay : -?[\d.]+ M instructions a trial",
        ),
    ),
    Bench(
        "bench_report_scale.py",
        (
            r"^generated 2 runs of 240 trials",
            r"^command\s+wall s\s+target\s+peak RSS MB",
            r"^report \(html\)\s+[\d.]+",
            r"^gate\s+[\d.]+",
            r"^compare\s+[\d.]+",
            r"^HTML report: [\d.]+ MB",
        ),
        check=_analysis_read_the_runs,
    ),
    Bench(
        "bench_score_trial.py",
        (
            r"^[1-9]\d* plain trials, [1-9]\d* named values each",
            r"^score_trial: \d+ us a trial \(best of 1 x 20\)",
        ),
    ),
    Bench(
        "bench_ray_overhead.py",
        (r"^ray - local / trial : cold [-+][\d.]+ ms, warm [-+][\d.]+ ms$",)
        if importlib.util.find_spec("ray") is not None
        else (r"^ray is not installed",),
    ),
    Bench(
        "bench_shards.py",
        (r"^plan \(whole matrix\) :", r"^plan \+ write 2 shards:"),
        check=_shards_add_up,
    ),
    Bench(
        "bench_startup.py",
        (
            r"^toolbench --help\s+: \s*[\d.]+ ms",
            r"^ratio\s+: \s*[\d.]+x",
            r"^litellm imported\s+: False$",
        ),
    ),
    Bench(
        "bench_stream_readers.py",
        (
            r"^one character at a time, 5,000 characters",
            r"^hostile, varied:",
            r"^  worst ratio at 1 / 4 / 8 / 16 / whole: ",
        ),
    ),
    Bench(
        "bench_stream_replay.py",
        (r"^streaming costs [-+][\d.]+ ms per trial on replay$",),
        check=_stream_replayed,
    ),
    Bench(
        "bench_vs_agent_tool_parser.py",
        (r"^format\s+replies\s+raised\s+toolbench us",)
        if ATP
        else (r"^agent-tool-parser is not installed",),
    ),
)

FAKE_VALGRIND = """\
#!{python}
# Stands in for valgrind in the benchmark tests: runs the command after valgrind's own
# options and reports its CPU time (microseconds) where callgrind reports instructions.
import resource, subprocess, sys
argv = sys.argv[1:]
while argv and argv[0].startswith("--"):
    argv.pop(0)
rc = subprocess.run(argv, check=False).returncode
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"==1== Collected : {{int((used.ru_utime + used.ru_stime) * 1e6)}}", file=sys.stderr)
sys.exit(rc)
"""


def test_every_benchmark_is_run_here() -> None:
    """A new benchmark gets a row here (and so a tiny run), or this fails."""
    scripts = sorted(p.name for p in BENCHMARKS.glob("*.py") if p.name != "__init__.py")
    assert scripts == sorted(b.script for b in BENCHES)


def test_docs_say_how_to_run_each_tiny() -> None:
    docs = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert "--tiny" in docs
    for b in BENCHES:
        assert f"benchmarks/{b.script}" in docs, b.script


def _run(bench: Bench, tmp: Path) -> subprocess.CompletedProcess[str]:
    """``bench``'s script at ``--tiny``, in its own process, as by hand."""
    env = dict(os.environ)
    args = [a if a != "--dir" else f"--dir={tmp / 'runs'}" for a in bench.args]
    if bench.script == "bench_replay_instructions.py":
        shim = tmp / "bin" / "valgrind"
        shim.parent.mkdir()
        shim.write_text(FAKE_VALGRIND.format(python=sys.executable), encoding="utf-8")
        shim.chmod(0o755)
        env["PATH"] = f"{shim.parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        [sys.executable, str(BENCHMARKS / bench.script), "--tiny", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG,
        check=False,
    )


@pytest.fixture(scope="module")
def runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Future[subprocess.CompletedProcess[str]]]]:
    """The selected benchmarks' runs, two at a time: most of a tiny run is start-up and
    waiting on a fake server, so two overlap well even on two cores."""
    selected = [
        b
        for item in request.session.items
        if isinstance(item, pytest.Function) and item.originalname == "test_benchmark_runs_tiny"
        if isinstance(b := item.callspec.params["bench"], Bench)
    ]
    with ThreadPoolExecutor(max_workers=2) as pool:
        yield {
            b.script: pool.submit(_run, b, tmp_path_factory.mktemp(b.script.removesuffix(".py")))
            for b in selected
        }


@pytest.mark.parametrize("bench", BENCHES, ids=[b.script for b in BENCHES])
def test_benchmark_runs_tiny(
    bench: Bench, runs: dict[str, Future[subprocess.CompletedProcess[str]]]
) -> None:
    done = runs[bench.script].result()
    assert done.returncode == 0, (
        f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    for line in bench.lines:
        assert re.search(line, done.stdout, re.M), f"no line /{line}/ in:\n{done.stdout[-3000:]}"
    if bench.check is not None:
        bench.check(done.stdout)
