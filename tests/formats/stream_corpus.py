"""Replies to stream through the incremental readers, and helpers to feed them.

Three sources, each reply paired with the format it was written for: the parse tables each
registered format declares (``Format.test_cases``, :mod:`declared`), the assistant
messages of the committed cassettes, and the conformance corpus (``../shared/conformance``,
absent on some machines) with its ``streaming_chunks``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from declared import declaring, replies

from toolbench.formats.base import Format
from toolbench.formats.reader_events import Event, IncrementalReader

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = ROOT / "cassettes"
CONFORMANCE = ROOT.parent / "shared" / "conformance"
EXTRA = ROOT / "tests" / "data" / "conformance_extra.jsonl"

FAMILIES = {
    "hermes": "xml",
    "llama3_json": "llama3-json",
    "pythonic": "pythonic",
    "mistral": "mistral",
    "qwen3_xml": "qwen3-coder",
    "deepseek": "deepseek",
    "kimi": "kimi-k2",
    "gpt_oss": "harmony",
    "minimax": "claude-xml",
}
"""Conformance family -> the toolbench format that reads it (other families: ``native``)."""


@dataclass(frozen=True)
class Reply:
    source: str
    fmt: str
    text: str
    chunks: tuple[str, ...] | None = None
    """A split given by the source (the conformance vectors' ``streaming_chunks``)."""


def declared_replies(names: Sequence[str] | None = None) -> list[Reply]:
    """The replies of the parse tables the formats ``names`` declare (default: every
    registered format that declares test cases)."""
    return [
        Reply(source, name, text)
        for name in (names if names is not None else declaring())
        for source, text in replies(name)
    ]


def _cassette_format(directory: str) -> str:
    return directory.split("_shots_")[0]


def _cassettes() -> list[Reply]:
    out: list[Reply] = []
    for path in sorted(CASSETTES.glob("*/*/*.json")):
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        for n, exchange in enumerate(data.get("exchanges", [])):
            body = exchange.get("response", {}).get("body") or {}  # plain replies only
            for choice in body.get("choices", []):
                content = (choice.get("message") or {}).get("content")
                if isinstance(content, str) and content:
                    rel = path.relative_to(CASSETTES)
                    out.append(Reply(f"{rel}#{n}", _cassette_format(path.parent.name), content))
    return out


def _conformance() -> list[Reply]:
    out: list[Reply] = []
    paths = [CONFORMANCE / "vllm.jsonl", CONFORMANCE / "llamacpp.jsonl", EXTRA]
    for path in paths:
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            chunks = row.get("streaming_chunks")
            given = tuple(chunks) if isinstance(chunks, list) else None
            fmt = FAMILIES.get(row["format"], "native")
            out.append(Reply(f"{path.name}:{row['id']}", fmt, row["model_output"], given))
    return out


@lru_cache(maxsize=1)
def corpus() -> tuple[Reply, ...]:
    """Every reply: tables, cassettes, conformance (when present)."""
    return (*declared_replies(), *_cassettes(), *_conformance())


def split_at(text: str, cuts: Sequence[int]) -> list[str]:
    """``text`` cut at the given offsets (clamped, sorted; empty pieces kept)."""
    points = sorted(min(max(0, c), len(text)) for c in cuts)
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def read_all(reader: IncrementalReader, chunks: Sequence[str]) -> list[Event]:
    events: list[Event] = []
    for chunk in chunks:
        events.extend(reader.feed(chunk))
    events.extend(reader.close())
    return events


Trace = tuple[str, tuple[tuple[str, int, int], ...]]


def trace(events: Sequence[Event]) -> Trace:
    """What a split must not change: the text shown, and where each call and markup lies."""
    shown = "".join(e.text for e in events if e.kind == "text")
    spans = tuple((e.kind, e.start, e.end) for e in events if e.kind in ("call_complete", "markup"))
    return shown, spans


def misplaced(events: Sequence[Event], text: str) -> list[Event]:
    """Events whose text is not the reply's text at their offsets (should be none)."""
    return [e for e in events if e.kind != "final" and text[e.start : e.end] != e.text]


def stream(fmt: Format, text: str, chunks: Sequence[str], tools: Any = None) -> list[Event]:
    assert "".join(chunks) == text
    return read_all(fmt.reader(tools), chunks)
