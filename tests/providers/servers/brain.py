"""What a fake model answers: a function of the request, never of the order of requests.

The conversation is first reduced to plain ``(role, text)`` turns by the protocol module.
The brain finds the city the first user message asks about and whether a tool result
has come back yet. Without one it calls ``get_weather`` for that city, in the syntax the
system prompt asks for (native calls when the request offered tools natively); with one
it answers in prose quoting the temperature the result holds.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

CITIES = ("Lisbon", "Oslo", "Paris", "Tokyo", "Zurich")


@dataclass
class Call:
    name: str
    arguments: dict[str, str]


@dataclass
class Answer:
    text: str


Turn = tuple[str, str]
"""(role, text): role is system, user, assistant or tool."""

STYLES = (
    # (style, a phrase only that format's system prompt holds)
    ("react", "Action Input:"),
    ("xml", "<tool_call>"),
    ("mistral", "[TOOL_CALLS]"),
    ("claude-xml", "<function_calls>"),
    ("prompt-json", '"tool": "<tool name>"'),
)


def style_of(system: str) -> str | None:
    """Which text format the system prompt teaches (None: none, a native request)."""
    for style, phrase in STYLES:
        if phrase in system:
            return style
    return None


def style_in(turns: list[Turn]) -> str | None:
    """The text format taught by the system turns, or by the first user turn (providers
    without system instructions get the system prompt merged into it)."""
    first_user = next((t for r, t in turns if r == "user"), "")
    return style_of("\n".join([*(t for r, t in turns if r == "system"), first_user]))


def city_of(turns: list[Turn]) -> str:
    first = next((t for r, t in turns if r == "user"), "")
    return next((c for c in CITIES if c.lower() in first.lower()), "Paris")


def tool_result(turns: list[Turn]) -> str | None:
    """The latest tool result: a ``tool`` turn, or (text formats) a user turn after the
    first user message (the formats send results back as user messages)."""
    users = 0
    found = None
    for role, text in turns:
        if role == "tool":
            found = text
        elif role == "user":
            users += 1
            if users > 1:
                found = text
    return found


def decide(turns: list[Turn]) -> Call | Answer:
    city = city_of(turns)
    result = tool_result(turns)
    if result is None:
        return Call("get_weather", {"city": city})
    # The result may come back JSON-encoded once more (escaped quotes): tolerate both.
    m = re.search(r'temperature[\\"\']*\s*[:=]\s*[\\"\']*(-?\d+(?:\.\d+)?)', result)
    temp = m.group(1) if m else "unknown"
    return Answer(f"It is {temp} degrees in {city} right now.")


def as_text(action: Call | Answer, style: str) -> str:
    """``action`` written as a model answering in ``style`` would write it."""
    if isinstance(action, Answer):
        if style == "react":
            return f"Thought: I now know the final answer\nFinal Answer: {action.text}"
        return action.text
    args = json.dumps(action.arguments)
    if style == "react":
        return f"Thought: I need the weather.\nAction: {action.name}\nAction Input: {args}"
    if style == "xml":
        body = json.dumps({"name": action.name, "arguments": action.arguments})
        return f"<tool_call>\n{body}\n</tool_call>"
    if style == "mistral":
        return f"[TOOL_CALLS]{action.name}[ARGS]{args}"
    if style == "claude-xml":
        params = "".join(
            f'<parameter name="{k}">{v}</parameter>\n' for k, v in action.arguments.items()
        )
        invoke = f'<invoke name="{action.name}">\n{params}</invoke>'
        return f"<function_calls>\n{invoke}\n</function_calls>"
    return json.dumps({"tool": action.name, "arguments": action.arguments})


def cut_at_stop(text: str, stop: list[str] | None) -> tuple[str, str | None]:
    """``text`` cut before the first stop sequence, as servers do; and the one hit."""
    hits = [(text.find(s), s) for s in stop or [] if s and s in text]
    if not hits:
        return text, None
    at, seq = min(hits)
    return text[:at], seq
