"""``--model-param MODEL:key=value`` and ``toolbench.toml``'s ``[models."MODEL"]`` tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.secrets import forget_registered_secrets
from toolbench.errors import UserError
from toolbench.redaction import redact
from toolbench.runner.model_params import model_params, parse_model_param, read_config


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("anthropic/claude-x:temperature=1", ("anthropic/claude-x", "temperature", 1)),
        ("openai/o3:reasoning_effort=low", ("openai/o3", "reasoning_effort", "low")),
        ("x:max_tokens=256", ("x", "max_tokens", 256)),
        ('x:extra_headers={"X-A":"b"}', ("x", "extra_headers", {"X-A": "b"})),
        ('x:extra_body={"a": [1, "b=c"]}', ("x", "extra_body", {"a": [1, "b=c"]})),
        ("ollama/qwen3:8b:top_p=0.5", ("ollama/qwen3:8b", "top_p", 0.5)),
        ("x:stop=null", ("x", "stop", None)),
        ("x:user={not json", ("x", "user", "{not json")),
        ("x:user=", ("x", "user", "")),
    ],
)
def test_parse(text: str, want: tuple[str, str, Any]) -> None:
    assert parse_model_param(text) == want


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x:seed", "--model-param: 'x:seed' has no '=' (write MODEL:key=value)"),
        ("seed=1", "--model-param: 'seed=1' has no ':' (write MODEL:key=value)"),
        (":seed=1", "--model-param: ':seed=1' names no model (write MODEL:key=value)"),
        ("x:=1", "--model-param: 'x:=<redacted>' names no parameter (write MODEL:key=value)"),
    ],
)
def test_malformed(text: str, message: str) -> None:
    with pytest.raises(UserError) as err:
        parse_model_param(text)
    assert str(err.value) == message


def test_file_then_command_line(tmp_path: Path) -> None:
    toml = tmp_path / "toolbench.toml"
    toml.write_text(
        '[gate]\nper_cell = false\n[models."openai/a"]\ntemperature = 1\ntop_p = 0.5\n'
        '[models."openai/not-in-run"]\nseed = 3\n'
    )
    got = model_params(
        ["openai/a:top_p=0.9", "openai/b:max_tokens=8"], ["openai/a", "openai/b"], toml
    )
    assert got == {"openai/a": {"temperature": 1, "top_p": 0.9}, "openai/b": {"max_tokens": 8}}
    assert model_params([], ["openai/c"], tmp_path / "absent.toml") == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[models]\nx = 3\n", 'models."x": expected a table of parameters'),
        ("models = 3\n", "models: expected a table of models"),
        ("[models\n", "not valid TOML: Expected ']' at the end of a table declaration "
         "(at line 1, column 8)"),
        ('[models."openai/a"]\nmessages = []\n',
         "openai/a: 'messages' is set by toolbench, not a model parameter"),
    ],
)  # fmt: skip
def test_bad_file_names_it(tmp_path: Path, text: str, message: str) -> None:
    toml = tmp_path / "toolbench.toml"
    toml.write_text(text)
    with pytest.raises(UserError) as err:
        model_params([], ["openai/a"], toml)
    assert str(err.value) == f"{toml}: {message}"
    assert read_config(tmp_path / "none.toml") == {}


def test_header_values_and_credential_body_fields_are_registered_for_redaction() -> None:
    """Every extra_headers value is a secret (a gateway's X-Custom-Pass is named by no
    list), and so is every extra_body field whose name says credential, at any depth."""
    forget_registered_secrets()
    key, custom, client = "sk-ant-api03-secret-value-42", "pass-custom-77", "cs-planted-99"
    model_params(
        [
            f'anthropic/claude-x:extra_headers={{"x-api-key": "{key}",'
            f' "X-Custom-Pass": "{custom}"}}',
            f'anthropic/claude-x:extra_body={{"auth": {{"client_secret": "{client}"}},'
            ' "user_tag": "team-blue"}',
        ],
        ["anthropic/claude-x"],
        None,
    )
    assert redact(f"{key} {custom} {client} team-blue") == (
        "<redacted> <redacted> <redacted> team-blue"
    )
    forget_registered_secrets()


def test_parameters_join_the_asked_ones_and_capabilities_filter_them() -> None:
    """A user's temperature replaces the harness's 0; what the model does not take (o3:
    a temperature other than 1) is dropped and recorded; the rest is sent."""
    from toolbench.formats.base import RenderedRequest
    from toolbench.providers.model_api import Endpoint
    from toolbench.providers.turn_request import build_request

    rendered = RenderedRequest(messages=[{"role": "user", "content": "hi"}])
    params = {"temperature": 0.5, "reasoning_effort": "low", "max_completion_tokens": 64}
    req, record = build_request(Endpoint("openai/o3", model_params=params), rendered, 7)
    assert record.asked == {"temperature": 0.5, "seed": 7, **params}
    assert "temperature" in record.dropped and "temperature" not in req
    assert (req["reasoning_effort"], req["max_completion_tokens"]) == ("low", 64)
    assert set(record.sent) == {"seed", "reasoning_effort", "max_completion_tokens"}
    req, record = build_request(Endpoint("openai/gpt-4o", model_params={"temperature": 1}),
                                rendered, 7)  # fmt: skip
    assert req["temperature"] == 1 and record.dropped == {}


@pytest.mark.parametrize(
    "value",
    ["temperature=0.7", "temperature=2", "top_p=1", "max_tokens=256", "seed=7", "stop=[\"a\"]",
     "stop=END", "n=2", 'extra_headers={"X-A": "b"}', 'extra_body={"k": 1}',
     "logprobs=true", "custom_knob=anything"],
)  # fmt: skip
def test_values_that_fit_their_parameter_pass(value: str) -> None:
    """The other side of tests/cli/test_hostile_input.py's refusals (and a parameter
    toolbench knows no type of is passed through as given)."""
    key = value.partition("=")[0]
    got = model_params([f"openai/gpt-4o:{value}"], ["openai/gpt-4o"], None)
    assert got == {"openai/gpt-4o": {key: parse_model_param(f"m:{value}")[2]}}
    forget_registered_secrets()
