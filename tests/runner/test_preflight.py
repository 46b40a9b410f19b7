"""Preflight and exit status of ``toolbench run``: an unknown provider fails before the
first call, a keyless OpenAI-compatible server needs no key, a run that measured
nothing for a model or cell says so and exits 3, and echoed assistant messages carry
none of LiteLLM's own fields. The fake server answers by the request, so the runs keep
their default concurrency."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runner.conftest import MT_SCENARIO, run_fake
from toolbench.cli.app import run_cli
from toolbench.providers.fake import FakeServer, Fault, by_last_user, by_turn
from toolbench.runner.measured import EXIT_UNMEASURED
from toolbench.store import load_results

ADVICE = (
    "Prefix the model with a LiteLLM provider (openai/, anthropic/, gemini/, ollama_chat/, "
    "...; see https://docs.litellm.ai/docs/providers)"
)


@pytest.mark.parametrize(
    ("model", "line"),
    [
        ("foo/bar", f"error: --models: unknown provider 'foo' in 'foo/bar'. {ADVICE}\n"),
        (
            "antropic/claude-3-5-haiku-latest",
            "error: --models: unknown provider 'antropic' in 'antropic/claude-3-5-haiku-latest'."
            f" Did you mean 'anthropic/claude-3-5-haiku-latest'? {ADVICE}\n",
        ),
        ("no-such-model", f"error: --models: cannot tell the provider of 'no-such-model'. "
                          f"{ADVICE}\n"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("record", ["new", "none"])
def test_an_unknown_provider_fails_before_the_first_call(
    model: str, line: str, record: str, tmp_path: Path, scenario_file: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    with FakeServer() as fake:
        rc = run_cli([
            "run", "--models", f"openai/fake,{model}", "--formats", "xml",
            "--scenarios", str(scenario_file), "--api-base", fake.base_url,
            "--out", str(tmp_path / "run"), "--cassettes", str(tmp_path / "cas"),
            "--quiet", "--no-report", "--record", record,
        ])  # fmt: skip
        assert fake.received == []
    assert rc == 2
    assert capsys.readouterr().err == line
    assert not (tmp_path / "run").exists()


def test_a_keyless_openai_compatible_server_needs_no_key(
    tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """vLLM, llama.cpp and LM Studio take no key: none is demanded, a placeholder is sent."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    call = '<tool_call name="get_weather">{"city": "Paris"}</tool_call>'
    with FakeServer(by_last_user({"Paris": call}, default="A joke.")) as fake:
        rc = run_cli([
            "run", "--models", "openai/x", "--formats", "xml", "--scenarios", str(scenario_file),
            "--api-base", fake.base_url, "--out", str(tmp_path / "run"),
            "--cassettes", str(tmp_path / "cas"), "--quiet", "--no-report",
        ])  # fmt: skip
    assert rc == 0
    assert {r.status for r in load_results(tmp_path / "run")} == {"ok"}
    auths = {{k.lower(): v for k, v in r.headers.items()}["authorization"] for r in fake.received}
    assert auths == {"Bearer toolbench-no-key"}


def test_a_provider_that_needs_a_key_still_demands_it(
    tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    rc = run_cli([
        "run", "--models", "anthropic/claude-3-5-haiku-latest", "--formats", "xml",
        "--scenarios", str(scenario_file), "--api-base", "http://127.0.0.1:9/v1",
        "--out", str(tmp_path / "run"), "--quiet", "--no-report",
    ])  # fmt: skip
    assert rc == 2
    assert "needs ANTHROPIC_API_KEY" in capsys.readouterr().err


def _run(fake: FakeServer, tmp: Path, scen: Path, models: str, formats: str) -> int:
    return run_fake(fake, tmp, scen, models=models, formats=formats)


def test_a_cell_without_a_measured_trial_exits_3_and_says_why(
    tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")
    refused = Fault(400, body=b'{"error": {"message": "no", "param": "tools"}}')
    # xml: two ok trials; native: both refused (the server names `tools`).
    with FakeServer(lambda request: refused if request.get("tools") else "hello") as fake:
        rc = _run(fake, tmp_path, scenario_file, "openai/fake", "xml,native")
    assert rc == EXIT_UNMEASURED == 3
    out = capsys.readouterr().out
    assert "not measured (no ok trial; exit code 3):" in out
    assert "  openai/fake / native: 2 trial(s), 2 unsupported (provider.unsupported): " in out
    assert "openai/fake / xml:" not in out


def test_a_model_without_a_measured_trial_is_named_once(
    tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")
    with FakeServer(default=Fault(401)) as fake:
        rc = _run(fake, tmp_path, scenario_file, "openai/fake", "xml,react")
    assert rc == 3
    out = capsys.readouterr().out
    assert "  openai/fake: 4 trial(s), 4 infra_error (infra.client_error): " in out


def test_a_fully_measured_run_exits_0_whatever_the_scores(
    tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")
    # weather fails its score; chat is an infra error
    with FakeServer(by_last_user({"Paris": "no call at all", "joke": Fault(401)})) as fake:
        rc = _run(fake, tmp_path, scenario_file, "openai/fake", "xml")
    assert rc == 0
    statuses = sorted(r.status for r in load_results(tmp_path / "run"))
    assert statuses == ["infra_error", "ok"]
    assert "not measured" not in capsys.readouterr().out


def test_the_echoed_assistant_message_carries_no_provider_specific_fields(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mistral's API answers 422 to an assistant message with fields it does not know."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")
    scen = tmp_path / "mt.yaml"
    scen.write_text(MT_SCENARIO)
    call = {"name": "get_weather", "arguments": {"city": "Lisbon"}}
    # `refusal` is a field LiteLLM moves into the message's provider_specific_fields.
    first = {"content": None, "tool_calls": [call], "extra": {"refusal": None}}
    with FakeServer(by_turn([first, "It is 23 degrees."])) as fake:
        assert _run(fake, tmp_path, scen, "openai/fake", "native") == 0
    (result,) = load_results(tmp_path / "run")
    assert "provider_specific_fields" in result.turns[0].reply.raw_message  # as LiteLLM gave it
    second = fake.received[1].body["messages"]
    assistant = next(m for m in second if m["role"] == "assistant")
    assert assistant["tool_calls"][0]["function"]["name"] == "get_weather"
    assert all("provider_specific_fields" not in m for m in second)
    assert all("provider_specific_fields" not in m for m in result.turns[1].request["messages"])
