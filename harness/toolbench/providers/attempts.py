"""The attempts of one request, plain or streamed: retries, the deadline, fault settling.

Retried with tenacity: ``Retry-After`` honoured up to :data:`RETRY_AFTER_CAP_S`, else
exponential backoff with jitter; a timeout asked again :data:`TIMEOUT_RETRIES` time(s)
only; a total deadline per attempt (``--timeout`` bounds the whole response, streamed or
not); a ``stop`` the model refused dropped and the turn asked again without it. Every
attempt is logged on the trial (:class:`~toolbench.results.Attempt`). A fault replayed
from a cassette is not retried: the replay would answer the same.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception

from toolbench import codes
from toolbench.cassettes.boundary import request_key
from toolbench.errors import CassetteMissingError, UnsupportedError
from toolbench.providers import finish as finish_signal
from toolbench.providers import rate_limits
from toolbench.providers.model_api import CassetteView, Endpoint, Fault, ModelAPI
from toolbench.providers.reply import whole
from toolbench.providers.wire.chat.reader import Assembled
from toolbench.redaction import redact_error
from toolbench.results import Attempt, RequestParams

RETRIES = 4
"""Transient faults (429, 5xx, connection errors, malformed 2xx bodies) are asked again
up to this many times: at most five attempts per exchange."""
TIMEOUT_RETRIES = 1
"""A request that timed out is asked again once only: a hung server costs at most two
timeouts per exchange, not five."""
TIMEOUT_CODES = frozenset({codes.INFRA_TIMEOUT, codes.INFRA_STREAM_STALLED})
"""Faults that spent the whole deadline: a plain timeout and a stream that stalled."""
BACKOFF_S = 0.5
RETRY_AFTER_CAP_S = 60.0
"""The longest ``Retry-After`` toolbench waits. A server asking for more is not asked
again before then: the trial fails at once (``infra.rate_limited``)."""


@dataclass
class Sent:
    """What an attempt got back: the response (a plain completion, or a stream's assembled
    as one), the stream's assembled reply and native finish signal, the provider's time."""

    response: Any
    assembled: Assembled | None = None
    native: str | None = None
    latency_s: float = 0.0


Send = Callable[[dict[str, Any], float], Awaitable[Sent]]
"""One attempt's transport: the request and the attempt's deadline (``time.monotonic``)."""


def _provider_s(exchange: CassetteView | None) -> float | None:
    """The provider's time of the attempt just made (None: replayed, or not seen)."""
    if exchange is None or exchange.last_replayed or exchange.last_provider_s is None:
        return None
    return round(exchange.last_provider_s, 4)


def _filtered(resp: Any) -> bool:
    """Whether the sender read ``resp`` as a reply its provider's filter stopped."""
    try:
        return whole(resp).finish_reason == finish_signal.FILTERED
    except Fault:
        return False


class Attempts:
    """The attempts of one request of a trial's turn. ``request`` is what the last attempt
    sent (a refused ``stop`` taken out); ``params`` records what was dropped."""

    def __init__(
        self, api: ModelAPI, endpoint: Endpoint, exchange: CassetteView | None,
        log: list[Attempt], turn: int, request: dict[str, Any], params: RequestParams,
    ) -> None:  # fmt: skip
        self.api, self.endpoint, self.exchange = api, endpoint, exchange
        self.log, self.turn = log, turn
        self.request, self.params = request, params
        self.timeouts = 0

    async def run(self, send: Send, retry: bool = True) -> Sent:
        """Send until an attempt succeeds or no retry is left (``retry`` False: once, for
        a stream the cassette answers: a replay answers the same again)."""
        if not retry:
            return await self.once(send)
        retrying = AsyncRetrying(
            retry=retry_if_exception(lambda e: isinstance(e, Fault) and e.retryable),
            stop=self._stop, wait=self._wait, before_sleep=self._before_sleep, sleep=asyncio.sleep,
            reraise=True,
        )  # fmt: skip
        sent: Sent = await retrying(self.once, send)
        return sent

    async def once(self, send: Send) -> Sent:
        """One attempt, logged: its typed fault raised, or what came back."""
        exchange, turn = self.exchange, self.turn
        n = sum(1 for a in self.log if a.turn == turn) + 1
        await rate_limits.before_send(self.endpoint, self.request)  # shared rpm/tpm, pauses
        t0 = time.perf_counter()
        # The whole response, plain or streamed, within --timeout (httpx's timeout bounds
        # each read, so a server dripping bytes would otherwise never time out).
        deadline = time.monotonic() + self.endpoint.timeout_s
        if exchange is not None:
            exchange.last_provider_s = None
        try:
            sent = await self._send(send, deadline)
        except Fault as f:
            replayed = exchange is not None and exchange.last_replayed
            if replayed and f.code != codes.PROVIDER_STOP_REJECTED:
                f.retryable = False  # a replay answers the same; a changed request may not
            self.log.append(Attempt(turn=turn, n=n, outcome="fail", error_code=f.code,
                                    http_status=f.status, error=f.message[:300],
                                    provider_s=_provider_s(exchange)))  # fmt: skip
            raise
        replayed = exchange is not None and exchange.last_replayed
        took = _provider_s(exchange)
        if took is None and not replayed:  # no cassette saw the exchange: the call's time
            took = round(time.perf_counter() - t0, 4)
        self.log.append(Attempt(turn=turn, n=n, outcome="ok", provider_s=took))
        if exchange is not None and not replayed:
            exchange.remember_key(request_key(self.request))
        sent.latency_s = took or 0.0
        return sent

    async def _send(self, send: Send, deadline: float) -> Sent:
        """The transport's answer, or its fault typed; a body that is no reply is one."""
        try:
            sent = await send(self.request, deadline)
        except CassetteMissingError:
            raise
        except Fault as f:
            raise self._settle(f) from None
        except TimeoutError:
            fault = Fault(codes.INFRA_TIMEOUT, "the response did not complete", True)
            raise self._settle(fault) from None
        except Exception as exc:
            raise self._fault(exc) from None
        reply_fault = self.exchange.last_fault if self.exchange is not None else None
        if reply_fault is not None:
            if _filtered(sent.response):
                # A body that is no reply because the provider's filter blocked the
                # prompt (Gemini: no candidates, a blockReason): its own code.
                raise finish_signal.filtered(f" ({reply_fault})")
            raise Fault(codes.INFRA_BAD_REPLY, reply_fault, True, None)
        if sent.assembled is None:  # a plain reply: raises a Fault when it has no message
            whole(sent.response)
        return sent

    def _fault(self, exc: Exception) -> Exception:
        """What the kind's exception means: a missing cassette, a 2xx that is no reply,
        a refused ``stop`` (asked again without it), unsupported, or a settled fault."""
        exchange = self.exchange
        if exchange is not None and exchange.unmatched:
            return CassetteMissingError(str(exc))
        sent_now = self.request
        bad_body = exchange.last_fault if exchange is not None else None
        if bad_body is not None and not bad_body.startswith("HTTP "):
            # A 2xx whose body is not a reply: the sender reports it as some other error.
            text = f"{type(exc).__name__}: {redact_error(str(exc)[:20_000])[:500]}"
            status = getattr(exc, "status_code", None)
            return self._settle(Fault(codes.INFRA_BAD_REPLY, f"{bad_body}: {text}", True,
                                      status if isinstance(status, int) else None))  # fmt: skip
        fault = self.api.classify(exc, sent_now)
        if "stop" in sent_now and fault.status == 400 and fault.param == "stop":
            # Some models refuse `stop` (reasoning models, some gateways): send the turn
            # without it; the recorded request says so by lacking it.
            self.request = {k: v for k, v in sent_now.items() if k != "stop"}
            self.params.sent = [p for p in self.params.sent if p != "stop"]
            self.params.dropped["stop"] = "the model refused it (HTTP 400 naming stop); asked again"
            return Fault(codes.PROVIDER_STOP_REJECTED, "stop rejected: asked again without it",
                         True, fault.status, retry_after=0.0)  # fmt: skip
        if fault.kind in ("unsupported", "model"):
            # Kept in the cassette: the trial acts on it, and a replay answers the same.
            return UnsupportedError(fault.message, fault.code)
        return self._settle(fault)

    def _settle(self, fault: Fault) -> Fault:
        """What every failed attempt goes through, plain or streamed: a timeout (a stall
        is one) counts against :data:`TIMEOUT_RETRIES` and replaces a hung local server;
        a fault not asked again drops what the cassette kept provisionally."""
        if self.exchange is None or not self.exchange.last_replayed:
            rate_limits.seen_fault(self.endpoint, fault)  # a 429's Retry-After: all wait
        if fault.code in TIMEOUT_CODES:
            self.timeouts += 1
            if self.endpoint.on_timeout is not None:
                self.endpoint.on_timeout()  # a hung local server is replaced, not asked again
                fault.retryable = False
            if fault.code == codes.INFRA_TIMEOUT:
                fault.message = f"timed out after {self.endpoint.timeout_s:g}s: {fault.message}"
        if self.exchange is not None and not fault.retryable:
            self.exchange.forget_last()  # a refusal nobody acted on is not the model's reply
        return fault

    def _stop(self, rs: RetryCallState) -> bool:
        exc = rs.outcome.exception() if rs.outcome is not None else None
        if not isinstance(exc, Fault):
            return True
        if exc.code in TIMEOUT_CODES and self.timeouts > TIMEOUT_RETRIES:
            return True
        if exc.retry_after is not None and exc.retry_after > RETRY_AFTER_CAP_S:
            cap = RETRY_AFTER_CAP_S
            exc.message += f" (server asked to wait {exc.retry_after:.0f}s; cap {cap:.0f}s)"
            return True
        return rs.attempt_number > RETRIES

    def _wait(self, rs: RetryCallState) -> float:
        exc = rs.outcome.exception() if rs.outcome is not None else None
        if isinstance(exc, Fault) and exc.retry_after is not None:
            return min(exc.retry_after, RETRY_AFTER_CAP_S)
        return float(BACKOFF_S * 2 ** (rs.attempt_number - 1) * (1 + random.random()))

    async def _before_sleep(self, rs: RetryCallState) -> None:
        last = self.log[-1]
        last.outcome = "retry"
        last.wait_s = round(rs.next_action.sleep if rs.next_action else 0.0, 3)
