"""Conformance with the vLLM and llama.cpp parser test vectors.

``xml`` must read every Hermes vector (``<tool_call>{json}</tool_call>``) as the reference
parsers do; ``prompt-json`` is also held to the bare-JSON (``llama3_json``) vectors, and each
model-family dialect (``llama3-json``, ``pythonic``, ``mistral``, ``qwen3-coder``,
``deepseek``, ``kimi-k2``, ``harmony``) to its own family's vectors.

The corpus (``../shared/conformance``, next to the repository) holds the calls and the
content each reference project's own tests expect. Calls must agree exactly (names and
arguments as parsed JSON, in order); content is compared only where the source asserts
it, after treating None and "" alike and stripping surrounding whitespace.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from toolbench import codes
from toolbench.formats.base import ParseResult
from toolbench.formats.format_registry import format_class, format_names, get_format
from toolbench.tools import ToolDef

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "conformance"
EXTRA = Path(__file__).resolve().parents[1] / "data" / "conformance_extra.jsonl"
"""Vectors gathered for the dialects from public parser tests, same schema, each line
naming its ``source`` (project, commit, file) and ``license``."""
SOURCE_TOOLS = Path(__file__).resolve().parents[1] / "data" / "conformance_tools.json"
"""Tools a source test gave its parser that its corpus lines do not record (vLLM's fixtures)."""
FILES = ("vllm.jsonl", "llamacpp.jsonl")
MIN_CALL_AGREEMENT = 0.98


def _rows(name: str) -> list[dict[str, Any]]:
    path = CORPUS / name
    if not path.is_file():
        pytest.skip(f"conformance corpus not found: {path}")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _vectors(name: str, family: str = "hermes") -> list[dict[str, Any]]:
    return [r for r in _rows(name) if r["format"] == family]


def _norm(text: str | None) -> str:
    return (text or "").strip()


def _tools(vec: dict[str, Any]) -> list[ToolDef] | None:
    """The tool definitions the source gave its parser (llama.cpp lines, or the source
    test's fixture from ``conformance_tools.json``), as ToolDefs.

    Schema-aware dialects (qwen3-coder, claude-xml, DSML) type bare-text values with them,
    as the reference parsers do; without them a value is typed by its JSON reading.
    """
    tools = vec.get("tools") or _source_tools().get(vec["source"], {}).get("tools")
    if not tools:
        return None
    return [
        ToolDef(name=t["name"], description=t.get("description") or "", parameters=t["parameters"])
        for t in tools
        if isinstance(t, dict) and t.get("name") and isinstance(t.get("parameters"), dict)
    ] or None


@functools.cache
def _source_tools() -> dict[str, Any]:
    sources: dict[str, Any] = json.loads(SOURCE_TOOLS.read_text(encoding="utf-8"))["sources"]
    return sources


def _calls_agree(vec: dict[str, Any], got: ParseResult) -> bool:
    """Calls agree exactly; a call the source expects with an empty name (a malformed reply
    the reference still surfaces) agrees when toolbench reports it as ``call.missing_name``
    instead of inventing a call, since a ToolCall always names a tool."""
    calls = [{"name": c.name, "arguments": c.arguments} for c in got.calls]
    expected = vec["expected_calls"]
    nameless = [c for c in expected if not c["name"]]
    if not nameless:
        return calls == expected
    named = [c for c in expected if c["name"]]
    return calls == named and codes.CALL_MISSING_NAME in got.codes()


def _compare(vec: dict[str, Any], fmt: str = "xml") -> tuple[bool, bool | None, bool | None, str]:
    """Calls agree, content agrees (None: unchecked), reasoning agrees (None: unchecked),
    and the reason for a disagreement."""
    tools = _tools(vec) if fmt not in ("xml", "prompt-json") else None
    got = get_format(fmt).parse(vec["model_output"], tools)
    calls = [{"name": c.name, "arguments": c.arguments} for c in got.calls]
    calls_ok = _calls_agree(vec, got)
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


def _families() -> tuple[tuple[str, str], ...]:
    """(corpus family, toolbench format that reads it), from the formats' own
    ``conformance_family`` declarations: hermes is the xml format's own syntax; bare
    llama3-style JSON calls are also what prompt-json reads with the "name" key; every
    dialect format is held to its own family's vectors, a plugin's dialect too."""
    out = []
    for name in format_names():
        family = format_class(name).conformance_family
        if family is not None:
            out.append((family, name))
    return tuple(sorted(out))


FAMILIES = _families()


def _report(label: str, vectors: list[dict[str, Any]], fmt: str) -> tuple[int, str]:
    rows = [(v, *_compare(v, fmt)) for v in vectors]
    calls_agree = sum(1 for _, ok, _, _, _ in rows if ok)
    checked = [c for _, _, c, _, _ in rows if c is not None]
    content_agree = sum(1 for c in checked if c)
    thought = [r for _, _, _, r, _ in rows if r is not None]
    lines = [
        f"{label}: vectors {len(rows)}, parsed by {fmt}",
        f"  calls agree   {calls_agree}/{len(rows)} ({calls_agree / len(rows):.1%})",
        f"  content agree {content_agree}/{len(checked)} (where the source checks content)",
        f"  reasoning     {sum(thought)}/{len(thought)} (where the source gives reasoning)",
    ]
    lines += [f"  DISAGREE {v['id']}: {why}" for v, _, _, _, why in rows if why]
    return calls_agree, "\n".join(lines)


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize(("family", "fmt"), FAMILIES)
def test_vectors_agree(name: str, family: str, fmt: str) -> None:
    """Per source file (as the corpus README asks); a file without the family is skipped."""
    vectors = _vectors(name, family)
    if not vectors:
        pytest.skip(f"{name}: no {family} vectors")
    calls_agree, report = _report(f"{name}: {family}", vectors, fmt)
    print(report)
    assert calls_agree / len(vectors) >= MIN_CALL_AGREEMENT, report


@pytest.mark.parametrize(("family", "fmt"), FAMILIES)
def test_family_agrees(family: str, fmt: str) -> None:
    """Per family over both files: the agreement the README reports."""
    vectors = [v for name in FILES for v in _vectors(name, family)]
    assert vectors, f"no {family} vectors"
    calls_agree, report = _report(f"all: {family}", vectors, fmt)
    print(report)
    assert calls_agree / len(vectors) >= MIN_CALL_AGREEMENT, report


EXTRA_FAMILIES = tuple((f, fmt) for f, fmt in FAMILIES if fmt != "prompt-json")


@pytest.mark.parametrize(("family", "fmt"), EXTRA_FAMILIES)
def test_gathered_vectors_agree(family: str, fmt: str) -> None:
    """The vectors gathered into tests/data (SGLang's, vLLM's and Ollama's parser tests),
    reported apart; every line names its source and licence."""
    rows = [json.loads(line) for line in EXTRA.read_text(encoding="utf-8").splitlines() if line]
    assert all(r["source"] and r["license"] for r in rows)
    vectors = [r for r in rows if r["format"] == family]
    if not vectors:
        pytest.skip(f"no gathered {family} vectors")
    calls_agree, report = _report(f"gathered: {family}", vectors, fmt)
    print(report)
    assert calls_agree / len(vectors) >= MIN_CALL_AGREEMENT, report
