"""Rate limits shared across tasks and processes (``[rate_limits]`` in toolbench.toml):
the window's arithmetic, the shared store, a live run paced under ``--concurrency``, two
processes (shards) together within one limit, a 429's ``Retry-After`` pausing every
task, and bad config as one line, exit 2, through the CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.runner.conftest import run_fake
from toolbench.providers import attempts, rate_limits
from toolbench.providers.fake import FakeServer, Fault, Hang, Reply
from toolbench.providers.rate_limits import Limit, RateLimits, estimated_tokens
from toolbench.providers.rate_store import SqliteRateStore, wait_for

ROOT = Path(__file__).resolve().parents[2]
SUITE = "\n".join(
    f"""\
- id: s{i}
  messages:
    - {{role: user, content: "Say hello {i}."}}
  expect: {{no_call: true}}
"""
    for i in range(8)
)


class Timed(FakeServer):
    """The fake server, noting when each request arrived."""

    def __init__(self, respond: Any = None) -> None:
        self.arrived: list[float] = []
        super().__init__(respond)

    def reply_for(self, body: dict[str, Any]) -> Reply:
        self.arrived.append(time.time())
        return super().reply_for(body)


JITTER_S = 0.2
"""A request is counted when admitted and reaches the server a little later (LiteLLM,
httpx, a loaded machine): the server's windows are checked this much shorter."""


def most_in_any_window(times: list[float], window_s: float) -> int:
    """The most requests that arrived within any ``window_s`` less :data:`JITTER_S`."""
    window_s -= JITTER_S
    times = sorted(times)
    return max((sum(1 for u in times if t <= u < t + window_s) for t in times), default=0)


@pytest.fixture(autouse=True)
def _no_limits_after() -> Iterator[None]:
    yield
    rate_limits.install(RateLimits())


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")
    monkeypatch.setattr(attempts, "BACKOFF_S", 0.01)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scen").mkdir()
    (tmp_path / "scen" / "eight.yaml").write_text(SUITE, encoding="utf-8")
    return tmp_path


def config(work: Path, table: str) -> None:
    state = work / "rates.sqlite"
    text = f'[rate_limits]\nstate_file = "{state}"\n\n[rate_limits.openai]\n{table}\n'
    (work / "toolbench.toml").write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------- the window


@pytest.mark.parametrize(
    ("sent", "rpm", "tpm", "tokens", "wait"),
    [
        ([], 1, None, 10, 0.0),
        ([(0.0, 1)], 1, None, 1, 50.0),  # now = 10: the one slot frees at 60
        ([(0.0, 1), (5.0, 1)], 2, None, 1, 50.0),
        ([(0.0, 1), (5.0, 1)], 3, None, 1, 0.0),
        ([(0.0, 100), (5.0, 100)], None, 250, 50, 0.0),
        ([(0.0, 100), (5.0, 100)], None, 250, 60, 50.0),  # waits for the first to leave
        ([(0.0, 100), (5.0, 100)], None, 250, 160, 55.0),  # for both
        ([(0.0, 100)], None, 250, 1000, 50.0),  # larger than tpm: alone, in an empty window
        ([], None, 250, 1000, 0.0),
        ([(0.0, 1), (9.0, 200)], 5, 250, 60, 59.0),  # tpm the tighter
    ],
)
def test_how_long_a_request_waits_for_the_window(
    sent: list[tuple[float, int]], rpm: int | None, tpm: int | None, tokens: int, wait: float
) -> None:
    assert wait_for(sent, rpm, tpm, tokens, now=10.0, window_s=60.0) == wait


def test_the_token_estimate_counts_text_and_the_most_it_may_answer() -> None:
    request = {"messages": [{"role": "user", "content": "x" * 400}], "max_tokens": 100}
    assert 200 <= estimated_tokens(request) <= 220


def test_the_store_admits_within_the_window_and_pauses(tmp_path: Path) -> None:
    store = SqliteRateStore(tmp_path / "s.sqlite")
    assert [store.admit("openai", 2, None, 1, 60.0) for _ in range(2)] == [0.0, 0.0]
    assert 59.0 < store.admit("openai", 2, None, 1, 60.0) <= 60.0
    assert store.admit("anthropic", 2, None, 1, 60.0) == 0.0  # its own account
    store.pause("anthropic", 5.0)
    store.pause("anthropic", 1.0)  # a shorter pause does not shorten the longer one
    assert 4.0 < store.admit("anthropic", 2, None, 1, 60.0) <= 5.0
    other = SqliteRateStore(tmp_path / "s.sqlite")  # another process's view: the same
    assert 59.0 < other.admit("openai", 2, None, 1, 60.0) <= 60.0


# --------------------------------------------------------------------------- live runs


def test_concurrent_tasks_share_one_rpm(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rate_limits, "WINDOW_S", 1.0)  # a minute's rules in a second
    config(work, "rpm = 3")
    with Timed() as fake:
        t0 = time.time()
        rc = run_fake(fake, work, work / "scen" / "eight.yaml", "--concurrency", "8", out="r")
    assert rc == 0 and len(fake.arrived) == 8
    assert most_in_any_window(fake.arrived, 1.0) <= 3
    assert fake.arrived[-1] - t0 >= 2.0, "8 requests at 3 a second take two windows"


def test_a_429_with_retry_after_pauses_every_task(work: Path) -> None:
    config(work, "")  # no rpm or tpm: the table alone shares the provider's pauses
    lock = threading.Lock()
    first: list[float] = []

    def respond(body: dict[str, Any]) -> Reply:
        with lock:
            if not first:
                first.append(time.time())
                return Fault(429, headers={"retry-after": "1.5"})
        return Hang(0.3, "Hello.")  # the others in flight, answered after the 429

    with Timed(respond) as fake:
        rc = run_fake(fake, work, work / "scen" / "eight.yaml", "--concurrency", "3", out="r")
    assert rc == 0 and len(fake.arrived) == 9  # 8 trials, one asked again
    t429 = first[0]
    in_flight = [t for t in fake.arrived if t < t429 + 0.2]
    later = [t for t in fake.arrived if t >= t429 + 0.2]
    assert len(in_flight) == 3, "three tasks had sent before the 429"
    assert len(later) == 6 and min(later) >= t429 + 1.45, "every task's next request waited"


def test_without_a_table_nothing_waits(work: Path) -> None:
    with Timed() as fake:
        rc = run_fake(fake, work, work / "scen" / "eight.yaml", "--concurrency", "8", out="r")
    assert rc == 0 and not (work / "rates.sqlite").exists()


def test_two_processes_together_keep_one_rpm(work: Path) -> None:
    """Two shards of one matrix, separate processes on this machine, one limit."""
    config(work, "rpm = 2")
    boot = ("import sys; import toolbench.providers.rate_limits as r; r.WINDOW_S = 1.5; "
            "from toolbench.cli.app import main; sys.argv[0] = 'toolbench'; main()")  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "harness")}

    def shard(k: int, base_url: str) -> list[str]:
        return [sys.executable, "-c", boot, "run", "--models", "openai/fake", "--formats",
                "prompt-json", "--scenarios", str(work / "scen" / "eight.yaml"),
                "--api-base", base_url, "--out", str(work / f"shard{k}"), "--cassettes",
                str(work / "cas"), "--quiet", "--no-report", "--concurrency", "4",
                "--shard", f"{k}/2"]  # fmt: skip

    pipe = subprocess.PIPE
    with Timed() as fake:
        procs = [subprocess.Popen(shard(k, fake.base_url), cwd=work, env=env, stdout=pipe,
                                  stderr=pipe, text=True) for k in (1, 2)]  # fmt: skip
        outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert len(fake.arrived) == 8
    assert most_in_any_window(fake.arrived, 1.5) <= 2
    assert max(fake.arrived) - min(fake.arrived) >= 3 * 1.5 - 0.1


# --------------------------------------------------------------------------- bad config

BAD: dict[str, tuple[str, str]] = {
    "not-a-table": ("rate_limits = 5\n", "rate_limits: expected a table of providers"),
    "unknown-provider": (
        "[rate_limits.opnai]\nrpm = 5\n",
        "rate_limits.opnai: not a provider (a LiteLLM provider prefix, e.g. openai, "
        "anthropic; or state_file)",
    ),
    "unknown-key": ("[rate_limits.openai]\nrps = 5\n",
                    "rate_limits.openai.rps: unknown key (rpm, tpm)"),
    "zero": ("[rate_limits.openai]\nrpm = 0\n",
             "rate_limits.openai.rpm: expected a whole number of at least 1, got 0"),
    "text": ('[rate_limits.openai]\ntpm = "lots"\n',
             "rate_limits.openai.tpm: expected a whole number of at least 1, got 'lots'"),
    "float": ("[rate_limits.openai]\nrpm = 2.5\n",
              "rate_limits.openai.rpm: expected a whole number of at least 1, got 2.5"),
    "provider-not-table": ("[rate_limits]\nopenai = 500\n",
                           "rate_limits.openai: expected a table (rpm, tpm)"),
    "state-file-unusable": (
        '[rate_limits]\nstate_file = "/proc/no/such/rates.sqlite"\n[rate_limits.openai]\n',
        "rate_limits.state_file: cannot use /proc/no/such/rates.sqlite: No such file or "
        "directory",
    ),
    "state-file": ("[rate_limits]\nstate_file = 3\n",
                   "rate_limits.state_file: expected a file path"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_rate_limits_are_one_line_through_the_installed_cli(case: str, tmp_path: Path) -> None:
    exe = shutil.which("toolbench", path=str(Path(sys.executable).parent))
    assert exe is not None, "the toolbench console script is installed beside python"
    text, line = BAD[case]
    (tmp_path / "toolbench.toml").write_text(text, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "harness")}
    proc = subprocess.run(
        [exe, "run", "--models", "openai/x", "--api-base", "http://127.0.0.1:9",
         "--out", str(tmp_path / "r"), "--quiet"],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    expected = (2, "", f"error: toolbench.toml: {line}\n")
    assert (proc.returncode, proc.stdout, proc.stderr) == expected
    assert not (tmp_path / "r").exists()


def test_a_replay_only_run_installs_no_limits(tmp_path: Path) -> None:
    rate_limits.install(RateLimits({"openai": Limit(rpm=1)}), live=False)
    assert rate_limits._installed.limits == {}
