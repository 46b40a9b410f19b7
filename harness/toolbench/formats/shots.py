"""Few-shot examples for the prompt formats (``prompt-json:shots=N``).

The examples use a neutral tool of their own (a world clock) rather than the scenario's
tools, so they teach the call syntax without leaking a scenario's answer. Each example
shows one exchange in full: the question, the call in the format's exact syntax, the
tool result as the format feeds it back, and the final text answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolbench.tools import ToolDef

EXAMPLE_TOOL = ToolDef(
    name="get_local_time",
    description="Current local time in a city (example tool, not available now).",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "format": {"type": "string", "enum": ["12h", "24h"], "default": "24h"},
        },
        "required": ["city"],
    },
)


@dataclass(frozen=True)
class Shot:
    question: str
    arguments: dict[str, Any]
    result: str
    answer: str


SHOTS: tuple[Shot, ...] = (
    Shot(
        "What time is it in Tokyo?", {"city": "Tokyo"}, '{"time": "14:05"}', "It is 14:05 in Tokyo."
    ),
    Shot(
        "Tell me the time in Lima, 12-hour clock please.",
        {"city": "Lima", "format": "12h"},
        '{"time": "3:20 AM"}',
        "It is 3:20 AM in Lima.",
    ),
    Shot("Current time in Oslo?", {"city": "Oslo"}, '{"time": "07:45"}', "It is 07:45 in Oslo."),
    Shot(
        "Is it late in Sydney right now?",
        {"city": "Sydney"},
        '{"time": "23:10"}',
        "Yes, it is 23:10 in Sydney.",
    ),
    Shot(
        "What's the time in Nairobi?",
        {"city": "Nairobi"},
        '{"time": "09:00"}',
        "It is 09:00 in Nairobi.",
    ),
    Shot(
        "Time in Denver, 12h format.",
        {"city": "Denver", "format": "12h"},
        '{"time": "6:30 PM"}',
        "It is 6:30 PM in Denver.",
    ),
    Shot(
        "How late is it in Reykjavik?",
        {"city": "Reykjavik"},
        '{"time": "12:00"}',
        "It is 12:00 (noon) in Reykjavik.",
    ),
    Shot(
        "Clock check for Mumbai, please.",
        {"city": "Mumbai"},
        '{"time": "18:15"}',
        "It is 18:15 in Mumbai.",
    ),
)


def render_shots(
    n: int,
    call: Callable[[str, dict[str, Any]], str],
    result: Callable[[str, str], str],
    answer: Callable[[str], str],
) -> str:
    """``n`` worked examples; the format supplies how a call, a result and an answer look."""
    if n <= 0:
        return ""
    blocks = [
        "Examples (they use an example tool, get_local_time, which is NOT available now; "
        "only call the tools listed above):"
    ]
    for i in range(n):
        shot = SHOTS[i % len(SHOTS)]
        blocks.append(
            f"Example {i + 1}:\n"
            f"User: {shot.question}\n"
            f"Assistant: {call(EXAMPLE_TOOL.name, shot.arguments)}\n"
            f"{result(EXAMPLE_TOOL.name, shot.result)}\n"
            f"Assistant: {answer(shot.answer)}"
        )
    return "\n\n".join(blocks)
