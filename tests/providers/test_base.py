"""The provider protocol: typed decisions, the kind registry, both kinds implement it."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from toolbench import codes
from toolbench.providers.kind_registry import Providers, api_class, kind_of, kinds
from toolbench.providers.litellm_api import LiteLLMAPI, litellm
from toolbench.providers.local_api import LocalAPI
from toolbench.providers.model_api import (
    Fault,
    Infra,
    ModelError,
    ProviderSettings,
    Retry,
    Unsupported,
)


@pytest.mark.parametrize(
    ("fault", "decision"),
    [
        (Fault(codes.INFRA_RATE_LIMITED, "m", True, 429, 7.0),
         Retry(codes.INFRA_RATE_LIMITED, 7.0)),
        (Fault(codes.INFRA_TIMEOUT, "m", True), Retry(codes.INFRA_TIMEOUT, None)),
        (Fault(codes.UNSUPPORTED, "m", False, 400, kind="unsupported", param="tools"),
         Unsupported(codes.UNSUPPORTED, "tools")),
        (Fault(codes.PROVIDER_CONTEXT_WINDOW, "m", False, 400, kind="model"),
         ModelError(codes.PROVIDER_CONTEXT_WINDOW)),
        (Fault(codes.INFRA_CLIENT_ERROR, "m", False, 401), Infra(codes.INFRA_CLIENT_ERROR)),
    ],
)  # fmt: skip
def test_a_fault_is_one_typed_decision(fault: Fault, decision: object) -> None:
    assert fault.decision() == decision


def _exc(name: str, **kw: Any) -> BaseException:
    lm = litellm()
    exc: BaseException = getattr(lm, name)(message="x", llm_provider="openai", model="m", **kw)
    return exc


def test_the_litellm_kind_classifies_by_exception_class() -> None:
    api = LiteLLMAPI(ProviderSettings())
    assert api.classify(_exc("Timeout")).decision() == Retry(codes.INFRA_TIMEOUT)
    body = {"message": "x", "type": "invalid_request_error", "param": "tools"}
    refused = litellm().BadRequestError("x", model="m", llm_provider="openai", body=body)
    assert api.classify(refused).decision() == Unsupported(codes.UNSUPPORTED, "tools")
    response = httpx.Response(401, request=httpx.Request("POST", "http://x"))
    assert api.classify(_exc("AuthenticationError", response=response)).decision() == Infra(
        codes.INFRA_CLIENT_ERROR
    )
    assert api.classify(_exc("ContextWindowExceededError")).decision() == ModelError(
        codes.PROVIDER_CONTEXT_WINDOW
    )


@pytest.mark.parametrize(
    ("model", "kind"),
    [("local/smollm2-135m", "local"), ("local/nope", "local"), ("anthropic/claude-x", "litellm"),
     ("openai/gpt-4o-mini", "litellm"), ("localhost/x", "litellm")],
)  # fmt: skip
def test_a_model_string_names_its_kind(model: str, kind: str) -> None:
    assert kind_of(model) == kind


def test_every_registered_kind_implements_the_protocol(tmp_path: Any) -> None:
    settings = ProviderSettings(log_dir=str(tmp_path))
    assert {"litellm", "local"} <= set(kinds())
    for kind in kinds():
        api = api_class(kind)(settings)
        assert api.name == kind
        for method in ("preflight", "ready", "run_params", "endpoint", "send", "cost",
                       "capabilities", "classify", "close"):  # fmt: skip
            assert callable(getattr(api, method))
    providers = Providers(settings)
    assert isinstance(providers.for_model("local/gemma3-270m"), LocalAPI)
    assert isinstance(providers.for_model("openai/x"), LiteLLMAPI)
    assert providers.for_model("openai/y") is providers.for_model("openai/x")  # one per kind
    providers.close()


def test_capabilities_come_from_litellms_tables() -> None:
    api = LiteLLMAPI(ProviderSettings())
    claude = api.capabilities("anthropic/claude-3-5-haiku-latest")
    assert claude.params is not None and "seed" not in claude.params
    assert "temperature" in claude.params
    assert claude.echo_extras is True  # Anthropic's blocks go back on the next turn
    gpt = api.capabilities("openai/gpt-4o-mini")
    assert gpt.params is not None and "seed" in gpt.params and gpt.echo_extras is False
    assert gpt.function_calling is True
    local = LocalAPI(ProviderSettings()).capabilities("local/smollm2-135m")
    assert local.function_calling is True and local.params is not None and "seed" in local.params


def test_the_local_kind_refuses_an_unknown_local_model() -> None:
    from toolbench.errors import UnknownNameError

    with pytest.raises(UnknownNameError, match="local model"):
        LocalAPI(ProviderSettings()).preflight("local/nope", "none")


def test_a_broken_plugin_kind_is_skipped_with_one_warning(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from importlib.metadata import EntryPoint

    from toolbench.providers import kind_registry as registry

    eps = [
        EntryPoint(
            "litellm", "toolbench.providers.litellm_api:LiteLLMAPI", registry.ENTRY_POINT_GROUP
        ),
        EntryPoint("local", "toolbench.providers.local_api:LocalAPI", registry.ENTRY_POINT_GROUP),
        EntryPoint("broken", "no_such_module_toolbench:Kind", registry.ENTRY_POINT_GROUP),
        EntryPoint(
            "notakind", "toolbench.providers.model_api:Endpoint", registry.ENTRY_POINT_GROUP
        ),
    ]
    monkeypatch.setattr(registry.KINDS, "find", lambda group: eps)
    registry.KINDS.reload()
    try:
        assert sorted(registry.kinds()) == ["litellm", "local"]
        warned = capsys.readouterr().err.splitlines()
        assert any("'broken'" in m and "ModuleNotFoundError" in m for m in warned)
        assert any("'notakind'" in m and "with send and name" in m for m in warned)
        assert kind_of("local/gemma3-270m") == "local"
    finally:
        registry.KINDS.reload()


def test_a_stale_install_without_the_builtin_kinds_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from toolbench.providers import kind_registry as registry

    monkeypatch.setattr(registry.KINDS, "find", lambda group: [])
    registry.KINDS.reload()
    try:
        with pytest.raises(
            registry.StaleInstallError,
            match=r"^provider kind litellm is not registered.*pip install -e \.$",
        ):
            registry.kinds()
    finally:
        monkeypatch.undo()
        registry.KINDS.reload()
