"""What a model takes, from LiteLLM's own tables: the parameters toolbench may send it.

toolbench asks every model for ``temperature=0``, a ``seed`` and the format's ``stop``
list. Not every model takes them: Anthropic and Bedrock have no ``seed``, OpenAI's
reasoning models (o1, o3, gpt-5) take no ``temperature`` but 1 and gpt-5 no ``stop``.
Sending one anyway makes LiteLLM refuse the whole request, so the trial would measure
nothing. This module asks LiteLLM, per model, whether it would pass each parameter (and
value) on, and the request leaves out what it would not; the trial records what was
asked, what was sent and what was dropped (:class:`~toolbench.results.RequestParams`).

The answer comes from LiteLLM's provider configs (``get_supported_openai_params`` and the
provider's own parameter mapping run with ``drop_params``), never from error texts.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from toolbench.errors import UserError
from toolbench.providers.lazy_litellm import litellm
from toolbench.providers.provider_prefixes import PROVIDER_LIST, known_prefix
from toolbench.results import RequestParams

MAX_STOP = 4
"""LiteLLM silently cuts ``stop`` to 4 entries for OpenAI-compatible providers; cut it
ourselves so the request we record is the request that was sent."""
CHECKED = ("temperature", "seed", "stop")
"""The sampling parameters toolbench adds on its own (a model's own ``params`` are the
user's choice and always sent)."""


class UnknownProviderError(UserError):
    """A model string whose provider prefix LiteLLM does not know."""


def provider_names() -> list[str]:
    """LiteLLM's provider prefixes (``openai``, ``anthropic``, ``bedrock``, ...), from the
    table generated from the pinned LiteLLM (:mod:`.provider_prefixes`)."""
    return sorted(PROVIDER_LIST)


def check_provider(model: str, api_base: str | None = None) -> None:
    """Raise :class:`UnknownProviderError` (exit 2) when LiteLLM cannot tell ``model``'s
    provider. A ``<prefix>/<name>`` whose prefix is in LiteLLM's table is known without
    importing LiteLLM; any other model string is resolved by LiteLLM (:func:`provider_of`)."""
    if not known_prefix(model):
        provider_of(model, api_base)


@lru_cache(maxsize=256)
def provider_of(model: str, api_base: str | None = None) -> tuple[str, str]:
    """``(model name, provider)`` as LiteLLM resolves ``model``.

    Raises :class:`UnknownProviderError` (exit 2) with a did-you-mean over LiteLLM's
    provider list when it cannot tell the provider.
    """
    lm = litellm()
    try:
        name, provider, _key, _base = lm.get_llm_provider(model=model, api_base=api_base)
    except lm.BadRequestError:
        advice = (
            "Prefix the model with a LiteLLM provider (openai/, anthropic/, gemini/, "
            "ollama_chat/, ...; see https://docs.litellm.ai/docs/providers)"
        )
        if "/" not in model:
            raise UnknownProviderError(
                f"--models: cannot tell the provider of '{model}'. {advice}"
            ) from None
        prefix, rest = model.split("/", 1)
        close = difflib.get_close_matches(prefix, provider_names(), n=1)
        hint = f" Did you mean '{close[0]}/{rest}'?" if close else ""
        raise UnknownProviderError(
            f"--models: unknown provider '{prefix}' in '{model}'.{hint} {advice}"
        ) from None
    return str(name), str(provider)


KEYLESS_PROVIDERS = frozenset({"openai", "openai_like", "custom_openai", "hosted_vllm",
                               "lm_studio", "llamafile", "text-completion-openai"})  # fmt: skip
"""Providers that speak the OpenAI API: given an ``--api-base``, the server may need no
key at all (vLLM, llama.cpp, LM Studio), so none is demanded."""
NO_KEY = "toolbench-no-key"
"""The placeholder key sent to such a server when the environment has none: the OpenAI
SDK refuses to start without one; a keyless server ignores it."""


ECHO_EXTRAS_READERS = frozenset({
    "gemini", "vertex_ai", "vertex_ai_beta", "anthropic", "bedrock", "bedrock_converse",
    "deepseek", "moonshot", "databricks", "together_ai", "fireworks_ai", "azure_ai", "oci",
})  # fmt: skip
"""Providers whose LiteLLM transformation reads (or strips) an echoed assistant message's
``provider_specific_fields`` itself: Gemini needs its thought signatures back, or the next
turn fails. Every other provider gets the message as toolbench sends it."""


def reads_echo_extras(model: str, api_base: str | None = None) -> bool:
    """True when LiteLLM consumes ``provider_specific_fields`` for ``model``'s provider."""
    try:
        return provider_of(model, api_base)[1] in ECHO_EXTRAS_READERS
    except UserError:
        return False


INVENTED_CALL_IDS = frozenset({"gemini", "vertex_ai", "vertex_ai_beta", "ollama", "ollama_chat"})
"""Providers whose replies carry no call id (Gemini before 3.5, Ollama): LiteLLM invents a
random ``call_<uuid>`` for every call it reads, so a replayed trial would differ from
the recorded one by its ids alone (found by the round trips, tests/providers)."""


def invents_call_ids(model: str, api_base: str | None = None) -> bool:
    """True when LiteLLM makes up the call ids of ``model``'s replies."""
    try:
        return provider_of(model, api_base)[1] in INVENTED_CALL_IDS
    except UserError:
        return False


def keyless(model: str, api_base: str | None) -> bool:
    """True when ``model`` is served by an OpenAI-compatible ``api_base`` that may take
    no key."""
    if not api_base:
        return False
    try:
        return provider_of(model, api_base)[1] in KEYLESS_PROVIDERS
    except UserError:
        return False


@lru_cache(maxsize=1024)
def _passes(name: str, provider: str, param: str, value_key: str, value: Any) -> str | None:
    """None when LiteLLM passes ``param=value`` on to ``provider``'s ``name``; else why not."""
    lm = litellm()
    try:
        supported = lm.get_supported_openai_params(model=name, custom_llm_provider=provider)
    except Exception:
        return None  # LiteLLM cannot tell: send it, as before
    if supported is not None and param not in supported:
        return f"{provider} model {name} does not take {param} (LiteLLM's supported parameters)"
    get_optional_params: Any = lm.utils.get_optional_params

    try:
        base = get_optional_params(model=name, custom_llm_provider=provider, drop_params=True)
        arg = list(value) if isinstance(value, tuple) else value
        arg = json.loads(value) if isinstance(value, _FrozenObject) else arg
        got = get_optional_params(
            model=name, custom_llm_provider=provider, drop_params=True, **{param: arg}
        )
    except Exception:
        return None
    if got == base:
        return f"{provider} model {name} does not take {param}={value_key} (LiteLLM drops it)"
    return None


def filter_params(
    model: str,
    asked: dict[str, Any],
    api_base: str | None = None,
    knobs: tuple[str, ...] = (),
    takes: frozenset[str] | None = None,
) -> tuple[dict[str, Any], RequestParams]:
    """The parameters to send of ``asked`` (harness defaults: temperature, seed, stop;
    and a format's ``knobs``, checked the same way), and the record of what was asked,
    sent and dropped. ``takes``: what a server toolbench runs itself takes (its kind
    knows; LiteLLM's tables are not asked)."""
    refused = _by_server(model, takes) if takes is not None else _by_litellm(model, api_base)
    sent: dict[str, Any] = {}
    dropped: dict[str, str] = {}
    for param, value in asked.items():
        if param == "stop" and isinstance(value, list) and len(value) > MAX_STOP:
            cut = len(value) - MAX_STOP
            dropped["stop"] = f"{cut} of {len(value)} entries cut (limit {MAX_STOP})"
            value = value[:MAX_STOP]
        why = refused(param, value) if param in CHECKED or param in knobs else None
        if why is None:
            sent[param] = value
        else:
            dropped[param] = why
    record = RequestParams(asked=dict(asked), sent=sorted(sent), dropped=dropped)
    return sent, record


Refusal = Callable[[str, Any], str | None]
"""Why a checked parameter is not sent with this value (None: it is sent)."""


def _by_server(model: str, takes: frozenset[str]) -> Refusal:
    def refused(param: str, value: Any) -> str | None:
        if param in takes:
            return None
        return f"{model} does not take {param} (its server's parameters)"

    return refused


def _by_litellm(model: str, api_base: str | None) -> Refusal:
    try:
        name, provider = provider_of(model, api_base)
    except UserError:
        name, provider = model, ""
    if not provider:
        return lambda param, value: None  # LiteLLM cannot tell: send it

    def refused(param: str, value: Any) -> str | None:
        # Whether a seed passes does not depend on its value: one check per model, not one
        # per sample (LiteLLM's parameter mapping is not cheap).
        probe = 0 if param == "seed" and type(value) is int else value
        why = _passes(name, provider, param, repr(probe), _hashable(probe))
        if why is not None and probe is not value:
            why = why.replace(f"{param}={probe!r}", f"{param}={value!r}")
        return why

    return refused


class _FrozenObject(str):
    """A JSON object as a cache key (read back by :func:`_passes`)."""


def _hashable(value: Any) -> Any:
    """``value`` as a cache key (a forced ``tool_choice`` object as its sorted JSON)."""
    if isinstance(value, dict):
        return _FrozenObject(json.dumps(value, sort_keys=True))
    return tuple(value) if isinstance(value, list) else value
