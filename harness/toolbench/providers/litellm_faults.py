"""What a fault LiteLLM raised means: its typed code, whether to ask again, how long the
server asked to wait (:func:`classify`, the LiteLLM kind's
:meth:`~toolbench.providers.model_api.ModelAPI.classify`).

Decided by LiteLLM's exception classes (and the HTTP status for exceptions that are not
LiteLLM's), the ``param`` a 4xx body names and LiteLLM's capability tables; never by the
wording of a message: LiteLLM rewords them.
"""

from __future__ import annotations

import email.utils
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

from toolbench import codes
from toolbench.providers.model_api import CassetteView, Fault
from toolbench.providers.refusal import TOOL_PARAMS, refuses_tools
from toolbench.redaction import redact_error


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
    exchange: CassetteView | None,
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
        return Fault(codes.INFRA_CLIENT_ERROR, text, False, status, param=_param(exc))
    # Not one of LiteLLM's classes (another layer's exception): by its HTTP status.
    if status == 408:
        return Fault(codes.INFRA_TIMEOUT, text, True, status)
    if status == 429:
        return Fault(codes.INFRA_RATE_LIMITED, text, True, status, retry_after(exc))
    if status is not None and status >= 500:
        return Fault(codes.INFRA_SERVER_ERROR, text, True, status, retry_after(exc))
    if status is not None and 400 <= status < 500:
        return Fault(codes.INFRA_CLIENT_ERROR, text, False, status, param=_param(exc))
    return Fault(codes.INFRA_ERROR, text, False, status)


def connection_lost(exc: BaseException) -> bool:
    """Whether ``exc`` was caused by a connection that failed (refused, reset, closed
    before a response): LiteLLM's OpenAI handler re-raises the SDK's connection error as
    an ``InternalServerError`` with a made-up status 500, so the chain of causes is
    read, by class (httpx's transport errors other than timeouts, the SDK's connection
    error other than its timeout, the OS's ``ConnectionError``)."""
    import httpx  # deferred for start-up, as LiteLLM (whose dependencies they are)
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


def _param(exc: BaseException) -> str | None:
    """The request parameter a 4xx names (``error.param`` of the body, which the OpenAI
    SDK and LiteLLM's exception mapping carry as ``exc.param``)."""
    value = getattr(exc, "param", None)
    return value if isinstance(value, str) else None


def _unsupported(exc: BaseException, lm: ModuleType, request: dict[str, Any] | None) -> bool:
    """LiteLLM refused a parameter itself; or a 400/422 (LiteLLM's ``BadRequestError``)
    refuses the tools themselves (:func:`~toolbench.providers.refusal.refuses_tools`: the
    body names a tool parameter, or, for a model LiteLLM's table does not list as calling
    functions, says it takes none). Any other 4xx is a client error, whatever the model."""
    if isinstance(exc, lm.UnsupportedParamsError):
        return True
    if not isinstance(exc, lm.BadRequestError) or isinstance(exc, lm.ContextWindowExceededError):
        return False
    if _param(exc) in TOOL_PARAMS:
        return True
    if request is None or not request.get("tools"):
        return False
    try:
        knows: bool | None = bool(lm.supports_function_calling(model=str(request.get("model"))))
    except Exception:
        knows = None  # LiteLLM does not know the model
    return refuses_tools(exc, _param(exc), knows)
