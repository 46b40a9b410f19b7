"""Conformance with the vLLM and llama.cpp parser test vectors.

``xml`` must read every Hermes vector (``<tool_call>{json}</tool_call>``) as the reference
parsers do; ``prompt-json`` is also held to the bare-JSON (``llama3_json``) vectors.

The corpus (``../shared/conformance``, next to the repository) holds the calls and the
content each reference project's own tests expect. Calls must agree exactly (names and
arguments as parsed JSON, in order); content is compared only where the source asserts
it, after treating None and "" alike and stripping surrounding whitespace.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolbench.formats.registry import get_format

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "conformance"
FILES = ("vllm.jsonl", "llamacpp.jsonl")
MIN_CALL_AGREEMENT = 0.98


def _vectors(name: str, family: str = "hermes") -> list[dict[str, Any]]:
    path = CORPUS / name
    if not path.is_file():
        pytest.skip(f"conformance corpus not found: {path}")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [r for r in rows if r["format"] == family]


def _norm(text: str | None) -> str:
    return (text or "").strip()


def _compare(vec: dict[str, Any], fmt: str = "xml") -> tuple[bool, bool | None, bool | None, str]:
    """Calls agree, content agrees (None: unchecked), reasoning agrees (None: unchecked),
    and the reason for a disagreement."""
    got = get_format(fmt).parse(vec["model_output"])
    calls = [{"name": c.name, "arguments": c.arguments} for c in got.calls]
    calls_ok = calls == vec["expected_calls"]
    content_ok: bool | None = None
    if vec["content_specified"]:
        content_ok = _norm(got.content) == _norm(vec["expected_content"])
    reasoning_ok: bool | None = None
    if "expected_reasoning" in vec:
        reasoning_ok = _norm(got.reasoning) == _norm(vec["expected_reasoning"])
    reason = ""
    if not calls_ok:
        reason = f"calls: expected {vec['expected_calls']!r}, got {calls!r} ({got.codes()})"
    elif content_ok is False:
        reason = f"content: expected {_norm(vec['expected_content'])!r}, got {_norm(got.content)!r}"
    elif reasoning_ok is False:
        reason = f"reasoning: expected {vec['expected_reasoning']!r}, got {got.reasoning!r}"
    return calls_ok, content_ok, reasoning_ok, reason


# (corpus format family, toolbench format that reads it): hermes is the xml format's own
# syntax; bare llama3-style JSON calls are what prompt-json reads with the "name" key.
FAMILIES = (("hermes", "xml"), ("llama3_json", "prompt-json"))


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize(("family", "fmt"), FAMILIES)
def test_vectors_agree(name: str, family: str, fmt: str) -> None:
    vectors = _vectors(name, family)
    assert vectors, f"{name}: no {family} vectors"
    rows = [(v, *_compare(v, fmt)) for v in vectors]
    calls_agree = sum(1 for _, ok, _, _, _ in rows if ok)
    checked = [c for _, _, c, _, _ in rows if c is not None]
    content_agree = sum(1 for c in checked if c)
    thought = [r for _, _, _, r, _ in rows if r is not None]
    lines = [
        f"{name}: {family} vectors {len(rows)}, parsed by {fmt}",
        f"  calls agree   {calls_agree}/{len(rows)} ({calls_agree / len(rows):.1%})",
        f"  content agree {content_agree}/{len(checked)} (where the source checks content)",
        f"  reasoning     {sum(thought)}/{len(thought)} (where the source gives reasoning)",
    ]
    lines += [f"  DISAGREE {v['id']}: {why}" for v, _, _, _, why in rows if why]
    report = "\n".join(lines)
    print(report)
    assert calls_agree / len(rows) >= MIN_CALL_AGREEMENT, report
