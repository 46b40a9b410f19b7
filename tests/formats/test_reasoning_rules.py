"""One rule per family for reasoning tags the reply does not pair (issue 20).

A ``</think>`` with no ``<think>`` before it: families whose chat templates open the think
block in the generation prompt (DeepSeek R1 / V3.1, Qwen3.5 / Nemotron 3 / Step 3.5, Hermes
and QwQ templates) read the text before it as reasoning, as llama.cpp does for them; the
others (Llama, Mistral, Kimi, gpt-oss, Claude prompts) never open one, so the tag is a stray
marker and the text before it stays visible. Mistral's own ``[/THINK]`` without ``[THINK]``
closes a block whose opener the reply does not show: the text before it is reasoning.
Whole and streamed parses give the same content and reasoning.
"""

from __future__ import annotations

import pytest
from fmt_helpers import TOOLS
from stream_corpus import read_all

from toolbench.formats.format_registry import get_format

STRAY = "Sure, checking the weather now.</think>It is sunny."

# (format, reply, content, reasoning)
RULES: list[tuple[str, str, str, str | None]] = [
    ("llama3-json", STRAY, "Sure, checking the weather now.It is sunny.", None),
    ("pythonic", STRAY, "Sure, checking the weather now.It is sunny.", None),
    ("mistral", STRAY, "Sure, checking the weather now.It is sunny.", None),
    ("kimi-k2", STRAY, "Sure, checking the weather now.It is sunny.", None),
    ("claude-xml", STRAY, "Sure, checking the weather now.It is sunny.", None),
    ("harmony", STRAY, "Sure, checking the weather now.It is sunny.", None),
    ("deepseek", STRAY, "It is sunny.", "Sure, checking the weather now."),
    ("qwen3-coder", STRAY, "It is sunny.", "Sure, checking the weather now."),
    ("xml", STRAY, "It is sunny.", "Sure, checking the weather now."),
    ("mistral", "plan the call[/THINK]It is sunny.", "It is sunny.", "plan the call"),
    ("mistral", "[THINK]plan[/THINK]It is sunny.", "It is sunny.", "plan"),
    ("mistral", "a[/THINK]b[THINK]c[/THINK]d", "bd", "a\nc"),
    ("llama3-json", "<think>plan</think>It is sunny.", "It is sunny.", "plan"),
    ("llama3-json", "x</think>y<think>plan</think>z", "xyz", "plan"),
]


@pytest.mark.parametrize(
    ("spec", "reply", "content", "reasoning"), RULES, ids=[f"{r[0]}:{r[1][:12]}" for r in RULES]
)
def test_unpaired_reasoning_tags_follow_the_family_rule(
    spec: str, reply: str, content: str, reasoning: str | None
) -> None:
    fmt = get_format(spec)
    whole = fmt.parse(reply, TOOLS)
    assert (whole.content, whole.reasoning or None) == (content, reasoning)
    for size in (1, 3):
        reader = fmt.reader(TOOLS)
        read_all(reader, [reply[i : i + size] for i in range(0, len(reply), size)])
        assert (reader.result.content, reader.result.reasoning or None) == (content, reasoning)
