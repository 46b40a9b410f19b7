"""The LiteLLM provider kind: any provider LiteLLM speaks, as transport: it sends a
request (plain or streamed, :meth:`LiteLLMAPI.send`), classifies a fault by LiteLLM's
exception classes (:mod:`.litellm_faults`), tells what a model takes from LiteLLM's tables and
prices a reply. Attempts, retries and reading the reply are the shared call's
(:mod:`toolbench.providers.call`); how a cassette answers a request is
:mod:`.replay`'s, which asks this module only to read a recorded body as LiteLLM's
generic OpenAI conversion reads it (:func:`read_recorded`).

LiteLLM is imported lazily and once, with its switches set (:mod:`.lazy_litellm`).
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from types import ModuleType
from typing import Any

from toolbench.errors import MissingApiKeyError, UserError
from toolbench.formats.base import Format, ModelReply
from toolbench.providers.capabilities import (
    NO_KEY,
    check_provider,
    invents_call_ids,
    keyless,
    provider_of,
    reads_echo_extras,
)
from toolbench.providers.lazy_litellm import OFFLINE_SWITCHES as OFFLINE_SWITCHES
from toolbench.providers.lazy_litellm import litellm as litellm
from toolbench.providers.litellm_faults import classify
from toolbench.providers.model_api import (
    DEFAULT_TIMEOUT_S,
    Capabilities,
    Endpoint,
    Fault,
    ProviderSettings,
)
from toolbench.providers.reply import reply_of, whole
from toolbench.providers.wire.responses.reader import completion
from toolbench.providers.wire.responses.request import is_responses

FIRST_CALL_MODULES = (
    "openai.resources", "openai.resources.chat", "anyio._backends._asyncio", "anyio.streams.tls",
    "jiter", "litellm.proxy._types", "litellm._service_logger",
)  # fmt: skip
"""What LiteLLM and the OpenAI SDK import on their first call (as of LiteLLM
1.106.2): :func:`warm` imports them, so a benchmark's clock (or a worker's event
loop) does not pay for them."""


_warmed = False


def warm() -> None:
    """Import LiteLLM and what its first call would import (a missing one is skipped).

    A live run does it before its first request: the deadline of an attempt
    (``--timeout``) is the provider's, and the first call's imports inside it would
    spend much of it."""
    global _warmed
    if _warmed:
        return
    _warmed = True
    litellm()
    for name in FIRST_CALL_MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # a module another version lacks: nothing to warm
            continue


def _cost(resp: Any, lm: ModuleType) -> float | None:
    """LiteLLM's own figure for this response (already computed by its logging), else None."""
    hidden = getattr(resp, "_hidden_params", None) or {}
    value = hidden.get("response_cost")
    if value is None:
        try:
            value = lm.completion_cost(completion_response=resp)
        except Exception:
            return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


# ---------------------------------------------------------------- a recorded body, read


def _model_response(body: dict[str, Any], lm: ModuleType) -> Any:
    """LiteLLM's ``ModelResponse`` for a recorded OpenAI chat completion body, made the
    way LiteLLM's OpenAI handler makes it (the SDK's parsed object, dumped, converted)."""
    # LiteLLM's and the SDK's own modules: deferred for start-up, as LiteLLM itself.
    from litellm.litellm_core_utils.llm_response_utils.convert_dict_to_response import (
        convert_to_model_response_object,
    )
    from openai._models import construct_type
    from openai.types.chat import ChatCompletion

    parsed: Any = construct_type(type_=ChatCompletion, value=body)
    return convert_to_model_response_object(
        response_object=parsed.model_dump(),
        model_response_object=lm.ModelResponse(),
        hidden_params={"headers": {}},
        _response_headers={},
    )


def read_recorded(
    body: dict[str, Any], endpoint: Endpoint
) -> tuple[ModelReply, tuple[int | None, int | None], float | None] | None:
    """A recorded OpenAI chat completion read as LiteLLM's generic OpenAI conversion reads
    it live (without its request machinery): the reply, its tokens and price; None when
    LiteLLM would not read it (the full path judges it)."""
    lm = litellm()
    try:
        resp = _model_response(body, lm)
        reply = reply_of(whole(resp), invents_call_ids(endpoint.model, endpoint.api_base))
    except Exception:  # not a chat completion LiteLLM reads: let the full path judge it
        return None
    usage = getattr(resp, "usage", None)
    tokens = (getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None))
    return reply, tokens, _priced_cost(resp, lm)


def _priced_cost(resp: Any, lm: ModuleType) -> float | None:
    """:func:`_cost`, asked once per response model name that has no price.

    LiteLLM's price lookup fails slowly for a model it has no price for (the embedded
    models, a local server's), on every call, live or replayed; its tables do not change
    during a run, so a name without a price is not looked up again."""
    name = str(getattr(resp, "model", ""))
    if name in _UNPRICED:
        return None
    cost = _cost(resp, lm)
    if cost is None:
        _UNPRICED.add(name)
    return cost


_UNPRICED: set[str] = set()
"""Response model names LiteLLM has no price for (their replayed cost is None)."""


def missing_key(model: str) -> str | None:
    """The environment variable a provider needs and lacks, via LiteLLM's own table."""
    lm = litellm()
    try:
        info = lm.validate_environment(model=model)
    except Exception:
        return None
    missing = info.get("missing_keys") or []
    return str(missing[0]) if missing else None


REPLAY_KEY = "toolbench-replay"
"""A placeholder key for replays: provider SDKs refuse to start without one."""


async def send(endpoint: Endpoint, request: dict[str, Any]) -> Any:
    """``litellm.acompletion`` once: no retries of its own (the shared call retries), the
    endpoint's address, key and per-read timeout."""
    extra: dict[str, Any] = {"max_retries": 0, "timeout": endpoint.timeout_s}
    if endpoint.api_base:
        extra["api_base"] = endpoint.api_base
    if endpoint.api_key:
        extra["api_key"] = endpoint.api_key
    if is_responses(request):
        return await _responses(request, extra)
    lm = litellm()
    if request.get("stream"):
        _refuse_fake_chat_stream(lm, str(request.get("model")), endpoint.api_base)
    got = await lm.acompletion(**request, **extra)
    if request.get("stream") and faked_stream(got):
        raise lm.UnsupportedParamsError(
            message=f"{request.get('model')}: LiteLLM sent a plain request and made the stream"
            f" up from the whole reply ({FAKED}): nothing of a stream was measured",
            model=str(request.get("model")), llm_provider="litellm",
        )  # fmt: skip
    return got


FAKED = "not in its model table, or marked supports_native_streaming: false"
FAKE_ITERATORS = frozenset({"MockResponseIterator", "FakeStreamResponseIterator"})
"""LiteLLM's iterators over a whole reply that it hands back as a stream (1.106)."""


def faked_stream(got: Any) -> bool:
    """Whether LiteLLM answered a streamed request with a stream it made up from a plain
    reply (its ``completion_stream`` is one of :data:`FAKE_ITERATORS`): the decision
    :func:`_refuse_fake_chat_stream` predicts, caught where a provider decides it per
    request (Groq's ``response_format``, for one)."""
    inner = getattr(got, "completion_stream", None)
    return type(inner).__name__ in FAKE_ITERATORS


def _refuse_fake_chat_stream(lm: ModuleType, model: str, api_base: str | None) -> None:
    """A streamed chat request LiteLLM would not stream: for a model its provider's
    config says cannot (an Azure o-series deployment its table does not know, Bedrock's
    AI21) it sends a plain request and makes the stream up from the whole reply, so no
    timing of a stream would be measured while the trial said it streamed. Refused
    before anything is sent, as a parameter the model does not take (``unsupported``),
    as the Responses API path refuses it (:func:`_refuse_fake_stream`)."""
    from litellm.types.utils import LlmProviders  # deferred for start-up, as LiteLLM
    from litellm.utils import ProviderConfigManager

    try:
        name, provider = provider_of(model, api_base)
        config = ProviderConfigManager.get_provider_chat_config(
            model=name, provider=LlmProviders(provider)
        )
        fake = config is not None and config.should_fake_stream(
            model=name, stream=True, custom_llm_provider=provider
        )
    except Exception:
        return
    if fake:
        raise lm.UnsupportedParamsError(
            message=f"{model}: LiteLLM does not stream this model ({FAKED}): it would send a"
            " plain request and make the stream up",
            model=model, llm_provider=provider,
        )  # fmt: skip


async def _responses(request: dict[str, Any], extra: dict[str, Any]) -> Any:
    """``litellm.aresponses`` once (``native:api=responses``): plain, the response read
    into a chat completion (:func:`toolbench.providers.wire.responses.reader.completion`);
    streamed, LiteLLM's event iterator (the reply is assembled from the events as the
    bytes carried them, :mod:`toolbench.providers.wire.responses.reader`). The Responses API
    has no ``stream_options``: its stream always ends with the usage."""
    sent = {k: v for k, v in request.items() if k != "stream_options"}
    lm = litellm()
    if sent.get("stream"):
        _refuse_fake_stream(lm, str(sent.get("model")), extra.get("api_base"))
    got = await lm.aresponses(**sent, **extra)
    return got if sent.get("stream") else completion(got)


def _refuse_fake_stream(lm: ModuleType, model: str, api_base: str | None) -> None:
    """A streamed Responses API request LiteLLM would not stream: for a model its table
    does not know (or marks ``supports_native_streaming: false``) it sends a plain
    request and makes the events up, so nothing of the stream would be measured. Refused
    as a parameter the model does not take (the trial is ``unsupported``, never a
    stream's timings that were not one)."""
    from litellm.utils import ProviderConfigManager  # deferred for start-up, as LiteLLM

    try:
        _name, provider = provider_of(model, api_base)
        config = ProviderConfigManager.get_provider_responses_api_config(provider, model, api_base)
        fake = config is not None and config.should_fake_stream(model, True, provider)
    except Exception:
        return
    if fake:
        raise lm.UnsupportedParamsError(
            message=f"{model}: LiteLLM does not stream the Responses API for this model (not"
            " in its model table, or marked supports_native_streaming: false): it would send"
            " a plain request and make the stream up",
            model=model, llm_provider=provider,
        )  # fmt: skip


def response_cost(response: Any) -> float | None:
    """LiteLLM's price of a reply (an assembled streamed one comes as a dict)."""
    lm = litellm()
    if isinstance(response, dict):
        response = lm.ModelResponse(**response)
    return _priced_cost(response, lm)


class LiteLLMAPI:
    """Any provider LiteLLM speaks (``anthropic/...``, ``gemini/...``, ``openai/...``)."""

    name = "litellm"
    prefixes: tuple[str, ...] = ()
    width: int | None = None

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings
        self._live_keys: dict[str, str | None] = {}

    def preflight(self, model: str, record: str) -> None:
        """An unknown provider prefix, or a key the provider needs and the environment
        lacks (not for replays, nor for a keyless OpenAI-compatible ``--api-base``)."""
        api_base = self.settings.api_base_for(model)
        check_provider(model, api_base)  # an unknown provider prefix: exit 2 before any call
        if record == "none" or keyless(model, api_base):
            return
        env = missing_key(model)
        if env and not (api_base and env.endswith("_API_BASE")):
            raise MissingApiKeyError(f"model {model} needs {env} in the environment")

    def ready(self, models: list[str]) -> None:
        return None  # a remote provider: its key is checked by preflight

    def run_params(self) -> dict[str, Any]:
        return {}

    async def endpoint(self, model: str, fmt: Format, live: bool) -> Endpoint:
        api_base = self.settings.api_base_for(model)
        if live:
            warm()  # once: LiteLLM's first-call imports are not the provider's time
        key = self._live_key(model, api_base) if live else REPLAY_KEY
        timeout = self.settings.timeout_s or DEFAULT_TIMEOUT_S
        return Endpoint(model, api_base, key, timeout_s=timeout)

    def _live_key(self, model: str, api_base: str | None) -> str | None:
        """The key a live request to ``model`` sends: :data:`NO_KEY` for a keyless
        OpenAI-compatible server (vLLM, llama.cpp, LM Studio) when the environment has
        none, else None (the SDK reads the environment's). Asked once per model of a
        run (an instance serves one run, whose environment does not change): LiteLLM's
        check of the environment is too slow to repeat for every trial."""
        if model not in self._live_keys:
            need = keyless(model, api_base) and missing_key(model)
            self._live_keys[model] = NO_KEY if need else None
        return self._live_keys[model]

    async def send(self, endpoint: Endpoint, request: dict[str, Any]) -> Any:
        return await send(endpoint, request)

    def cost(self, response: Any) -> float | None:
        return response_cost(response)

    def capabilities(self, model: str) -> Capabilities:
        return litellm_capabilities(model, self.settings.api_base_for(model))

    def classify(self, error: BaseException, request: dict[str, Any] | None = None) -> Fault:
        return classify(error, litellm(), None, request)

    def close(self) -> None:
        return None


@lru_cache(maxsize=256)
def litellm_capabilities(model: str, api_base: str | None) -> Capabilities:
    """What LiteLLM's tables say ``model`` takes (None where they cannot tell)."""
    lm = litellm()
    try:
        name, provider = provider_of(model, api_base)
    except UserError:
        return Capabilities()
    try:
        supported = lm.get_supported_openai_params(model=name, custom_llm_provider=provider)
        params = None if supported is None else frozenset(str(p) for p in supported)
    except Exception:
        params = None
    try:
        tools: bool | None = bool(lm.supports_function_calling(model=model))
    except Exception:
        tools = None
    return Capabilities(params=params, function_calling=tools,
                        echo_extras=reads_echo_extras(model, api_base))  # fmt: skip
