"""The command printed for a missing cassette records that very trial: a variant's
``--model-param``s and the format's options go with it, so running it sends the trial's
request (before, a variant's command lacked its parameters and recorded something else).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.runner.conftest import run_fake
from toolbench.cassettes.use import record_command
from toolbench.cli.app import run_cli
from toolbench.providers.fake import FakeServer, by_last_user
from toolbench.runner.model_params import parse_model_param
from toolbench.store import load_results

pytestmark = pytest.mark.usefixtures("openai_key")

CALL = {"content": None, "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}

PARAM_TEXTS = [
    ("word", "low", "m@v:k=low"),
    ("text-that-reads-as-json", "1", 'm@v:k="1"'),
    ("number", 0.5, "m@v:k=0.5"),
    ("bool", False, "m@v:k=false"),
    ("object", {"X-Team": "a b"}, 'm@v:k={"X-Team":"a b"}'),
]


@pytest.mark.parametrize(("value", "text"), [p[1:] for p in PARAM_TEXTS],
                         ids=[p[0] for p in PARAM_TEXTS])  # fmt: skip
def test_a_parameter_is_written_as_model_param_reads_it_back(value: Any, text: str) -> None:
    command = record_command("m@v", "native", "s", params={"k": value})
    (given,) = [a for a in shlex.split(command) if a.startswith("m@v:")]
    assert given == text
    assert parse_model_param(given) == ("m@v", "k", value)


def test_the_api_base_is_given_once_as_api_base() -> None:
    command = record_command("m@v", "native", "s", "http://h:1/v1", None,
                             {"api_base": "http://h:1/v1", "seed": 3})  # fmt: skip
    assert command == (
        "toolbench run --models m@v --formats native --scenarios s --model-param m@v:seed=3"
        " --api-base http://h:1/v1 --record new"
    )


def test_the_sample_and_the_conversation_options_go_with_it() -> None:
    """Sample 2's seed is recorded by a run of three samples (the first two replayed when
    recorded); a cap on turns changes the conversation, so it is given too."""
    command = record_command("m", "xml", "s", None, None, None, 2, ["--max-turns", "2"])
    assert command == (
        "toolbench run --models m --formats xml --scenarios s --samples 3 --max-turns 2"
        " --record new"
    )


def test_the_printed_command_records_the_variants_trial(
    tmp_path: Path, scenario_file: Path
) -> None:
    variant = "openai/fake@warm"
    fmt = "native:parallel=false,tool_choice=required"
    with FakeServer(by_last_user({"Weather in Paris?": CALL}, default="A joke.")) as fake:
        extra = ("--model-param", f"{variant}:temperature=0.7", "--model-param",
                 f"{variant}:max_tokens=64", "--record", "none", "--samples", "2",
                 "--max-turns", "2")  # fmt: skip
        assert run_fake(fake, tmp_path, scenario_file, *extra, models=variant, formats=fmt) == 3
        weather = next(r for r in load_results(tmp_path / "run")
                       if r.scenario_id == "weather" and r.sample == 1)  # fmt: skip
        assert weather.status == "cassette_missing" and weather.infra_error is not None
        command = weather.infra_error.split("record it with: ", 1)[1]
        argv = shlex.split(command)
        assert argv[:2] == ["toolbench", "run"]
        assert f"{variant}:temperature=0.7" in argv and f"{variant}:max_tokens=64" in argv
        assert argv[argv.index("--samples") + 1] == "2"
        assert argv[argv.index("--max-turns") + 1] == "2"
        assert argv[argv.index("--formats") + 1] == fmt
        # The scenario is named by its id; this test's scenario lives in a file (with one
        # more scenario, which the command's run records too).
        argv[argv.index("--scenarios") + 1] = str(scenario_file)
        assert run_cli([*argv[1:], "--out", str(tmp_path / "rec"), "--quiet", "--no-report"]) == 0
        asked = [r.body for r in fake.received
                 if r.body["messages"][-1]["content"] == "Weather in Paris?"]  # fmt: skip
        assert len(asked) == 2  # samples 0 and 1 of the weather scenario
        sent = asked[1]
        assert (sent["temperature"], sent["max_tokens"]) == (0.7, 64)
        assert (sent["tool_choice"], sent["parallel_tool_calls"]) == ("required", False)
    # The first run, replayed again with the server gone, finds the trial recorded.
    again = (*extra, "--scenarios", str(scenario_file))
    code = run_cli([
        "run", "--models", variant, "--formats", fmt, "--api-base", fake.base_url,
        "--out", str(tmp_path / "again"), "--cassettes", str(tmp_path / "cas"),
        "--quiet", "--no-report", *again,
    ])  # fmt: skip
    rows = {(r.scenario_id, r.sample): r.status for r in load_results(tmp_path / "again")}
    assert rows[("weather", 0)] == rows[("weather", 1)] == "ok", rows
    assert code in (0, 3)  # the chat scenario was not recorded by the printed command
