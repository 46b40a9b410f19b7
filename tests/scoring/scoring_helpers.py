"""Hand-built scoring inputs: a fake format, scenarios and turn records."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from toolbench.formats.base import (
    Format,
    Message,
    ModelReply,
    ParseIssue,
    ParseResult,
    RenderedRequest,
    ToolCall,
)
from toolbench.results import TurnRecord
from toolbench.scenarios.model import Scenario
from toolbench.tools import ToolDef


class FakeFormat(Format):
    """A minimal format whose only marker is ``<<CALL>>``."""

    name = "fake-test"
    markers = (re.compile(r"<<CALL>>"),)

    def render(self, tools: Sequence[ToolDef], messages: Sequence[Message]) -> RenderedRequest:
        return RenderedRequest(messages=list(messages))

    def parse(self, text: str, tools: Sequence[ToolDef] | None = None) -> ParseResult:
        return ParseResult(content=text, raw_content=text)

    def continue_conversation(
        self,
        messages: Sequence[Message],
        reply: ModelReply,
        results: Sequence[tuple[ToolCall, str]],
    ) -> list[Message]:
        return list(messages)

    def sanitize(self, text: str) -> str:
        return text.replace("<<CALL>>", "")


WEATHER = {
    "name": "get_weather",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
    },
}
TIME = {
    "name": "get_time",
    "parameters": {
        "type": "object",
        "properties": {"timezone": {"type": "string"}},
        "required": ["timezone"],
    },
}


def scenario(expect: dict[str, Any], tools: list[dict[str, Any]] | None = None) -> Scenario:
    return Scenario.model_validate(
        {
            "id": "t",
            "tools": tools if tools is not None else [WEATHER, TIME],
            "messages": [{"role": "user", "content": "hi"}],
            "expect": expect,
        }
    )


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


def turn(
    calls: Sequence[ToolCall] = (),
    *,
    status: str | None = None,
    text: str = "",
    raw: str | None = None,
    final: str | None = None,
    signals: Sequence[str] = (),
    finish: str | None = "stop",
    retry: bool = False,
    attempted: bool | None = None,
    errors: Sequence[tuple[str, str]] = (),
) -> TurnRecord:
    """A turn record; the parse status defaults to ``strict`` with calls, else ``no_call``."""
    st = status or ("strict" if calls else "no_call")
    parsed = ParseResult.model_validate(
        {
            "calls": [c.model_dump() for c in calls],
            "content": text,
            "raw_content": text if raw is None else raw,
            "status": st,
            "attempted": bool(calls) or st == "failed" if attempted is None else attempted,
            "stop_signals": list(signals),
            "final_answer": final,
            "errors": [ParseIssue(code=c, message=m).model_dump() for c, m in errors],
        }
    )
    return TurnRecord(
        request={"messages": []},
        reply=ModelReply(text=text, finish_reason=finish),
        parsed=parsed,
        retry=retry,
    )
