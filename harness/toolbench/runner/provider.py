"""Model calls through LiteLLM, with bounded retries for transient faults.

LiteLLM is imported lazily (about 4 s) and only after two environment switches are set:
``DISABLE_AIOHTTP_TRANSPORT`` (its aiohttp transport would bypass the cassettes, which
hook httpx) and ``LITELLM_LOCAL_MODEL_COST_MAP`` (no network fetch at import).
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from toolbench.errors import CassetteMissingError, InfraError, UnsupportedError
from toolbench.formats.base import ModelReply, RenderedRequest

MAX_STOP = 4
"""LiteLLM silently cuts ``stop`` to 4 entries for OpenAI-compatible providers; cut it
ourselves so the request we record is the request that was sent."""
RETRIES = 4
BACKOFF_S = 0.5

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
    timeout_s: float = 600.0
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


def build_request(endpoint: Endpoint, rendered: RenderedRequest, seed: int) -> dict[str, Any]:
    """The exact request parameters handed to LiteLLM (and recorded in results)."""
    req: dict[str, Any] = {"model": endpoint.model, "messages": rendered.messages}
    if rendered.stop:
        req["stop"] = list(rendered.stop[:MAX_STOP])
    if rendered.tools:
        req["tools"] = rendered.tools
        if rendered.tool_choice is not None:
            req["tool_choice"] = rendered.tool_choice
    req.update({"temperature": 0, "seed": seed})
    req.update(endpoint.params)
    return req


def _transient(exc: BaseException, lm: ModuleType) -> bool:
    transient = (
        lm.RateLimitError,
        lm.APIConnectionError,
        lm.Timeout,
        lm.InternalServerError,
        lm.ServiceUnavailableError,
        lm.BadGatewayError,
    )
    if isinstance(exc, transient):
        return True
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and (status == 429 or status >= 500):
        return True
    # A truncated or non-JSON body surfaces as a generic API error.
    return isinstance(exc, lm.APIError) and "json" in str(exc).lower()


def _retry_after(exc: BaseException) -> float | None:
    resp = getattr(exc, "response", None)
    headers = getattr(resp, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after")
    try:
        return min(float(value), 60.0) if value is not None else None
    except ValueError:
        return None


def _unsupported(exc: BaseException, lm: ModuleType) -> bool:
    if isinstance(exc, lm.UnsupportedParamsError):
        return True
    text = str(exc).lower()
    return isinstance(exc, lm.BadRequestError) and any(
        w in text for w in ("does not support tools", "tool use is not supported",
                            "function calling is not", "tools is not supported",
                            "does not support function")
    )  # fmt: skip


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
    text = str(exc).lower()
    return isinstance(exc, lm.BadRequestError | lm.UnsupportedParamsError) and "stop" in text


def _reply(resp: Any) -> ModelReply:
    choice = resp.choices[0]
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


async def complete(
    endpoint: Endpoint,
    rendered: RenderedRequest,
    seed: int,
    is_replay_gap: Callable[[], bool] | None = None,
) -> Completion:
    """Call the model once (retrying transient faults); raise typed errors otherwise."""
    lm = litellm()
    request = build_request(endpoint, rendered, seed)
    extra: dict[str, Any] = {"max_retries": 0, "timeout": endpoint.timeout_s}
    if endpoint.api_base:
        extra["api_base"] = endpoint.api_base
    if endpoint.api_key:
        extra["api_key"] = endpoint.api_key
    attempt = 0
    while True:
        attempt += 1
        t0 = time.perf_counter()
        try:
            resp = await lm.acompletion(**request, **extra)
        except CassetteMissingError:
            raise
        except Exception as exc:
            if is_replay_gap is not None and is_replay_gap():
                raise CassetteMissingError(str(exc)) from None
            if _unsupported(exc, lm):
                raise UnsupportedError(f"{type(exc).__name__}: {exc}") from None
            if "stop" in request and _rejects_stop(exc, lm):
                # Some models refuse `stop` (reasoning models, some gateways): send the turn
                # without it; the recorded request says so by lacking it.
                request = {k: v for k, v in request.items() if k != "stop"}
                continue
            if isinstance(exc, lm.Timeout) and endpoint.on_timeout is not None:
                endpoint.on_timeout()
                raise InfraError(f"timed out after {endpoint.timeout_s:.0f}s: {exc}") from None
            if _transient(exc, lm) and attempt <= RETRIES:
                delay = _retry_after(exc) or BACKOFF_S * 2 ** (attempt - 1) * (1 + random.random())
                await asyncio.sleep(delay)
                continue
            raise InfraError(f"{type(exc).__name__}: {str(exc)[:500]}") from None
        latency = time.perf_counter() - t0
        usage = getattr(resp, "usage", None)
        cost = _cost(resp, lm)
        return Completion(
            reply=_reply(resp),
            request=request,
            latency_s=latency,
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            cost=cost,
            attempts=attempt,
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
