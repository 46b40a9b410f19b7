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

**Environments.** A scenario that names an ``environment`` gets its calls' results by
running them (:class:`~toolbench.environments.Session`), in the order the model made
them; a call to a tool no environment has gets the scripted result. Each turn then
records the calls as run, and the last turn of each user turn the state after it
(``TurnRecord.environment``). A loop
scenario (``expect.turns``) has several user turns: a reply without calls (or the step
limit: ``max_turns`` steps that call, then one more) ends one, and the next user turn's
messages follow, with the functions it adds offered from then on (the request is
rendered again with them, the conversation so far kept).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from toolbench.environments import Session, open_session
from toolbench.environments.mcp_tools import starts_servers
from toolbench.formats.base import Format, Message, ModelReply, RenderedRequest, ToolCall
from toolbench.results import StreamTurn, TrialSettings, TurnRecord
from toolbench.scenarios.model import Scenario
from toolbench.scenarios.script import should_continue, tool_results
from toolbench.tool_runs import EnvironmentStep, ToolRun
from toolbench.tools import ToolDef


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
    if scenario.expect.kind not in ("multi_turn", "loop"):
        limit = 1
    return TrialSettings(max_turns=limit, retry_on_parse_error=retry_on_parse_error)


def _assistant_text(reply: ModelReply) -> Message:
    return {"role": "assistant", "content": reply.text}


class Conversation:
    """The state of one conversation; :meth:`request` and :meth:`feed` alternate."""

    def __init__(self, fmt: Format, scenario: Scenario, settings: TrialSettings) -> None:
        self.fmt, self.scenario, self.settings = fmt, scenario, settings
        self.session: Session | None = open_session(scenario)
        """The trial's environments (None: scripted results only)."""
        self._tools = scenario.tools_at(0)
        self._rendered = fmt.render(self._tools, [m.model_dump() for m in scenario.messages])
        self._messages: list[Message] = list(self._rendered.messages)
        self.turns: list[TurnRecord] = []
        self.fed: list[tuple[ToolCall, str]] = []
        """Every tool result fed back, in order (what the model was told)."""
        self.done = False
        self._round = 0
        self._user_turn = 0
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
        parsed = fmt.parse_reply(reply, self._tools)
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
        if sc.expect.kind == "loop":
            self._loop_step(turn)
            return turn
        if not should_continue(sc, self._round, parsed, self.settings.max_turns):
            self._snapshot(turn)
            self.done = True
            return turn
        results = self._results(turn, parsed.calls)
        self._messages = fmt.continue_conversation(self._messages, reply, results)
        self._round += 1
        return turn

    def _results(self, turn: TurnRecord, calls: list[ToolCall]) -> list[tuple[ToolCall, str]]:
        """The results of ``calls``: run by the environments that have their tools, else
        scripted; recorded on ``turn`` and in :attr:`fed`."""
        session = self.session
        ran: dict[int, tuple[str, ToolRun]] = {}
        if session is not None:
            offered = {t.name for t in self._tools}
            for i, call in enumerate(calls):
                if call.name not in offered:  # held out, or never offered: not run
                    ran[i] = session.refuse(call)
                elif session.has(call.name):
                    ran[i] = session.run_call(call)
        rest = [c for i, c in enumerate(calls) if i not in ran]
        scripted = iter(tool_results(self.scenario, self._round, rest))
        results = [(c, ran[i][0]) if i in ran else next(scripted) for i, c in enumerate(calls)]
        self.fed.extend(results)
        if session is not None:
            runs = [ran[i][1] for i in sorted(ran)]
            turn.environment = EnvironmentStep(user_turn=self._user_turn, runs=runs)
        return results

    def _snapshot(self, turn: TurnRecord) -> None:
        """Record the environments' state on ``turn``, the last of a user turn (a state
        on every exchange made a long-context trial's results line several times larger
        for nothing the scores read)."""
        if self.session is not None:
            step = turn.environment or EnvironmentStep(user_turn=self._user_turn)
            turn.environment = step.model_copy(update={"state": self.session.snapshot()})

    def _loop_step(self, turn: TurnRecord) -> None:
        """A loop scenario's step: run the calls, then go on in this user turn, move to
        the next, or stop. As in BFCL, a user turn may take ``max_turns`` steps that call;
        a reply after them that still calls is run and ends the turn at the limit."""
        calls = turn.parsed.calls
        # the steps of this user turn so far (this turn's record is not filled in yet)
        steps = sum(1 for t in self.turns if t.environment and t.environment.user_turn
                    == self._user_turn)  # fmt: skip
        if calls:
            results = self._results(turn, calls)
            self._messages = self.fmt.continue_conversation(self._messages, turn.reply, results)
            if steps + 1 <= self.settings.max_turns:
                return
        else:
            self._messages = [*self._messages, _assistant_text(turn.reply)]
        self._snapshot(turn)
        self._user_turn += 1
        later = self.scenario.turns
        if self._user_turn > len(later):
            self.done = True
            return
        nxt = later[self._user_turn - 1]
        if nxt.tools:
            self._offer(self.scenario.tools_at(self._user_turn))
        self._messages = [*self._messages, *(m.model_dump() for m in nxt.messages)]

    def _offer(self, tools: list[ToolDef]) -> None:
        """Render the request again with ``tools`` (functions held out until now join),
        keeping the conversation after the first rendered messages."""
        first = [m.model_dump() for m in self.scenario.messages]
        again = self.fmt.render(tools, first)
        kept = self._messages[len(self._rendered.messages) :]
        self._tools, self._rendered = tools, again
        self._messages = [*again.messages, *kept]


async def converse(
    fmt: Format, scenario: Scenario, settings: TrialSettings, complete: SendTurn
) -> list[TurnRecord]:
    """Drive a conversation to its end with ``complete``; the turns, in order. A turn
    whose calls run in environments is taken in a worker thread: a slow or hung tool
    (bounded by its time limit) must not hold the event loop other trials share; for the
    same reason a trial whose environments may start a server (an MCP process, its
    ``initialize`` and ``tools/list``) opens them in a worker thread too."""
    if starts_servers(scenario):
        conv = await asyncio.to_thread(Conversation, fmt, scenario, settings)
    else:
        conv = Conversation(fmt, scenario, settings)
    try:
        while not conv.done:
            exchange = await complete(conv.request(), len(conv.turns))
            if conv.session is None:
                conv.feed(exchange)
            else:
                await asyncio.to_thread(conv.feed, exchange)
    finally:
        if conv.session is not None:  # a server process must not outlive its trial
            conv.session.close()
    return conv.turns
