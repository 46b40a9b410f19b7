"""The LiteLLM provider kind: any provider LiteLLM speaks, with bounded retries for
transient faults, faults classified by LiteLLM's exception classes, and replay at the
provider boundary.

LiteLLM is imported lazily (about 4 s) and only after two environment switches are set:
``DISABLE_AIOHTTP_TRANSPORT`` (its aiohttp transport would bypass the cassettes, which
hook httpx) and ``LITELLM_LOCAL_MODEL_COST_MAP`` (no network fetch at import).

Replay at the provider boundary: a request the trial's cassette already holds is
answered from it without LiteLLM's and the OpenAI SDK's request and response machinery
(about 5 ms of CPU a call, which bound replay speed). The cassette finds the exchange by
toolbench's own request key (:func:`request_key`, recorded with every exchange since
keys exist) or, in older cassettes, by the HTTP request the SDK would send
(:func:`wire_request`, matched exactly as vcrpy matches). Anything else (a request the
cassette does not hold, a recorded refusal, a body that is not an OpenAI chat
completion) takes the full path through LiteLLM, which refuses what was not recorded.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import os
import random
import re
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception

from toolbench import codes
from toolbench.cassettes.match import echo_equivalent
from toolbench.errors import (
    CassetteMissingError,
    InfraError,
    MissingApiKeyError,
    UnsupportedError,
    UserError,
)
from toolbench.formats.base import Format, ModelReply, RenderedRequest
from toolbench.providers.base import (
    DEFAULT_TIMEOUT_S,
    Capabilities,
    Completion,
    CompletionRequest,
    Decision,
    Endpoint,
    Exchange,
    Fault,
    ProviderSettings,
    WireRequest,
)
from toolbench.providers.capabilities import (
    MAX_STOP,
    NO_KEY,
    filter_params,
    invents_call_ids,
    keyless,
    provider_of,
    reads_echo_extras,
)
from toolbench.redaction import redact_error
from toolbench.results import Attempt, RequestParams, StreamTurn

__all__ = [
    "DEFAULT_TIMEOUT_S", "MAX_STOP", "Completion", "Endpoint", "Fault", "build_request",
    "classify", "complete",
]  # fmt: skip
RETRIES = 4
"""Transient faults (429, 5xx, connection errors, malformed 2xx bodies) are asked again
up to this many times: at most five attempts per exchange."""
TIMEOUT_RETRIES = 1
"""A request that timed out is asked again once only: a hung server costs at most two
timeouts per exchange, not five."""
DEADLINE_GRACE_S = 0.25
"""How long past ``--timeout`` a plain request may run before the total deadline cuts
it, so that a silent server is still reported by httpx's per-read timeout."""
TIMEOUT_CODES = frozenset({codes.INFRA_TIMEOUT, codes.INFRA_STREAM_STALLED})
"""Faults that spent the whole deadline: a plain timeout and a stream that stalled."""
BACKOFF_S = 0.5
RETRY_AFTER_CAP_S = 60.0
"""The longest ``Retry-After`` toolbench waits. A server asking for more is not asked
again before then: the trial fails at once (``infra.rate_limited``)."""

_litellm: ModuleType | None = None


def litellm() -> ModuleType:
    """Import LiteLLM once, with the switches toolbench depends on."""
    global _litellm
    if _litellm is None:
        # Forced, not defaulted: the aiohttp transport would bypass the cassettes.
        os.environ["DISABLE_AIOHTTP_TRANSPORT"] = "True"
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm as _mod

        _mod.suppress_debug_info = True
        _mod.telemetry = False
        # Examined for the live path's CPU (LiteLLM 1.106.2, benchmarks/bench_concurrency.py)
        # and not set: turn_off_message_logging (adds a redaction pass), disable_streaming_
        # logging, disable_token_counter and the per-call "no-log" (they skip callbacks,
        # and none is registered); none skips the cost calculation or the logging payload.
        _litellm = _mod
    return _litellm


FIRST_CALL_MODULES = (
    "openai.resources", "openai.resources.chat", "anyio._backends._asyncio", "anyio.streams.tls",
    "jiter", "litellm.proxy._types", "litellm._service_logger",
)  # fmt: skip
"""What LiteLLM and the OpenAI SDK import on their first call (0.6 s of CPU, measured with
LiteLLM 1.106.2): :func:`warm` imports them, so a benchmark's clock (or a worker's event
loop) does not pay for them."""


_warmed = False


def warm() -> None:
    """Import LiteLLM and what its first call would import (a missing one is skipped).

    A live run does it before its first request: the deadline of an attempt
    (``--timeout``) is the provider's, and 0.6 s of imports inside the first one would
    spend it."""
    import importlib

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


ECHO_DROPPED = ("provider_specific_fields",)
"""Fields LiteLLM adds to a reply's message that are not part of the chat API: echoed
back in the next turn to an OpenAI-compatible API, Mistral's refuses the request (422 on
unknown fields). Providers whose LiteLLM transformation reads them (Gemini's thought
signatures, Anthropic's and Bedrock's blocks) get them back
(:func:`~toolbench.providers.capabilities.reads_echo_extras`)."""


def _echo_safe(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with LiteLLM's own fields taken out of echoed assistant messages."""
    out = []
    for m in messages:
        if (
            isinstance(m, dict)
            and m.get("role") == "assistant"
            and any(k in m for k in ECHO_DROPPED)
        ):
            m = {k: v for k, v in m.items() if k not in ECHO_DROPPED}
        out.append(m)
    return out


NULL_CONTENT_ADAPTATION = (
    'adaptation: echoed assistant messages with content null were sent with content "" '
    "(llama-server's chat templates fail on a null content)"
)
"""The note a trial carries when its server's adaptation changed an echoed message."""


def _null_content_as_empty(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**m, "content": ""}
        if isinstance(m, dict) and m.get("role") == "assistant" and m.get("content") is None
        else m
        for m in messages
    ]


def adaptations(
    endpoint: Endpoint, request: dict[str, Any], rendered: RenderedRequest
) -> list[str]:
    """What a server's adaptation changed in this request (recorded on the trial)."""
    if not endpoint.null_content_as_empty:
        return []
    changed = any(
        isinstance(m, dict) and m.get("role") == "assistant" and m.get("content") is None
        for m in rendered.messages
    )
    return [NULL_CONTENT_ADAPTATION] if changed else []


def build_request(
    endpoint: Endpoint, rendered: RenderedRequest, seed: int
) -> tuple[dict[str, Any], RequestParams]:
    """The exact request parameters handed to LiteLLM (and recorded in results), and
    the record of the sampling parameters asked, sent and dropped (by the model's
    capabilities, :mod:`.capabilities`)."""
    messages = list(rendered.messages)
    if not reads_echo_extras(endpoint.model, endpoint.api_base):
        messages = _echo_safe(messages)
    if endpoint.null_content_as_empty:
        messages = _null_content_as_empty(messages)
    req: dict[str, Any] = {"model": endpoint.model, "messages": messages}
    asked: dict[str, Any] = {}
    if rendered.stop:
        asked["stop"] = list(rendered.stop)
    if rendered.tools:
        req["tools"] = rendered.tools
        if rendered.tool_choice is not None:
            req["tool_choice"] = rendered.tool_choice
    asked.update({"temperature": 0, "seed": seed})
    asked.update(endpoint.model_params)
    # A format's knobs (native:tool_choice, native:parallel) are checked like the
    # harness's own parameters: one the provider does not take is dropped and recorded.
    knobs = rendered.params
    asked.update(knobs)
    sent, record = filter_params(endpoint.model, asked, endpoint.api_base, tuple(knobs))
    if "stop" in sent:
        req["stop"] = sent.pop("stop")
    req.update(sent)
    req.update(endpoint.params)
    return req, record


def retry_after(exc: BaseException) -> float | None:
    """Seconds a server asked to wait (``Retry-After``: seconds or an HTTP date).

    LiteLLM's exceptions carry a placeholder ``response``; the real headers are in
    ``litellm_response_headers`` (set by its exception mapping).
    """
    for headers in (
        getattr(exc, "litellm_response_headers", None),
        getattr(getattr(exc, "response", None), "headers", None),
    ):
        if headers is None:
            continue
        ms = headers.get("retry-after-ms")
        value = headers.get("retry-after")
        try:
            if ms is not None:
                return max(0.0, float(ms) / 1000)
            if value is None:
                continue
            return max(0.0, float(value))
        except ValueError:
            pass
        try:
            when = email.utils.parsedate_to_datetime(str(value))
        except (TypeError, ValueError):
            continue
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return max(0.0, (when - datetime.now(UTC)).total_seconds())
    return None


def classify(
    exc: BaseException,
    lm: ModuleType,
    exchange: Exchange | None,
    request: dict[str, Any] | None = None,
) -> Fault:
    """Turn a provider exception into a :class:`Fault` with its typed code and kind.

    Decided by LiteLLM's exception classes (and the HTTP status for exceptions that are
    not LiteLLM's), the ``param`` a 4xx body names, and LiteLLM's capability tables for
    the ``request`` that failed; never by the wording of a message: LiteLLM rewords them.
    """
    # Redacted before it is cut: a key cut in half matches neither its value nor its shape.
    text = f"{type(exc).__name__}: {redact_error(str(exc)[:20_000])[:500]}"
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    fault = exchange.last_fault if exchange is not None else None
    if fault is not None and not fault.startswith("HTTP "):
        # A 2xx whose body is not a reply: LiteLLM reports it as some other error.
        return Fault(codes.INFRA_BAD_REPLY, f"{fault}: {text}", True, status)
    # Classes first: LiteLLM gives a connection error status 500, a timeout 408.
    if isinstance(exc, lm.Timeout):
        return Fault(codes.INFRA_TIMEOUT, text, True, status)
    if isinstance(exc, lm.RateLimitError):
        return Fault(codes.INFRA_RATE_LIMITED, text, True, status, retry_after(exc))
    if isinstance(exc, lm.APIConnectionError) or connection_lost(exc):
        return Fault(codes.INFRA_CONNECTION, text, True, None)  # no server answered: no status
    server = (lm.InternalServerError, lm.ServiceUnavailableError, lm.BadGatewayError)
    if isinstance(exc, server):
        return Fault(codes.INFRA_SERVER_ERROR, text, True, status, retry_after(exc))
    if isinstance(exc, lm.ContextWindowExceededError):
        return Fault(codes.PROVIDER_CONTEXT_WINDOW, text, False, status, kind="model")
    if _unsupported(exc, lm, request):
        return Fault(codes.UNSUPPORTED, text, False, status, kind="unsupported", param=_param(exc))
    client = (lm.AuthenticationError, lm.PermissionDeniedError, lm.NotFoundError,
              lm.BadRequestError)  # fmt: skip
    if isinstance(exc, client):
        return Fault(codes.INFRA_CLIENT_ERROR, text, False, status)
    # Not one of LiteLLM's classes (another layer's exception): by its HTTP status.
    if status == 408:
        return Fault(codes.INFRA_TIMEOUT, text, True, status)
    if status == 429:
        return Fault(codes.INFRA_RATE_LIMITED, text, True, status, retry_after(exc))
    if status is not None and status >= 500:
        return Fault(codes.INFRA_SERVER_ERROR, text, True, status, retry_after(exc))
    if status is not None and 400 <= status < 500:
        return Fault(codes.INFRA_CLIENT_ERROR, text, False, status)
    return Fault(codes.INFRA_ERROR, text, False, status)


def connection_lost(exc: BaseException) -> bool:
    """Whether ``exc`` was caused by a connection that failed (refused, reset, closed
    before a response): LiteLLM's OpenAI handler re-raises the SDK's connection error as
    an ``InternalServerError`` with a made-up status 500, so the chain of causes is
    read, by class (httpx's transport errors other than timeouts, the SDK's connection
    error other than its timeout, the OS's ``ConnectionError``)."""
    import httpx
    import openai

    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen and len(seen) < 16:
        seen.add(id(cur))
        if isinstance(cur, httpx.TimeoutException | openai.APITimeoutError):
            return False
        if isinstance(cur, httpx.TransportError | openai.APIConnectionError | ConnectionError):
            return True
        cur = cur.__cause__ or cur.__context__
    return False


TOOL_PARAMS = ("tools", "tool_choice", "functions", "function_call")


def _param(exc: BaseException) -> str | None:
    """The request parameter a 4xx names (``error.param`` of the body, which the OpenAI
    SDK and LiteLLM's exception mapping carry as ``exc.param``)."""
    value = getattr(exc, "param", None)
    return value if isinstance(value, str) else None


def _unsupported(exc: BaseException, lm: ModuleType, request: dict[str, Any] | None) -> bool:
    """LiteLLM refused a parameter itself; the server refused the tools by name
    (``error.param``); or a request with tools got a 400 from a model that LiteLLM's
    tables do not list as calling functions (``supports_function_calling``)."""
    if isinstance(exc, lm.UnsupportedParamsError):
        return True
    if not isinstance(exc, lm.BadRequestError) or isinstance(exc, lm.ContextWindowExceededError):
        return False
    if _param(exc) in TOOL_PARAMS:
        return True
    if request is None or not request.get("tools"):
        return False
    try:
        return not lm.supports_function_calling(model=str(request.get("model", "")))
    except Exception:
        return True  # LiteLLM does not know the model: it is not known to take tools


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


def _rejects_stop(exc: BaseException, lm: ModuleType) -> bool:
    """A 400 naming ``stop`` as its parameter (the model takes no stop sequences)."""
    return isinstance(exc, lm.BadRequestError) and _param(exc) == "stop"


_INVENTED_ID = re.compile(
    r"call_[0-9a-f]{28}|(?:call_)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)
"""The ids LiteLLM 1.106 makes up: ``call_<uuid4 hex[:28]>`` (Gemini), ``call_<uuid4>`` or
a bare uuid4 (Ollama)."""
THOUGHT_SEPARATOR = "__thought__"
"""LiteLLM's ``THOUGHT_SIGNATURE_SEPARATOR``: a Gemini call id carries its thought
signature after it (LiteLLM reads it back from there on the next turn), kept as is."""


def _stable_ids(calls: list[dict[str, Any]]) -> None:
    """Replace the call ids LiteLLM made up by ids derived from the calls themselves.

    The provider sent none (:func:`~toolbench.providers.capabilities.invents_call_ids`), so
    the id is not part of the exchange; a random one would make every replay of the
    trial differ from its recording. Ids a provider did send are left alone.
    (Re-apply with the provider layer of toolbench/providers/ at merge.)
    """
    for i, tc in enumerate(calls):
        cid = tc.get("id")
        if not isinstance(cid, str):
            continue
        head, sep, signature = cid.partition(THOUGHT_SEPARATOR)
        if _INVENTED_ID.fullmatch(head):
            fn = tc.get("function") or {}
            text = json.dumps([i, fn.get("name"), fn.get("arguments")], sort_keys=True)
            tc["id"] = f"call_{hashlib.sha256(text.encode()).hexdigest()[:24]}{sep}{signature}"


def _reply(resp: Any, stable_ids: bool = False) -> ModelReply:
    choices = getattr(resp, "choices", None)
    if not choices or getattr(choices[0], "message", None) is None:
        raise Fault(codes.INFRA_BAD_REPLY, "a chat completion without choices[0].message", True)
    choice = choices[0]
    msg = choice.message
    raw = msg.model_dump(exclude_none=True)
    # A call-only message comes back with ``content: null``; dumping without None values
    # would drop the key. It goes back as the model sent it: null, never "" (LiteLLM's
    # Anthropic conversion turns "" into a text block the model never wrote). The one
    # server that needs "" gets it by its own adaptation (:func:`build_request`).
    if "content" not in raw:
        raw["content"] = None
    tool_calls = [tc.model_dump(exclude_none=True) for tc in (msg.tool_calls or [])]
    if stable_ids:
        _stable_ids(tool_calls)
        _stable_ids(raw.get("tool_calls") or [])
    return ModelReply(
        text=msg.content or "",
        tool_calls=tool_calls,
        finish_reason=choice.finish_reason,
        raw_message=raw,
    )


def _provider_s(exchange: Exchange | None) -> float | None:
    """The provider's time of the attempt just made (None: replayed, or not seen)."""
    if exchange is None or exchange.last_replayed or exchange.last_provider_s is None:
        return None
    return round(exchange.last_provider_s, 4)


def _backoff(attempt: int) -> float:
    return float(BACKOFF_S * 2 ** (attempt - 1) * (1 + random.random()))


async def complete(
    endpoint: Endpoint,
    rendered: RenderedRequest,
    seed: int,
    exchange: Exchange | None = None,
    attempts: list[Attempt] | None = None,
    turn: int = 0,
    call: Callable[[dict[str, Any], float], Awaitable[Any]] | None = None,
    request_extra: dict[str, Any] | None = None,
) -> Completion:
    """Call the model once, retrying transient faults; raise typed errors otherwise.

    Each attempt is appended to ``attempts``. Retries (tenacity) wait ``Retry-After``
    when the server sends one (a wait over :data:`RETRY_AFTER_CAP_S` fails the trial at
    once), else exponential backoff with jitter. A fault replayed from a cassette is
    not retried: the replay would answer the same. ``exchange`` is the trial's
    cassette: it tells a replay gap and a malformed body apart from other errors, and
    forgets a recorded 4xx that the trial did not act on. ``call`` replaces
    ``litellm.acompletion`` (the streamed completion, :mod:`toolbench.streaming`, given
    the request and the attempt's ``time.monotonic()`` deadline; it may raise a
    :class:`Fault` itself, which is settled, counted and retried like a classified
    exception) and ``request_extra`` is added to the request sent. Each attempt, plain or
    streamed, must complete within ``endpoint.timeout_s`` (a total deadline).
    """
    lm = litellm()
    log: list[Attempt] = [] if attempts is None else attempts
    request, params = build_request(endpoint, rendered, seed)
    request.update(request_extra or {})
    # A streamed request is recorded as server-sent events (toolbench.streaming), not
    # as a JSON body: the boundary replay answers plain requests only.
    if exchange is not None and call is None and _generic_openai(endpoint):
        answered = replay_at_boundary(endpoint, request, params, exchange, log, turn, lm, rendered)
        if answered is not None:
            return answered
    warm()  # LiteLLM's first-call imports happen before the first deadline starts
    state: dict[str, Any] = {"request": request, "timeouts": 0}
    extra: dict[str, Any] = {"max_retries": 0, "timeout": endpoint.timeout_s}
    if endpoint.api_base:
        extra["api_base"] = endpoint.api_base
    if endpoint.api_key:
        extra["api_key"] = endpoint.api_key

    async def once() -> tuple[Any, float]:
        n = sum(1 for a in log if a.turn == turn) + 1
        t0 = time.perf_counter()
        # The whole response, plain or streamed, within --timeout (httpx's timeout bounds
        # each read, so a server dripping bytes would otherwise never time out).
        deadline = time.monotonic() + endpoint.timeout_s
        if exchange is not None:
            exchange.last_provider_s = None
        try:
            try:
                kwargs = {**state["request"], **extra}
                if call is None:
                    # httpx's own timeout answers a silent server first (LiteLLM's
                    # Timeout); the total deadline catches a server that drips bytes.
                    total = endpoint.timeout_s + DEADLINE_GRACE_S
                    resp = await asyncio.wait_for(lm.acompletion(**kwargs), total)
                else:
                    resp = await call(kwargs, deadline)
            except CassetteMissingError:
                raise
            except Fault as f:
                raise _settle(f) from None
            except TimeoutError:
                fault = Fault(codes.INFRA_TIMEOUT, "the response did not complete", True)
                raise _settle(fault) from None
            except Exception as exc:
                raise _fault(exc) from None
            reply_fault = exchange.last_fault if exchange is not None else None
            if reply_fault is not None:
                raise Fault(codes.INFRA_BAD_REPLY, reply_fault, True, None)
            _reply(resp)  # raises a Fault on a reply without a message
        except Fault as f:
            replayed = exchange is not None and exchange.last_replayed
            if replayed and f.code != codes.PROVIDER_STOP_REJECTED:
                f.retryable = False  # a replay answers the same; a changed request may not
            log.append(Attempt(turn=turn, n=n, outcome="fail", error_code=f.code,
                               http_status=f.status, error=f.message[:300],
                               provider_s=_provider_s(exchange)))  # fmt: skip
            raise
        replayed = exchange is not None and exchange.last_replayed
        took = _provider_s(exchange)
        if took is None and not replayed:  # no cassette saw the exchange: the call's time
            took = round(time.perf_counter() - t0, 4)
        log.append(Attempt(turn=turn, n=n, outcome="ok", provider_s=took))
        if exchange is not None and not replayed:
            exchange.remember_key(request_key(state["request"]))
        return resp, took or 0.0

    def _fault(exc: Exception) -> Exception:
        if exchange is not None and exchange.unmatched:
            return CassetteMissingError(str(exc))
        request = state["request"]
        if "stop" in request and _rejects_stop(exc, lm):
            # Some models refuse `stop` (reasoning models, some gateways): send the turn
            # without it; the recorded request says so by lacking it.
            state["request"] = {k: v for k, v in request.items() if k != "stop"}
            params.sent = [p for p in params.sent if p != "stop"]
            params.dropped["stop"] = "the model refused it (HTTP 400 naming stop); asked again"
            return Fault(codes.PROVIDER_STOP_REJECTED, "stop rejected: asked again without it",
                         True, getattr(exc, "status_code", None), retry_after=0.0)  # fmt: skip
        fault = classify(exc, lm, exchange, request)
        if fault.kind in ("unsupported", "model"):
            # Kept in the cassette: the trial acts on it, and a replay answers the same.
            return UnsupportedError(fault.message, fault.code)
        return _settle(fault)

    def _settle(fault: Fault) -> Fault:
        """What every failed attempt goes through, plain or streamed: a timeout (a stall
        is one) counts against :data:`TIMEOUT_RETRIES` and replaces a hung local server;
        a fault not asked again drops what the cassette kept provisionally."""
        if fault.code in TIMEOUT_CODES:
            state["timeouts"] += 1
            if endpoint.on_timeout is not None:
                endpoint.on_timeout()  # a hung local server is replaced, not asked again
                fault.retryable = False
            if fault.code == codes.INFRA_TIMEOUT:
                fault.message = f"timed out after {endpoint.timeout_s:g}s: {fault.message}"
        if exchange is not None and not fault.retryable:
            exchange.forget_last()  # a refusal nobody acted on is not the model's reply
        return fault

    def stop(rs: RetryCallState) -> bool:
        exc = rs.outcome.exception() if rs.outcome is not None else None
        if not isinstance(exc, Fault):
            return True
        if exc.code in TIMEOUT_CODES and state["timeouts"] > TIMEOUT_RETRIES:
            return True
        if exc.retry_after is not None and exc.retry_after > RETRY_AFTER_CAP_S:
            cap = RETRY_AFTER_CAP_S
            exc.message += f" (server asked to wait {exc.retry_after:.0f}s; cap {cap:.0f}s)"
            return True
        return rs.attempt_number > RETRIES

    def wait(rs: RetryCallState) -> float:
        exc = rs.outcome.exception() if rs.outcome is not None else None
        if isinstance(exc, Fault) and exc.retry_after is not None:
            return min(exc.retry_after, RETRY_AFTER_CAP_S)
        return _backoff(rs.attempt_number)

    async def before_sleep(rs: RetryCallState) -> None:
        last = log[-1]
        last.outcome = "retry"
        last.wait_s = round(rs.next_action.sleep if rs.next_action else 0.0, 3)

    retrying = AsyncRetrying(
        retry=retry_if_exception(lambda e: isinstance(e, Fault) and e.retryable),
        stop=stop, wait=wait, before_sleep=before_sleep, sleep=asyncio.sleep, reraise=True,
    )  # fmt: skip
    try:
        resp: Any
        latency: float
        resp, latency = await retrying(once)
    except Fault as f:
        raise InfraError(f.message, f.code) from None
    usage = getattr(resp, "usage", None)
    return Completion(
        reply=_reply(resp, invents_call_ids(endpoint.model, endpoint.api_base)),
        request=state["request"],
        latency_s=latency,
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        cost=_priced_cost(resp, lm),
        attempts=sum(1 for a in log if a.turn == turn),
        params=params,
        replayed=exchange is not None and exchange.last_replayed,
        adaptations=adaptations(endpoint, state["request"], rendered),
    )


# ---------------------------------------------------------------- replay at the boundary


def request_key(request: dict[str, Any]) -> str:
    """toolbench's own key of a request: a hash of the LiteLLM arguments as data (model,
    messages, tools, sampling parameters; key order ignored). Recorded with each
    exchange, it lets a replay find the exchange without predicting the provider's
    HTTP request. The address is not in it: the cassette's path already names the
    model, and the embedded server's port changes every run."""
    canon = json.dumps(echo_equivalent(request), sort_keys=True, separators=(",", ":"),
                       ensure_ascii=False, default=str)  # fmt: skip
    return "sha256:" + hashlib.sha256(canon.encode("utf-8")).hexdigest()


WIRE_PROVIDERS = frozenset({"openai"})
"""Providers whose HTTP request is predicted for older cassettes (no request keys):
LiteLLM hands an OpenAI chat completion request to the OpenAI SDK unchanged but for
the model name. A prediction that is wrong matches nothing and takes the full path."""
OPENAI_BASE = "https://api.openai.com/v1"


def wire_request(endpoint: Endpoint, request: dict[str, Any]) -> WireRequest | None:
    """The HTTP request the OpenAI SDK sends for ``request``, or None for a provider whose
    request LiteLLM transforms (Anthropic, Gemini, ...)."""
    try:
        name, provider = provider_of(endpoint.model, endpoint.api_base)
    except Exception:
        return None
    if provider not in WIRE_PROVIDERS:
        return None
    base = (endpoint.api_base or OPENAI_BASE).rstrip("/")
    return WireRequest("POST", f"{base}/chat/completions", {**request, "model": name})


def _model_response(body: dict[str, Any], lm: ModuleType) -> Any:
    """LiteLLM's ``ModelResponse`` for a recorded OpenAI chat completion body, made the
    way LiteLLM's OpenAI handler makes it (the SDK's parsed object, dumped, converted)."""
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


def _generic_openai(endpoint: Endpoint) -> bool:
    """Whether LiteLLM reads this model's replies with its generic OpenAI conversion, the
    one :func:`replay_at_boundary` reproduces. Other OpenAI-compatible providers (DeepSeek,
    Mistral, OpenRouter, hosted vLLM, ...) apply their own transformations to the reply
    (measured: their boundary replies differed from the live ones), so they replay
    through LiteLLM in full."""
    try:
        return provider_of(endpoint.model, endpoint.api_base)[1] == "openai"
    except UserError:
        return False


def replay_at_boundary(
    endpoint: Endpoint, request: dict[str, Any], params: RequestParams,
    exchange: Exchange, log: list[Attempt], turn: int, lm: ModuleType,
    rendered: RenderedRequest,
) -> Completion | None:  # fmt: skip
    """The reply the trial's cassette holds for ``request``, read without LiteLLM's
    request machinery; None when the cassette cannot answer it here (then the full path
    runs: it replays, records or refuses as before)."""
    body = exchange.replay_reply(request_key(request), wire_request(endpoint, request))
    if body is None or not isinstance(body.get("choices"), list):
        return None
    try:
        resp = _model_response(body, lm)
        reply = _reply(resp, invents_call_ids(endpoint.model, endpoint.api_base))
    except Exception:  # not a chat completion LiteLLM reads: let the full path judge it
        return None
    n = sum(1 for a in log if a.turn == turn) + 1
    log.append(Attempt(turn=turn, n=n, outcome="ok"))
    usage = getattr(resp, "usage", None)
    return Completion(
        reply=reply, request=request, latency_s=0.0,
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        cost=_priced_cost(resp, lm), attempts=n, params=params, replayed=True,
        adaptations=adaptations(endpoint, request, rendered),
    )  # fmt: skip


def _priced_cost(resp: Any, lm: ModuleType) -> float | None:
    """:func:`_cost`, asked once per response model name that has no price.

    LiteLLM's price lookup fails slowly for a model it has no price for (the embedded
    models, a local server's): 0.75 ms a call, live or replayed; its tables do not change
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


class LiteLLMAPI:
    """Any provider LiteLLM speaks (``anthropic/...``, ``gemini/...``, ``openai/...``)."""

    name = "litellm"
    width: int | None = None

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings

    def preflight(self, model: str, record: str) -> None:
        """An unknown provider prefix, or a key the provider needs and the environment
        lacks (not for replays, nor for a keyless OpenAI-compatible ``--api-base``)."""
        api_base = self.settings.api_base_for(model)
        provider_of(model, api_base)  # an unknown provider prefix: exit 2 before any call
        if record == "none" or keyless(model, api_base):
            return
        env = missing_key(model)
        if env and not (api_base and env.endswith("_API_BASE")):
            raise MissingApiKeyError(f"model {model} needs {env} in the environment")

    async def endpoint(self, model: str, fmt: Format, live: bool) -> Endpoint:
        api_base = self.settings.api_base_for(model)
        if live:
            warm()  # once: LiteLLM's first-call imports are not the provider's time
        key = None if live else REPLAY_KEY
        if live and keyless(model, api_base) and missing_key(model):
            key = NO_KEY  # a keyless OpenAI-compatible server (vLLM, llama.cpp, LM Studio)
        timeout = self.settings.timeout_s or DEFAULT_TIMEOUT_S
        return Endpoint(model, api_base, key, timeout_s=timeout)

    async def complete(self, request: CompletionRequest) -> Completion:
        return await complete(request.endpoint, request.rendered, request.seed,
                              request.exchange, request.attempts, request.turn)  # fmt: skip

    async def stream(self, request: CompletionRequest) -> tuple[Completion, StreamTurn]:
        from toolbench.streaming.complete import stream_request  # above this layer; lazy

        return await stream_request(request)

    def capabilities(self, model: str) -> Capabilities:
        return litellm_capabilities(model, self.settings.api_base_for(model))

    def classify(self, error: BaseException) -> Decision:
        return classify(error, litellm(), None).decision()

    def close(self) -> None:
        return None


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
