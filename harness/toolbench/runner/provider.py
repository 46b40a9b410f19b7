"""Model calls through LiteLLM, with bounded retries for transient faults.

LiteLLM is imported lazily (about 4 s) and only after two environment switches are set:
``DISABLE_AIOHTTP_TRANSPORT`` (its aiohttp transport would bypass the cassettes, which
hook httpx) and ``LITELLM_LOCAL_MODEL_COST_MAP`` (no network fetch at import).
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import ModuleType
from typing import Any, Literal, Protocol

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception

from toolbench import codes
from toolbench.errors import CassetteMissingError, InfraError, UnsupportedError
from toolbench.formats.base import ModelReply, RenderedRequest
from toolbench.redaction import redact_error
from toolbench.results import Attempt, RequestParams
from toolbench.runner.capabilities import MAX_STOP, filter_params, reads_echo_extras

__all__ = ["MAX_STOP", "Completion", "Endpoint", "classify", "complete"]
RETRIES = 4
"""Transient faults (429, 5xx, connection errors, malformed 2xx bodies) are asked again
up to this many times: at most five attempts per exchange."""
TIMEOUT_RETRIES = 1
"""A request that timed out is asked again once only: a hung server costs at most two
timeouts per exchange, not five."""
BACKOFF_S = 0.5
RETRY_AFTER_CAP_S = 60.0
"""The longest ``Retry-After`` toolbench waits. A server asking for more is not asked
again before then: the trial fails at once (``infra.rate_limited``)."""
DEFAULT_TIMEOUT_S = 120.0
"""Per-request timeout for remote models (``--timeout``)."""

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
        _litellm = _mod
    return _litellm


@dataclass
class Endpoint:
    """Where and how to call one model."""

    model: str
    """The LiteLLM model string actually used (``openai/smollm2-135m`` for local models)."""
    api_base: str | None = None
    api_key: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    timeout_s: float = DEFAULT_TIMEOUT_S
    on_timeout: Callable[[], None] | None = None
    """Called when a request times out; then the trial fails at once, unretried. The
    embedded server uses it: a generation that hangs would block every later request
    queued behind it, so that server is replaced instead of asked again."""


@dataclass
class Completion:
    reply: ModelReply
    request: dict[str, Any]
    latency_s: float
    prompt_tokens: int | None
    completion_tokens: int | None
    cost: float | None
    attempts: int
    params: RequestParams = field(default_factory=RequestParams)
    """The sampling parameters asked, sent and dropped for this request."""


ECHO_DROPPED = ("provider_specific_fields",)
"""Fields LiteLLM adds to a reply's message that are not part of the chat API: echoed
back in the next turn to an OpenAI-compatible API, Mistral's refuses the request (422 on
unknown fields). Providers whose LiteLLM transformation reads them (Gemini's thought
signatures, Anthropic's and Bedrock's blocks) get them back
(:func:`~toolbench.runner.capabilities.reads_echo_extras`)."""


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


def build_request(
    endpoint: Endpoint, rendered: RenderedRequest, seed: int
) -> tuple[dict[str, Any], RequestParams]:
    """The exact request parameters handed to LiteLLM (and recorded in results), and
    the record of the sampling parameters asked, sent and dropped (by the model's
    capabilities, :mod:`.capabilities`)."""
    messages = list(rendered.messages)
    if not reads_echo_extras(endpoint.model, endpoint.api_base):
        messages = _echo_safe(messages)
    req: dict[str, Any] = {"model": endpoint.model, "messages": messages}
    asked: dict[str, Any] = {}
    if rendered.stop:
        asked["stop"] = list(rendered.stop)
    if rendered.tools:
        req["tools"] = rendered.tools
        if rendered.tool_choice is not None:
            req["tool_choice"] = rendered.tool_choice
    asked.update({"temperature": 0, "seed": seed})
    sent, record = filter_params(endpoint.model, asked, endpoint.api_base)
    if "stop" in sent:
        req["stop"] = sent.pop("stop")
    req.update(sent)
    req.update(endpoint.params)
    return req, record


class Exchange(Protocol):
    """What the cassette layer saw of the last HTTP exchange (see ``TrialCassette``)."""

    unmatched: list[str]
    last_fault: str | None
    last_replayed: bool

    def forget_last(self) -> None: ...


FaultKind = Literal["retry", "unsupported", "infra", "model"]
"""What a fault means for the trial: ``retry`` (transient: ask again), ``unsupported``
(the model cannot take the request: a parameter or the tools), ``infra`` (the provider
or its setup failed: key, model name, quota) or ``model`` (the model's own limit, e.g.
its context window)."""


class Fault(Exception):
    """One failed attempt, classified: its typed code and whether to ask again."""

    def __init__(
        self,
        code: str,
        message: str,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
        kind: FaultKind | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.kind: FaultKind = kind or ("retry" if retryable else "infra")


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
    if isinstance(exc, lm.APIConnectionError):
        return Fault(codes.INFRA_CONNECTION, text, True, status)
    server = (lm.InternalServerError, lm.ServiceUnavailableError, lm.BadGatewayError)
    if isinstance(exc, server):
        return Fault(codes.INFRA_SERVER_ERROR, text, True, status, retry_after(exc))
    if isinstance(exc, lm.ContextWindowExceededError):
        return Fault(codes.PROVIDER_CONTEXT_WINDOW, text, False, status, kind="model")
    if _unsupported(exc, lm, request):
        return Fault(codes.UNSUPPORTED, text, False, status, kind="unsupported")
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


def _reply(resp: Any) -> ModelReply:
    choices = getattr(resp, "choices", None)
    if not choices or getattr(choices[0], "message", None) is None:
        raise Fault(codes.INFRA_BAD_REPLY, "a chat completion without choices[0].message", True)
    choice = choices[0]
    msg = choice.message
    raw = msg.model_dump(exclude_none=True)
    # A call-only message comes back with ``content: null``, which the SDK then drops on
    # the way out; chat templates (llama.cpp's among them) fail on the missing key.
    # An empty string means the same to every provider and survives the round trip.
    if raw.get("content") is None:
        raw["content"] = ""
    tool_calls = [tc.model_dump(exclude_none=True) for tc in (msg.tool_calls or [])]
    return ModelReply(
        text=msg.content or "",
        tool_calls=tool_calls,
        finish_reason=choice.finish_reason,
        raw_message=raw,
    )


def _backoff(attempt: int) -> float:
    return float(BACKOFF_S * 2 ** (attempt - 1) * (1 + random.random()))


async def complete(
    endpoint: Endpoint,
    rendered: RenderedRequest,
    seed: int,
    exchange: Exchange | None = None,
    attempts: list[Attempt] | None = None,
    turn: int = 0,
    call: Callable[[dict[str, Any]], Awaitable[Any]] | None = None,
    request_extra: dict[str, Any] | None = None,
) -> Completion:
    """Call the model once, retrying transient faults; raise typed errors otherwise.

    Each attempt is appended to ``attempts``. Retries (tenacity) wait ``Retry-After``
    when the server sends one (a wait over :data:`RETRY_AFTER_CAP_S` fails the trial at
    once), else exponential backoff with jitter. A fault replayed from a cassette is
    not retried: the replay would answer the same. ``exchange`` is the trial's
    cassette: it tells a replay gap and a malformed body apart from other errors, and
    forgets a recorded 4xx that the trial did not act on. ``call`` replaces
    ``litellm.acompletion`` (the streamed completion, :mod:`toolbench.streaming`; it may
    raise a :class:`Fault` itself) and ``request_extra`` is added to the request sent.
    """
    lm = litellm()
    log: list[Attempt] = [] if attempts is None else attempts
    request, params = build_request(endpoint, rendered, seed)
    request.update(request_extra or {})
    state: dict[str, Any] = {"request": request, "timeouts": 0}
    extra: dict[str, Any] = {"max_retries": 0, "timeout": endpoint.timeout_s}
    if endpoint.api_base:
        extra["api_base"] = endpoint.api_base
    if endpoint.api_key:
        extra["api_key"] = endpoint.api_key

    async def once() -> tuple[Any, float]:
        n = sum(1 for a in log if a.turn == turn) + 1
        t0 = time.perf_counter()
        try:
            try:
                kwargs = {**state["request"], **extra}
                resp = await (lm.acompletion(**kwargs) if call is None else call(kwargs))
            except (CassetteMissingError, Fault):
                raise
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
                               http_status=f.status, error=f.message[:300]))  # fmt: skip
            raise
        log.append(Attempt(turn=turn, n=n, outcome="ok"))
        return resp, time.perf_counter() - t0

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
        if fault.code == codes.INFRA_TIMEOUT:
            state["timeouts"] += 1
            if endpoint.on_timeout is not None:
                endpoint.on_timeout()
                fault.retryable = False
            fault.message = f"timed out after {endpoint.timeout_s:.0f}s: {fault.message}"
        if exchange is not None and not fault.retryable:
            exchange.forget_last()  # a refusal nobody acted on is not the model's reply
        return fault

    def stop(rs: RetryCallState) -> bool:
        exc = rs.outcome.exception() if rs.outcome is not None else None
        if not isinstance(exc, Fault):
            return True
        if exc.code == codes.INFRA_TIMEOUT and state["timeouts"] > TIMEOUT_RETRIES:
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
        reply=_reply(resp),
        request=state["request"],
        latency_s=latency,
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        cost=_cost(resp, lm),
        attempts=sum(1 for a in log if a.turn == turn),
        params=params,
    )


def missing_key(model: str) -> str | None:
    """The environment variable a provider needs and lacks, via LiteLLM's own table."""
    lm = litellm()
    try:
        info = lm.validate_environment(model=model)
    except Exception:
        return None
    missing = info.get("missing_keys") or []
    return str(missing[0]) if missing else None
