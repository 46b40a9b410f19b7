"""One writer per run; duplicated trials counted once; the run budget; old lines still read."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.runner.conftest import GOOD_CALL, run_fake
from tests.support.fake_openai import FakeOpenAI
from toolbench.cli.app import run_cli
from toolbench.report.metrics import aggregate, cell_map, load_table
from toolbench.results import TrialResult
from toolbench.runner.lock import RunLock
from toolbench.store import load_results


def _run(fake: FakeOpenAI, tmp: Path, scen: Path, *extra: str) -> int:
    return run_fake(fake, tmp, scen, "--concurrency", "1", *extra)


pytestmark = pytest.mark.usefixtures("openai_key")


def test_a_second_writer_is_refused_naming_the_holder(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.enqueue(GOOD_CALL, "A joke.")
    assert _run(fake, tmp_path, scenario_file) == 0
    run_dir = tmp_path / "run"
    # Another process holds the run (as a concurrent `--resume` would).
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys, time
            sys.path.insert(0, {str(Path(__file__).resolve().parents[2] / "harness")!r})
            from pathlib import Path
            from toolbench.runner.lock import RunLock
            lock = RunLock(Path({str(run_dir)!r}))
            lock.acquire()
            print("locked", flush=True)
            time.sleep(30)
        """)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        capsys.readouterr()
        assert _run(fake, tmp_path, scenario_file, "--resume") == 2
        err = capsys.readouterr().err
        info = json.loads((run_dir / ".lock").read_text())
        assert info["pid"] == holder.pid and info["host"] == socket.gethostname()
        assert err == (
            f"error: --out: {run_dir} is being written by another toolbench run "
            f"(pid {holder.pid} on {info['host']} since {info['started_at']}); "
            "wait for it to finish or stop it\n"
        )
    finally:
        holder.kill()
        holder.wait()
    # The kernel dropped the lock with the process: the run can be resumed now.
    assert _run(fake, tmp_path, scenario_file, "--resume") == 0
    assert len(load_results(run_dir)) == 2


def test_the_lock_is_released_after_a_run_and_on_failure(tmp_path: Path) -> None:
    lock = RunLock(tmp_path)
    lock.acquire()
    lock.release()
    again = RunLock(tmp_path)
    again.acquire()  # not refused
    again.release()


def test_duplicated_trials_count_once_with_a_warning(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two concurrent resumes wrote 136 lines for 102 trials; reports counted them all."""
    fake.enqueue(GOOD_CALL, "A joke.")
    assert _run(fake, tmp_path, scenario_file) == 0
    res = tmp_path / "run" / "results.jsonl"
    lines = res.read_text().splitlines(keepends=True)
    res.write_text("".join([*lines, *lines, lines[0]]))
    capsys.readouterr()
    table = load_table(tmp_path / "run")
    assert len(table.df) == 2 and table.duplicates == 3
    assert capsys.readouterr().err == (
        f"warning: {res}: 3 duplicated trial(s) counted once (line 3, 4, 5)\n"
    )
    overall = cell_map(aggregate(table.df))[("overall", "overall")]
    assert overall.values["n_trials"] == 2
    assert run_cli(["gate", str(tmp_path / "run"), "--min", "call_accuracy=1"]) == 0


def test_harness_errors_are_counted_apart_from_infra_errors(tmp_path: Path) -> None:
    base = {"run_id": "r", "toolbench_version": "0", "model": "m", "format": "xml"}
    rows = [
        TrialResult(**base, scenario_id="a", status="harness_error", error_code="harness.scoring"),
        TrialResult(**base, scenario_id="b", status="infra_error", error_code="infra.timeout"),
        TrialResult(**base, scenario_id="c", status="cassette_unreadable"),
        TrialResult(**base, scenario_id="d", status="ok"),
    ]
    (tmp_path / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in rows))
    table = load_table(tmp_path)
    cell = cell_map(aggregate(table.df))[("m", "xml")]
    assert cell.counts["harness_error_rate"] == (1, 4)
    assert cell.counts["infra_error_rate"] == (2, 4)
    assert list(table.df["errors"]) == [
        "harness.scoring", "infra.timeout", "cassette.unreadable", "",
    ]  # fmt: skip


def test_results_written_before_the_new_fields_still_read() -> None:
    old = (
        '{"schema_version": 1, "run_id": "r", "toolbench_version": "0.1.0", "model": "m", '
        '"format": "xml", "scenario_id": "s", "status": "infra_error", "infra_error": "x"}'
    )
    r = TrialResult.model_validate_json(old)
    assert (r.attempts, r.notes, r.error_code, r.error_type) == ([], [], None, None)


def test_a_budget_stops_starting_trials_and_resume_completes_them(
    tmp_path: Path, scenario_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAI(delay_s=1.0) as slow:
        slow.enqueue(GOOD_CALL, "A joke.")
        capsys.readouterr()
        assert _run(slow, tmp_path, scenario_file, "--budget", "0.5") == 0
        err = capsys.readouterr().err
        assert len(load_results(tmp_path / "run")) == 1
        assert err == (
            "warning: --budget of 0.5s used up: 1 trial(s) not run; "
            f"complete them with --resume --out {tmp_path / 'run'}\n"
        )
        assert _run(slow, tmp_path, scenario_file, "--resume") == 0
        results = load_results(tmp_path / "run")
        assert sorted(r.scenario_id for r in results) == ["chat", "weather"]
        assert len(slow.received) == 2
        info = json.loads((tmp_path / "run" / "run.json").read_text())
        assert info["params"]["budget_s"] == 0.5


def test_run_json_and_results_are_not_written_by_a_refused_run(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path
) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    lock = RunLock(run_dir)
    lock.acquire()
    try:
        assert _run(fake, tmp_path, scenario_file, "--resume") == 2
    finally:
        lock.release()
    assert sorted(os.listdir(run_dir)) == [".lock"]
    assert fake.received == []


MT3 = """\
id: mt3
tools:
  - name: get_weather
    description: Get the weather for a city.
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
messages:
  - {role: user, content: "Temperature in Lisbon, then in Porto?"}
expect:
  max_turns: 3
  rounds:
    - calls:
        - {name: get_weather, arguments: {city: Lisbon}, result: {temperature: 23}}
    - calls:
        - {name: get_weather, arguments: {city: Porto}, result: {temperature: 21}}
  final_answer: {contains: ["23"]}
"""
FIVE_MB = 5 * 1024 * 1024


def test_a_5mb_reply_is_stored_once_and_capped_but_scored_in_full(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    """A 5 MB reply made a 21 MB result line (80 MB for three turns)."""
    scen = tmp_path / "mt3.yaml"
    scen.write_text(MT3)
    filler = "lorem ipsum " * (FIVE_MB // 12)

    def call(city: str) -> dict[str, object]:
        tool_call = {"name": "get_weather", "arguments": {"city": city}}
        return {"content": filler, "tool_calls": [tool_call]}

    fake.enqueue(call("Lisbon"), call("Porto"), filler + " It is 23 degrees in Lisbon.")
    rc = run_cli([
        "run", "--models", "openai/fake", "--formats", "native", "--scenarios", str(scen),
        "--api-base", fake.base_url, "--out", str(tmp_path / "run"),
        "--cassettes", str(tmp_path / "cas"), "--quiet", "--no-report",
    ])  # fmt: skip
    assert rc == 0
    line = (tmp_path / "run" / "results.jsonl").read_bytes()
    assert len(line) < 4 * 1024 * 1024, len(line)
    (result,) = load_results(tmp_path / "run")
    assert len(result.turns) == 3
    # The answer sits past the stored cut: only a scorer that saw the whole reply finds it.
    assert result.scores is not None and result.scores.get("final_answer_ok") is True
    last = result.turns[-1].reply.text
    assert last.endswith(f"of {len(filler) + 28} characters; full text in the cassette]")
    # The cassette keeps every byte.
    (cas,) = (tmp_path / "cas").rglob("mt3.json")
    assert cas.stat().st_size > 3 * FIVE_MB


def test_cassettes_are_saved_atomically_with_ordinary_permissions(tmp_path: Path) -> None:
    from toolbench.cassettes import recording, use_cassette

    target = tmp_path / "d" / "c.json"
    with use_cassette(target, "new") as tc:  # what a trial that recorded one exchange saves
        tc.data.exchanges.append(recording.RecordedExchange(
            request=recording.RecordedRequest(method="GET", uri="http://h/"),
            response=recording.RecordedResponse(status=200, body={}),
        ))  # fmt: skip
        tc.dirty = True
    assert os.listdir(target.parent) == ["c.json"]  # no temporary file left
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask
