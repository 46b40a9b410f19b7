"""xml reads calls exactly as the Hermes/Qwen chat templates write them.

The templates (``../shared/templates``, next to the repository; skipped when absent) are
rendered the way Hugging Face ``transformers`` renders them (a sandboxed Jinja
environment, ``tojson`` without HTML escaping), for an assistant turn holding calls;
the turn's text, as a server returns it (template tokens stripped), must parse back to
the same calls, strictly, with nothing visible and no stop signal. Also with the final
``</tool_call>`` eaten by a stop sequence, and with a literal ``</tool_call>`` inside an
argument string (``tojson`` leaves it as is).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from toolbench.formats.xml import Xml

TEMPLATES = Path(__file__).resolve().parents[2].parent / "shared" / "templates"
NAMES = (
    "Qwen-Qwen2.5-7B-Instruct",
    "Qwen-Qwen3-0.6B",
    "Qwen-QwQ-32B",
    "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use",
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use",
)
CALLS: list[dict[str, Any]] = [
    {"name": "get_weather", "arguments": {"city": "Paris"}},
    {"name": "search", "arguments": {"q": 'a </tool_call> "b" {c}', "n": [1, {"d": None}]}},
]
TOOLS = [
    {"type": "function", "function": {"name": c["name"], "description": "", "parameters": {}}}
    for c in CALLS
]


def _tojson(value: Any, indent: int | None = None, ensure_ascii: bool = False) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent)


def _raise(message: str) -> None:
    raise ValueError(message)


def assistant_turn(name: str, content: str) -> str:
    """The assistant turn's text as the template renders it, without its template tokens."""
    path = TEMPLATES / f"{name}.jinja"
    if not path.is_file():
        pytest.skip(f"chat templates not found: {path}")
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    calls = [{"type": "function", "function": c} for c in CALLS]
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": content, "tool_calls": calls},
    ]
    out = env.from_string(path.read_text(encoding="utf-8")).render(
        messages=messages, tools=TOOLS, add_generation_prompt=False, bos_token="", eos_token=""
    )
    turn = out.rsplit("<|im_start|>assistant", 1)[1]
    return turn.split("<|im_end|>", 1)[0]


@pytest.mark.parametrize("content", ["", "Let me check."])
@pytest.mark.parametrize("name", NAMES)
def test_template_calls_parse_back_strictly(name: str, content: str) -> None:
    turn = assistant_turn(name, content)
    assert turn.count("<tool_call>") == len(CALLS)
    for text in (turn, turn.rstrip().removesuffix("</tool_call>")):  # tag eaten by a stop
        got = Xml().parse(text)
        assert [{"name": c.name, "arguments": c.arguments} for c in got.calls] == CALLS
        assert (got.status, got.errors, got.stop_signals) == ("strict", [], [])
        assert got.content == (content if content in turn else "")  # Hermes drops it
