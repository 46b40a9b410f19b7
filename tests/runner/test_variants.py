"""Model variants ``MODEL@NAME``: the split rule (Vertex AI's own ``@``), the checks, and
a run where two variants of one model reach the provider under the bare name with their
own parameters, keep their names in results and cassettes, and replay offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runner.conftest import run_fake
from toolbench.errors import UserError
from toolbench.providers.fake import FakeServer
from toolbench.runner.model_params import api_bases, model_params
from toolbench.runner.variants import check_models, split_variant
from toolbench.store import load_results


@pytest.mark.parametrize(
    ("name", "want"),
    [
        ("openai/gpt-5-mini@low", ("openai/gpt-5-mini", "low")),
        ("openai/gpt-5-mini", ("openai/gpt-5-mini", None)),
        ("local/smollm2-135m@forced", ("local/smollm2-135m", "forced")),
        ("ollama/qwen3:8b@think", ("ollama/qwen3:8b", "think")),
        # Vertex AI versions are part of the model name.
        ("vertex_ai/claude-3-5-sonnet@20240620", ("vertex_ai/claude-3-5-sonnet@20240620", None)),
        ("vertex_ai/gemini-1.5-pro@001", ("vertex_ai/gemini-1.5-pro@001", None)),
        ("vertex_ai/claude-3-5-sonnet-v2@2024-10-22",
         ("vertex_ai/claude-3-5-sonnet-v2@2024-10-22", None)),
        ("vertex_ai/text-embedding@latest", ("vertex_ai/text-embedding@latest", None)),
        ("vertex_ai/gemini-1.5-pro@001@fast", ("vertex_ai/gemini-1.5-pro@001", "fast")),
        ("vertex_ai/claude-3-5-sonnet@20240620@v2", ("vertex_ai/claude-3-5-sonnet@20240620", "v2")),
        ("@low", ("@low", None)),
    ],
)  # fmt: skip
def test_split(name: str, want: tuple[str, str | None]) -> None:
    assert split_variant(name) == want


@pytest.mark.parametrize(
    ("models", "message"),
    [
        (["openai/a@low", "openai/a@low"],
         "--models: variant 'low' of openai/a is given twice; give each variant its own name"),
        (["openai/a@low", "openai/a@Low"],
         "--models: variant 'Low' of openai/a is given twice ('openai/a@low' and"
         " 'openai/a@Low'); give each variant its own name"),
        (["openai/a@"], "--models: 'openai/a@' has an '@' but no variant name (write MODEL@NAME)"),
        (["openai/a@lo w"],
         "--models: 'openai/a@lo w': variant name 'lo w' must start with a letter and hold"
         " only letters, digits, '.', '_' and '-' (at most 64)"),
    ],
)  # fmt: skip
def test_bad_variants(models: list[str], message: str) -> None:
    with pytest.raises(UserError) as err:
        check_models(models)
    assert str(err.value) == message


def test_same_variant_of_two_models_and_plain_repeats_pass() -> None:
    check_models(["openai/a@low", "openai/b@low", "openai/a", "openai/a"])


def test_variant_params_inherit_the_bare_models_table(tmp_path: Path) -> None:
    toml = tmp_path / "toolbench.toml"
    toml.write_text(
        '[models."openai/a"]\ntemperature = 1\nseed = 7\n[models."openai/a@hot"]\ntemperature = 2\n'
    )
    got = model_params(
        ["openai/a@low:reasoning_effort=low"], ["openai/a@low", "openai/a@hot"], toml
    )
    assert got == {
        "openai/a@low": {"temperature": 1, "seed": 7, "reasoning_effort": "low"},
        "openai/a@hot": {"temperature": 2, "seed": 7},
    }


def test_a_parameter_for_a_variant_not_in_the_run_is_refused() -> None:
    with pytest.raises(UserError) as err:
        model_params(["openai/a@high:seed=1"], ["openai/a@low"], None)
    assert str(err.value) == (
        "--model-param: 'openai/a@high:seed=1': variant 'high' of openai/a is not in"
        " --models (openai/a@low)"
    )


def test_variants_of_one_model_call_one_server() -> None:
    with pytest.raises(UserError) as err:
        model_params(["openai/a@x:api_base=http://h1/v1"], ["openai/a@x", "openai/a@y"], None)
    assert str(err.value) == (
        "--model-param: openai/a@x and openai/a@y call openai/a at two different api_base"
        " values; the variants of one model call one server"
    )
    same = ["openai/a@x:api_base=http://h1/v1", "openai/a@y:api_base=http://h1/v1"]
    params = model_params(same, ["openai/a@x", "openai/a@y"], None)
    assert api_bases(params)["openai/a"] == "http://h1/v1"


@pytest.mark.usefixtures("openai_key")
def test_variants_reach_the_bare_model_with_their_own_params(
    tmp_path: Path, scenario_file: Path
) -> None:
    models = "openai/fake@cold,openai/fake@hot"
    params = ["--model-param", "openai/fake@cold:temperature=0.1",
              "--model-param", "openai/fake@hot:temperature=1.5"]  # fmt: skip
    with FakeServer(default="No call.") as fake:
        assert run_fake(fake, tmp_path, scenario_file, *params, models=models) == 0
        sent = sorted((r.body["model"], r.body["temperature"]) for r in fake.received)
    # 2 variants x 2 scenarios, each request under the bare name with its own value.
    assert sent == [("fake", 0.1), ("fake", 0.1), ("fake", 1.5), ("fake", 1.5)]
    results = load_results(tmp_path / "run")
    assert sorted({r.model for r in results}) == ["openai/fake@cold", "openai/fake@hot"]
    for r in results:
        assert Path(r.cassette).parts[-3] == r.model.replace("/", "_")  # keeps its @
        assert Path(r.cassette).is_file()
    info = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert info["models"] == ["openai/fake@cold", "openai/fake@hot"]
    assert info["model_params"]["openai/fake@hot"] == {"temperature": 1.5}
    # No server: every trial answers from its variant's cassette.
    rc = run_fake(
        fake, tmp_path, scenario_file, *params, "--record", "none", models=models,
        out="replay", api_base="http://127.0.0.1:9/v1",
    )  # fmt: skip
    assert rc == 0
    assert {r.status for r in load_results(tmp_path / "replay")} == {"ok"}
