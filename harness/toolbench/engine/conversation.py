"""One conversation as a pure state machine, driven by an async ``complete`` callable.

:class:`Conversation` holds the state of a (format, scenario) conversation under the
effective :class:`~toolbench.results.TrialSettings`: it renders the first request, takes
each reply (:meth:`Conversation.feed`), parses it with the format, and either stops or
builds the next request: the reply plus the scenario's scripted tool results written the
format's own way, or, once per trial with ``retry_on_parse_error``, the reply plus the
format's retry message after a parse failure (that retry turn is marked ``retry`` and
does not count against the turn limit). It never calls a model, so it runs the same under
the runner, in tests and wherever a stored conversation is replayed.

The limit is the settings' ``max_turns``: ``--max-turns`` when given (it may lower or
raise the scenario's own ``expect.max_turns``), else the scenario's; single-turn
scenarios always stop after one turn. The settings are stored with the trial, and
scoring reads the same limit, so a conversation stopped by it is ``turns.exhausted``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from toolbench.formats.base import Format, Message, ModelReply, RenderedRequest, ToolCall
from toolbench.results import StreamTurn, TrialSettings, TurnRecord
from toolbench.scenarios.model import Scenario
from toolbench.scenarios.script import should_continue, tool_results


@dataclass(frozen=True)
class TurnReply:
    """What ``complete`` returns for one request: the reply and what it cost."""

    reply: ModelReply
    request: dict[str, Any]
    """Exactly what was sent (the provider's request body, or the rendered request)."""
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None
    stream: StreamTurn | None = None
    """A streamed exchange's deltas and timings (None when not streamed)."""


SendTurn = Callable[[RenderedRequest, int], Awaitable[TurnReply]]
"""``complete(request, turn_index)``: send one request, return its :class:`TurnReply`."""


def effective_settings(
    scenario: Scenario, max_turns: int | None = None, retry_on_parse_error: bool = False
) -> TrialSettings:
    """The settings a trial of ``scenario`` runs with, given the run's options."""
    limit = max_turns if max_turns is not None else scenario.expect.max_turns
    if scenario.expect.kind != "multi_turn":
        limit = 1
    return TrialSettings(max_turns=limit, retry_on_parse_error=retry_on_parse_error)


def _assistant_text(reply: ModelReply) -> Message:
    return {"role": "assistant", "content": reply.text}


class Conversation:
    """The state of one conversation; :meth:`request` and :meth:`feed` alternate."""

    def __init__(self, fmt: Format, scenario: Scenario, settings: TrialSettings) -> None:
        self.fmt, self.scenario, self.settings = fmt, scenario, settings
        self._rendered = fmt.render(scenario.tools, [m.model_dump() for m in scenario.messages])
        self._messages: list[Message] = list(self._rendered.messages)
        self.turns: list[TurnRecord] = []
        self.fed: list[tuple[ToolCall, str]] = []
        """Every scripted tool result fed back, in order (what the model was told)."""
        self.done = False
        self._round = 0
        self._retried = self._pending_retry = False

    def request(self) -> RenderedRequest:
        """The next request to send: the conversation so far, with everything else the
        format rendered kept (stop, tools, tool choice, its parameters, the API)."""
        if self.done:
            raise RuntimeError("the conversation is over")
        return self._rendered.model_copy(update={"messages": self._messages})

    def feed(self, exchange: TurnReply) -> TurnRecord:
        """Take the reply to :meth:`request`: parse, record the turn, advance or stop."""
        if self.done:
            raise RuntimeError("the conversation is over")
        fmt, sc = self.fmt, self.scenario
        reply = exchange.reply
        parsed = fmt.parse_reply(reply, sc.tools)
        turn = TurnRecord(
            request=exchange.request, reply=reply, parsed=parsed,
            latency_s=None if exchange.latency_s is None else round(exchange.latency_s, 4),
            prompt_tokens=exchange.prompt_tokens,
            completion_tokens=exchange.completion_tokens, cost=exchange.cost,
            retry=self._pending_retry, stream=exchange.stream,
        )  # fmt: skip
        self.turns.append(turn)
        if parsed.status == "failed" and self.settings.retry_on_parse_error and not self._retried:
            self._retried = self._pending_retry = True
            self._messages = [*self._messages, _assistant_text(reply), fmt.retry_message(parsed)]
            return turn
        self._pending_retry = False
        if not should_continue(sc, self._round, parsed, self.settings.max_turns):
            self.done = True
            return turn
        results = tool_results(sc, self._round, parsed.calls)
        self.fed.extend(results)
        self._messages = fmt.continue_conversation(self._messages, reply, results)
        self._round += 1
        return turn


async def converse(
    fmt: Format, scenario: Scenario, settings: TrialSettings, complete: SendTurn
) -> list[TurnRecord]:
    """Drive a conversation to its end with ``complete``; the turns, in order."""
    conv = Conversation(fmt, scenario, settings)
    while not conv.done:
        conv.feed(await complete(conv.request(), len(conv.turns)))
    return conv.turns
