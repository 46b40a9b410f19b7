"""Per-model request parameters: ``--model-param MODEL:key=value`` and ``toolbench.toml``.

A team compares providers with the settings it would ship: ``temperature = 1`` for a
model that takes nothing else, ``reasoning_effort = "low"``, a ``max_tokens``, extra
headers or body. They join the parameters toolbench asks for on each request (and
override its ``temperature=0``), so :func:`~toolbench.providers.capabilities.filter_params`
records them as asked, sent or dropped like the harness's own.

Every fault is the user's and is found before the first call, in one line naming the
option (or file) and exit 2: a text without ``:`` or ``=``, a model not in the run, a
parameter toolbench sets itself, one that LiteLLM's tables say the model's provider
never takes, or a value outside what the parameter takes (:mod:`.param_values`). Every
``extra_headers`` value and credential-named ``extra_body`` field is registered as a
secret, so no byte toolbench writes (run.json, results, cassettes) holds them, and no
error line shows them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolbench.errors import UserError
from toolbench.providers.capabilities import provider_of
from toolbench.providers.lazy_litellm import litellm
from toolbench.providers.local_models import LOCAL_MODELS, is_local
from toolbench.redaction import register_url_secrets
from toolbench.runner.param_values import (
    base_url_problem,
    register_param_secrets,
    shown_text,
    why_not,
)
from toolbench.runner.variants import bare_model, split_variant
from toolbench.toml_file import CONFIG_FILE as CONFIG_FILE
from toolbench.toml_file import read_toml

OPTION = "--model-param"
RESERVED = frozenset({
    "model", "messages", "tools", "tool_choice", "functions", "function_call", "stream",
    "base_url", "api_key", "timeout", "request_timeout", "max_retries",
})  # fmt: skip
"""Set by toolbench itself (the request's content, where it goes, how long it waits).
``api_base`` is the exception: a model's own server (``--api-base`` for one model) is
taken out of its parameters by :func:`api_bases` and given to its provider kind."""
API_BASE = "api_base"

ModelParams = dict[str, dict[str, Any]]


def parse_value(text: str) -> Any:
    """JSON where it parses (``1``, ``true``, ``{"X-A": "b"}``), else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_model_param(text: str) -> tuple[str, str, Any]:
    """``MODEL:key=value`` as ``(model, key, value)``. The model may hold ``:``
    (``ollama/qwen3:8b:temperature=1``): the key is what follows the last ``:`` before
    the ``=``."""
    head, eq, value = text.partition("=")
    if not eq:
        raise UserError(f"{OPTION}: '{text}' has no '=' (write MODEL:key=value)")
    model, colon, key = head.rpartition(":")
    if not colon:
        raise UserError(f"{OPTION}: '{shown_text(text)}' has no ':' (write MODEL:key=value)")
    model, key = model.strip(), key.strip()
    if not model:
        raise UserError(f"{OPTION}: '{shown_text(text)}' names no model (write MODEL:key=value)")
    if not key:
        raise UserError(
            f"{OPTION}: '{shown_text(text)}' names no parameter (write MODEL:key=value)"
        )
    return model, key, parse_value(value.strip())


def read_config(path: Path) -> ModelParams:
    """The ``[models."MODEL"]`` tables of a TOML file (none when the file is absent)."""
    data = read_toml(path)
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise UserError(f"{path}: models: expected a table of models")
    out: ModelParams = {}
    for model, params in models.items():
        if not isinstance(params, dict):
            raise UserError(f'{path}: models."{model}": expected a table of parameters')
        out[model] = dict(params)
    return out


def model_params(
    given: Sequence[str], models: Sequence[str], config: Path | None = CONFIG_FILE
) -> ModelParams:
    """Each run model's parameters: ``config``'s, then ``given`` over them; checked.

    Models the file names that are not in the run are ignored (one file serves many
    runs); a ``--model-param`` for a model not in the run is refused. A variant
    (``MODEL@NAME``, :mod:`.variants`) starts from the file's table of its bare model,
    its own table over it.
    """
    file = read_config(config) if config is not None else {}
    out: ModelParams = {}
    for m in models:
        inherited = {**file.get(bare_model(m), {}), **file.get(m, {})}
        if inherited:
            out[m] = inherited
    for params in file.values():
        register_param_secrets(params)  # before any line that could show them
    for text in given:
        model, key, value = parse_model_param(text)
        register_param_secrets({key: value})
        if model not in models:
            bare, variant = split_variant(model)
            what = f"variant '{variant}' of {bare}" if variant else f"model '{model}'"
            raise UserError(
                f"{OPTION}: '{shown_text(text)}': {what} is not in --models ({', '.join(models)})"
            )
        out.setdefault(model, {})[key] = value
    where = {m: str(config) for m in out} if config is not None else {}
    for model, params in out.items():
        for key, value in params.items():
            _check_key(model, key, OPTION if _from_cli(given, model, key) else where[model])
            why = why_not(key, value)
            if why is not None:
                source = OPTION if _from_cli(given, model, key) else where[model]
                raise UserError(f"{source}: {model}: {why}")
        if API_BASE in params:
            _check_api_base(model, params[API_BASE], OPTION)
    _check_variant_bases(out, models)
    return {m: p for m, p in out.items() if p}


def _check_variant_bases(params: ModelParams, models: Sequence[str]) -> None:
    """The variants of one model call one server: the provider kind is told where a
    model's requests go by its bare name (a second server is a second provider prefix)."""
    seen: dict[str, tuple[str, Any]] = {}
    for model in models:
        bare, url = bare_model(model), params.get(model, {}).get(API_BASE)
        first, first_url = seen.setdefault(bare, (model, url))
        if url != first_url:
            raise UserError(
                f"{OPTION}: {first} and {model} call {bare} at two different api_base"
                " values; the variants of one model call one server"
            )


def _check_api_base(model: str, value: Any, where: str) -> None:
    """A model's ``api_base`` is an http(s) URL with a host; its credentials are secrets."""
    text = value if isinstance(value, str) else ""
    register_url_secrets(text)
    problem = base_url_problem(text)
    if problem is None:
        return
    if problem[0] == "query":
        raise UserError(
            f"{where}: {model}: api_base has a query string or fragment (give the base URL"
            " alone; a key goes in the provider's environment variable)"
        )
    raise UserError(f"{where}: {model}: api_base must be an http:// or https:// URL")


def api_bases(params: ModelParams) -> dict[str, str]:
    """Each model's own ``api_base`` (``--model-param MODEL:api_base=URL``), under its
    bare name as well: a variant's provider is asked for the bare model."""
    out = {m: str(p[API_BASE]) for m, p in params.items() if isinstance(p.get(API_BASE), str)}
    for model, url in list(out.items()):
        out.setdefault(bare_model(model), url)
    return out


def _from_cli(given: Sequence[str], model: str, key: str) -> bool:
    return any(parse_model_param(t)[:2] == (model, key) for t in given)


def _check_key(model: str, key: str, where: str) -> None:
    if key in RESERVED:
        raise UserError(f"{where}: {model}: '{key}' is set by toolbench, not a model parameter")
    if key == API_BASE:
        return  # where the model is called, not a parameter sent to it
    why = never_takes(bare_model(model), key)
    if why is not None:
        raise UserError(f"{where}: {model}: {why}")


def never_takes(model: str, key: str) -> str | None:
    """Why LiteLLM's tables say ``model``'s provider never takes the OpenAI parameter
    ``key`` (None when it may, or when the tables cannot tell: a provider-specific
    parameter, a model LiteLLM does not know)."""
    lm = litellm()
    if key not in getattr(lm, "OPENAI_CHAT_COMPLETION_PARAMS", ()):
        return None  # passed through to the provider as it is; nothing to check offline
    try:
        if is_local(model):
            name, provider = LOCAL_MODELS[model].alias, "openai"
        else:
            name, provider = provider_of(model)
        supported = lm.get_supported_openai_params(model=name, custom_llm_provider=provider)
    except Exception:
        return None
    if supported is None or key in supported:
        return None
    return f"{provider} does not take '{key}' (LiteLLM's supported parameters)"
