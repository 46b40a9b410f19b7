"""``--formats auto``, ``--formats-from`` and fallback compositions (``native|xml``),
end to end against the fake OpenAI-compatible server: what the trials, ``run.json``,
resume, replay, rescore and the report see. The server answers by the request (the
scenario and the format asking), so the runs keep their default concurrency."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.runner.conftest import run_fake
from toolbench.cli.app import run_cli
from toolbench.metrics.metric_registry import get_metric
from toolbench.providers.fake import FakeServer, Reply, last_user
from toolbench.report.metrics import aggregate, load_table
from toolbench.runner.rescore import rescore_run
from toolbench.scenarios.loader import load_scenarios
from toolbench.store import load_results

XML_CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
JSON_CALL = '{"tool": "get_weather", "arguments": {"city": "Paris"}}'


def _respond(request: dict[str, Any]) -> Reply:
    """No call to a joke; to the weather question: an XML call in the text of a native
    reply (the fallback's case), a JSON call to prompt-json, nothing usable to xml."""
    if "joke" in last_user(request):
        return "No."
    if request.get("tools"):
        return {"content": "Sure. " + XML_CALL}
    system = str([m for m in request["messages"] if m.get("role") == "system"])
    return "Nothing." if "<tool_call" in system else JSON_CALL


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    with FakeServer(_respond) as server:
        yield server


pytestmark = pytest.mark.usefixtures("openai_key")


def _run(fake: FakeServer, tmp: Path, scen: Path, out: str, *extra: str) -> int:
    return run_fake(fake, tmp, scen, *extra, out=out, models=None, formats=None)


def test_auto_resolves_per_model_warns_once_and_resumes(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    models = "openai/qwen2.5-7b-instruct,openai/mystery-1,openai/mystery-2"
    args = ("--models", models, "--formats", "auto,native")
    assert _run(fake, tmp_path, scenario_file, "run", *args) == 0
    err = capsys.readouterr().err
    warning = (
        "warning: --formats auto: no known model family for openai/mystery-1, "
        "openai/mystery-2; using the default prompt-json"
    )
    assert err.count("warning:") == 1 and warning in err
    got = {(r.model, r.format) for r in load_results(tmp_path / "run")}
    assert got == {
        ("openai/qwen2.5-7b-instruct", "xml"), ("openai/qwen2.5-7b-instruct", "native"),
        ("openai/mystery-1", "prompt-json"), ("openai/mystery-1", "native"),
        ("openai/mystery-2", "prompt-json"), ("openai/mystery-2", "native"),
    }  # fmt: skip
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["auto_formats"] == {
        "openai/qwen2.5-7b-instruct": "xml",
        "openai/mystery-1": "prompt-json",
        "openai/mystery-2": "prompt-json",
    }
    assert info["formats"] == ["xml", "native", "prompt-json"]
    sent = len(fake.received)
    # Resume resolves auto the same way: nothing is repeated.
    assert _run(fake, tmp_path, scenario_file, "run", *args, "--resume") == 0
    assert len(fake.received) == sent
    assert len(load_results(tmp_path / "run")) == 12


def test_a_run_without_auto_writes_no_auto_field(
    fake: FakeServer, tmp_path: Path, scenario_file: Path
) -> None:
    assert _run(fake, tmp_path, scenario_file, "run", "--models", "openai/x") == 0
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert "auto_formats" not in info


def test_fallback_rescues_native_reply_and_round_trips(
    fake: FakeServer, tmp_path: Path, scenario_file: Path
) -> None:
    spec = "native|xml"
    args = ("--models", "openai/fake", "--formats", spec)
    assert _run(fake, tmp_path, scenario_file, "run", *args) == 0
    # The primary's request: the native tools parameter.
    (primary,) = [r.body for r in fake.received if "Paris" in last_user(r.body)]
    assert primary["tools"][0]["function"]["name"] == "get_weather"
    trials = {r.scenario_id: r for r in load_results(tmp_path / "run")}
    weather, chat = trials["weather"], trials["chat"]
    assert weather.format == spec and chat.format == spec
    assert weather.scores is not None and chat.scores is not None
    assert weather.scores.get("call_accuracy") is True
    assert weather.scores.get("fallback_rescued") is True
    assert weather.turns[0].parsed.via == "fallback"
    assert weather.turns[0].parsed.content == "Sure."
    assert (
        chat.scores.get("fallback_rescued") is False and chat.scores.get("no_call_correct") is True
    )
    assert json.loads((tmp_path / "run" / "run.json").read_text())["formats"] == [spec]

    cells = {c.label: c for c in aggregate(load_table(tmp_path / "run").df)}
    cell = cells[f"openai/fake / {spec}"]
    assert cell.values["fallback_rescue_rate"] == 0.5 and cell.counts["fallback_rescue_rate"] == (
        1,
        2,
    )
    assert get_metric("fallback_rescue_rate").flag == "fallback_rescued"

    # Replay and rescore read the composed spec back and score the same.
    assert _run(fake, tmp_path, scenario_file, "replay", *args, "--record", "none") == 0
    again = {r.scenario_id: r for r in load_results(tmp_path / "replay")}
    assert again["weather"].scores == weather.scores
    summary = rescore_run(tmp_path / "run", tmp_path / "rescored", load_scenarios([scenario_file]))
    assert (summary.rescored, summary.scores_changed) == (2, 0)


def test_trials_of_plain_formats_store_no_fallback_flag(
    fake: FakeServer, tmp_path: Path, scenario_file: Path
) -> None:
    assert _run(fake, tmp_path, scenario_file, "run", "--models", "openai/x") == 0
    line = (tmp_path / "run" / "results.jsonl").read_text().splitlines()[0]
    assert "fallback_rescued" not in line and '"via"' not in line


def test_recommend_yaml_feeds_formats_from(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("--models", "openai/fake", "--formats", "prompt-json,xml")
    assert _run(fake, tmp_path, scenario_file, "run", *args) == 0
    path = tmp_path / "cfg" / "formats.yaml"
    argv = ["recommend", str(tmp_path / "run"), "--to", "yaml", "-o", str(path)]
    # Two trials a format cannot separate them: no recommendation, no file ...
    assert run_cli(argv) == 2
    assert "no model has a recommendation" in capsys.readouterr().err
    assert not path.exists()
    # ... unless a broken tie's pick is asked for knowingly.
    assert run_cli([*argv, "--break-ties"]) == 0
    assert capsys.readouterr().out.strip().endswith(f"wrote {path}")
    assert path.read_text() == "models:\n  openai/fake:\n    tool_format: prompt-json\nversion: 1\n"
    sent = len(fake.received)
    assert _run(fake, tmp_path, scenario_file, "again", "--formats-from", str(path)) == 0
    assert {(r.model, r.format) for r in load_results(tmp_path / "again")} == {
        ("openai/fake", "prompt-json")
    }
    assert len(fake.received) == sent  # replayed from the first run's cassettes


HERMES_TEMPLATE = "{% for m in messages %}<|im_start|>{{ m.role }}{% endfor %}<tool_call>"


def test_auto_uses_the_chat_template_the_server_reports_when_recording(
    fake: FakeServer, tmp_path: Path, scenario_file: Path
) -> None:
    """A fine-tune's name says nothing; llama-server's /props template says Hermes."""
    fake.props = {"chat_template": HERMES_TEMPLATE, "chat_template_caps": {"supports_tools": True}}
    args = ("--models", "openai/my-finetune", "--formats", "auto")
    assert _run(fake, tmp_path, scenario_file, "run", *args) == 0
    assert {r.format for r in load_results(tmp_path / "run")} == {"xml"}
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["auto_formats"] == {"openai/my-finetune": "xml"}
    # A replay asks no server: the name alone decides (the default, for this name).
    fake.props = None
    out = tmp_path / "replay"
    assert _run(fake, tmp_path, scenario_file, "replay", *args, "--record", "none") in (0, 3)
    assert json.loads((out / "run.json").read_text())["auto_formats"] == {
        "openai/my-finetune": "prompt-json"
    }
