"""toolbench's own faults fail one trial (``harness_error``), never the run.

The fake server answers by the request (a weather question: the call; a joke: a joke), so
the runs keep their default concurrency."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.runner.conftest import GOOD_CALL, run_fake, trials_by_id
from toolbench.providers.fake import FakeServer, by_last_user
from toolbench.results import TrialResult
from toolbench.runner.drive import NAME_CAP, cassette_path, safe_name
from toolbench.store import load_results

BAD_SCHEMA_SCENARIO = """\
scenarios:
  - id: remote-ref
    tools:
      - name: get_weather
        description: Get the weather for a city.
        parameters:
          type: object
          properties:
            city: {$ref: "http://x/y"}
    messages:
      - {role: user, content: "Weather in Paris?"}
    expect:
      calls:
        - name: get_weather
          arguments: {city: Paris}
  - id: fine
    tools:
      - name: get_weather
        description: Get the weather for a city.
        parameters: {type: object, properties: {city: {type: string}}}
    messages:
      - {role: user, content: "Weather in Paris?"}
    expect:
      calls:
        - name: get_weather
          arguments: {city: Paris}
"""


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    with FakeServer(by_last_user({"Weather in Paris": GOOD_CALL, "joke": "A joke."})) as server:
        yield server


pytestmark = pytest.mark.usefixtures("openai_key")


def test_a_schema_that_crashed_scoring_fails_only_its_own_check(
    fake: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A remote ``$ref`` passed validate, then crashed scoring and ended the run.

    ``validate`` now refuses it (tests/cli/test_usage_errors.py); here the check is
    switched off, as for a scenario built in code, to show the run itself survives it:
    the tool's schema is reported invalid, nothing is fetched, the other trial is scored.
    """
    monkeypatch.setattr("toolbench.scenarios.loader.schema_problem", lambda _: None)
    scen = tmp_path / "bad.yaml"
    scen.write_text(BAD_SCHEMA_SCENARIO)
    assert run_fake(fake, tmp_path, scen) == 0
    by_id = trials_by_id(tmp_path / "run")
    assert by_id["fine"].status == "ok"
    bad = by_id["remote-ref"]
    assert bad.status == "ok" and bad.scores is not None
    assert bad.scores.get("args_schema_valid") is False
    assert "args.schema_invalid" in bad.scores.errors
    assert any("does not resolve" in r for r in bad.scores.reasons)


def test_a_scorer_crash_is_a_typed_harness_error(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*_: Any) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr("toolbench.runner.drive.score_trial", boom)
    assert run_fake(fake, tmp_path, scenario_file) == 3  # no trial measured
    results = load_results(tmp_path / "run")
    assert len(results) == 2
    for r in results:
        assert (r.status, r.error_code, r.error_type) == (
            "harness_error", "harness.scoring", "RecursionError",
        )  # fmt: skip
        assert r.infra_error == "RecursionError: maximum recursion depth exceeded"
        assert r.scores is None


def test_a_parser_crash_fails_its_trial_only(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolbench.formats.prompt_json import PromptJson

    real = PromptJson.parse_reply

    def parse(self: Any, reply: Any, tools: Any) -> Any:
        if "Paris" in reply.text:
            raise IndexError("list index out of range")
        return real(self, reply, tools)

    monkeypatch.setattr(PromptJson, "parse_reply", parse)
    assert run_fake(fake, tmp_path, scenario_file) == 0
    by_id = trials_by_id(tmp_path / "run")
    assert by_id["chat"].status == "ok"
    weather = by_id["weather"]
    assert (weather.status, weather.error_code, weather.error_type) == (
        "harness_error", "harness.error", "IndexError",
    )  # fmt: skip


def test_whatever_escapes_a_trial_still_writes_its_line(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*_: Any) -> TrialResult:
        raise KeyError("surprise")

    monkeypatch.setattr("toolbench.runner.schedule.run_trial", broken)
    assert run_fake(fake, tmp_path, scenario_file) == 3
    results = load_results(tmp_path / "run")
    assert sorted(r.scenario_id for r in results) == ["chat", "weather"]
    assert {(r.status, r.error_type) for r in results} == {("harness_error", "KeyError")}


def test_a_long_scenario_id_gets_a_safe_cassette_path(
    fake: FakeServer, tmp_path: Path, scenario_file: Path
) -> None:
    """The id became the file name: a 300-character one gave ENAMETOOLONG at the cassette
    save and ended the run. ``validate`` now caps ids at 128 characters; the longest
    allowed one is still cut to a short, hashed file name, and replays find it."""
    long_id = "w" * 128
    text = scenario_file.read_text().replace("id: weather", f"id: {long_id}")
    scenario_file.write_text(text)
    assert run_fake(fake, tmp_path, scenario_file) == 0
    by_id = trials_by_id(tmp_path / "run")
    assert by_id[long_id].status == "ok", by_id[long_id].infra_error
    (cas,) = (tmp_path / "cas" / "openai_fake" / "prompt-json").glob("w*.json")
    assert len(cas.name) <= NAME_CAP + len(".json")
    # Replays find it again.
    assert run_fake(fake, tmp_path, scenario_file, "--record", "none", out="replay") == 0
    assert trials_by_id(tmp_path / "replay")[long_id].status == "ok"


@pytest.mark.parametrize(
    ("text", "exact", "expected"),
    [
        ("weather-paris", False, "weather-paris"),  # safe ids keep their recorded paths
        ("local/smollm2-135m", True, "local_smollm2-135m"),  # model dirs as before
        ("prompt-json:shots=2", True, "prompt-json_shots_2"),
    ],
)
def test_safe_names_keep_existing_paths(text: str, exact: bool, expected: str) -> None:
    assert safe_name(text, exact=exact) == expected


def test_unsafe_or_long_names_are_cut_and_hashed_apart() -> None:
    a, b = safe_name("../../etc/passwd"), safe_name("etc/passwd")
    assert "/" not in a and not a.startswith(".") and a != b
    assert safe_name("..", exact=True) == "_"
    long_a, long_b = safe_name("x" * 300), safe_name("x" * 299)
    assert len(long_a) == len(long_b) == NAME_CAP and long_a != long_b
    path = cassette_path(Path("c"), "m" * 300, "f" * 300, "s" * 300, 2)
    assert all(len(p) <= NAME_CAP + len("__s2.json") for p in path.parts)
    assert json.dumps(str(path))  # a plain, printable path


def test_scoring_runs_off_the_event_loop_thread(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scenario's regex check may take its whole time bound: in a worker thread, the
    event loop (every other trial's I/O) goes on meanwhile."""
    import threading

    # Both scenarios with a pattern of the author's (else scored on the loop: quick).
    text = scenario_file.read_text(encoding="utf-8")
    answer = "      final_answer: {regex: 'x*'}\n"
    text = text.replace("arguments: {city: Paris}", "arguments: {city: {regex: 'Par.*'}}")
    text = text.replace("      no_call: true\n", "      no_call: true\n" + answer)
    scenario_file.write_text(text)

    from toolbench.scoring import score_trial

    threads: list[threading.Thread] = []

    def recording(*args: Any) -> Any:
        threads.append(threading.current_thread())
        return score_trial(*args)

    monkeypatch.setattr("toolbench.runner.drive.score_trial", recording)
    assert run_fake(fake, tmp_path, scenario_file) == 0
    assert {r.status for r in load_results(tmp_path / "run")} == {"ok"}
    assert len(threads) == 2
    assert threading.main_thread() not in threads
