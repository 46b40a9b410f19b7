"""``toolbench cassettes audit``: scan cassettes for anything shaped like a secret.

Two passes per file, because an encoding can hide a key from a line scanner: every raw
line, and every parsed value. For YAML files (the layout before one JSON cassette), every
parsed scalar (keys and values, with escapes resolved and folded or continued lines
joined: a ``"sk-ab\\`` / ``cd..."`` split or a ``\\u0073k-`` escape is only a key once
parsed), found with the libyaml composer so each finding keeps the line where its scalar
starts. JSON files (the cassettes) are decoded as well, secret headers are read where
they are keys of a ``headers`` mapping, and each recorded stream is scanned as its reader
sees it (split over events, escaped, in base64 chunks: :func:`_audit_json`). Shapes come
from :mod:`toolbench.secret_shapes` (detect-secrets plus toolbench's own); the values of
secret environment variables now set are found too. Distinct strings repeat across
cassettes (system prompts, tool lists), so each is scanned once.
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from toolbench.cassettes.stream_scrub import event_texts, stream_texts
from toolbench.errors import UserError
from toolbench.redaction import SECRET_HEADERS, is_secret_header, secret_values
from toolbench.secret_shapes import find_shapes

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_YAML_SUFFIXES = (".yaml", ".yml")
_KEY_LINE = re.compile(r"[ \t-]*['\"]?([A-Za-z0-9_-]+)['\"]?[ \t]*:")
"""A mapping key at the start of a raw line: a secret header there is a finding even in a
file that does not parse as YAML. (A case-insensitive alternation of the names was
much slower on the committed cassettes.)"""


@dataclass(frozen=True, order=True)
class Finding:
    path: Path
    line: int
    kind: str


@functools.lru_cache(maxsize=65536)
def _kinds(text: str) -> frozenset[str]:
    return frozenset(s.kind for s in find_shapes(text))


_CACHED_LEN = 4096
"""Longer strings are scanned without the cache, which would otherwise keep them alive."""


def _scan_text(text: str, values: tuple[str, ...]) -> set[str]:
    kinds: set[str] = set()
    for piece in text.split("\n"):
        if len(piece) <= _CACHED_LEN:
            kinds |= _kinds(piece)
        else:
            kinds.update(s.kind for s in find_shapes(piece))
    if any(v in text for v in values):
        kinds.add("environment secret value")
    return kinds


def _scalars(node: yaml.Node, parent_key: str = "") -> Iterator[tuple[int, str, str]]:
    """(line, scalar, key it sits under) for every scalar; keys are scalars too."""
    stack: list[tuple[yaml.Node, str]] = [(node, parent_key)]
    while stack:  # iterative: a deep document must not hit the recursion limit
        n, under = stack.pop()
        if isinstance(n, yaml.ScalarNode):
            yield n.start_mark.line + 1, str(n.value), under
        elif isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                key = str(k.value) if isinstance(k, yaml.ScalarNode) else ""
                if under.lower() == "headers" and is_secret_header(key):
                    yield k.start_mark.line + 1, "\0secret header", under
                stack.append((k, under))
                stack.append((v, key))
        elif isinstance(n, yaml.SequenceNode):
            stack.extend((v, under) for v in n.value)


def audit_file(path: Path, values: tuple[str, ...]) -> list[Finding]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found: set[Finding] = set()
    header_keys: set[Finding] = set()
    for n, line in enumerate(text.splitlines(), 1):
        found.update(Finding(path, n, kind) for kind in _scan_text(line, values))
        key = _KEY_LINE.match(line)
        if key and key.group(1).lower() in SECRET_HEADERS:
            header_keys.add(Finding(path, n, "secret header"))
    docs: list[yaml.Node | None] = []
    parsed = path.suffix in _YAML_SUFFIXES
    if parsed:
        try:
            docs = list(yaml.compose_all(text, Loader=_Loader))
        except yaml.YAMLError:
            parsed = False  # not YAML after all: the raw lines were scanned
    data: Any = _NOT_JSON
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except (RecursionError, ValueError):
            data = _NOT_JSON
    if data is not _NOT_JSON:
        # Parsed JSON says what a name is under, as YAML does (below): a secret header's
        # name counts where it is a key of a ``headers`` mapping.
        lines = _header_key_lines(text)
        secret = _json_secret_headers(data)
        found |= {f for f in header_keys if f.line in lines}
        if secret and not any(f.kind == "secret header" for f in found):
            found.add(Finding(path, 1, "secret header"))  # one line of JSON: no better line
    elif not parsed:
        # A header name on a raw line counts only where YAML cannot say what it is under:
        # in a parsed cassette, ``Authorization:`` is a header under ``headers`` and a
        # property name in a tool's JSON Schema (BFCL's REST tools have one) elsewhere.
        found |= header_keys
    for doc in docs:
        if doc is None:
            continue
        for at, scalar, _under in _scalars(doc):
            if scalar == "\0secret header":
                found.add(Finding(path, at, "secret header"))
                continue
            found.update(Finding(path, at, kind) for kind in _scan_text(scalar, values))
    if data is not _NOT_JSON:
        found |= _audit_json(path, text, data, values)
    return sorted(found)


_NOT_JSON = object()


_HEADERS_OPEN = re.compile(r'^([ \t]*)"headers"[ \t]*:[ \t]*\{[ \t]*$')


def _header_key_lines(text: str) -> set[int]:
    """The lines of indented JSON that hold a key of a ``headers`` mapping (the first
    indentation inside it; a deeper line is a value's)."""
    out: set[int] = set()
    outer: int | None = None
    inner: int | None = None
    for n, line in enumerate(text.splitlines(), 1):
        indent = len(line) - len(line.lstrip(" \t"))
        if outer is not None:
            if not line.strip() or indent <= outer:
                outer = inner = None
            else:
                inner = indent if inner is None else inner
                if indent == inner:
                    out.add(n)
                continue
        opened = _HEADERS_OPEN.match(line)
        if opened:
            outer, inner = len(opened.group(1)), None
    return out


def _json_secret_headers(data: Any) -> set[str]:
    """The secret header names (lower case) that are keys of a ``headers`` mapping."""
    out: set[str] = set()
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:  # iterative: a deep document must not hit the recursion limit
        item, under = stack.pop()
        if isinstance(item, dict):
            for k, v in item.items():
                if under == "headers" and is_secret_header(str(k)):
                    out.add(str(k).lower())
                stack.append((v, str(k).lower()))
        elif isinstance(item, list):
            stack.extend((v, under) for v in item)
    return out


STREAM_KINDS = ("toolbench-cassette", "toolbench-sse")
"""Cassettes whose exchanges may hold streams: the one recording format, and the SSE
cassette of the layout before it (audited until migrated)."""


def _audit_json(path: Path, text: str, data: Any, values: tuple[str, ...]) -> set[Finding]:
    """A JSON file's decoded strings (a ``\\u0073k-`` escape is a key only once decoded)
    and, in a cassette, each recorded stream as its reader sees it: the body joined from
    its chunks (base64 ones decoded) and the strings of its events joined per JSON path
    (a key split over two events). A finding is reported at the line where the
    exchange's chunks begin."""
    found: set[Finding] = set()
    for value in _json_strings(data):
        found.update(Finding(path, 1, kind) for kind in _scan_text(value, values))
    exchanges = data.get("exchanges") if isinstance(data, dict) else None
    if exchanges is None or data.get("kind") not in STREAM_KINDS:
        return found  # not a cassette (a JSON list or another object): its strings only
    if not isinstance(exchanges, list):
        return found
    starts = iter(m.start() for m in re.finditer(r'"chunks"\s*:', text))
    for ex in exchanges:
        response = ex.get("response") if isinstance(ex, dict) else None
        if not isinstance(response, dict) or not isinstance(response.get("chunks"), list | dict):
            continue  # a plain exchange: its decoded strings were scanned above
        chunks = _chunks(ex)
        start = next(starts, None)
        line = 1 if start is None else text.count("\n", 0, start) + 1
        headers = (ex.get("response") or {}).get("headers") if isinstance(ex, dict) else None
        ctype = str((headers or {}).get("content-type", "")) if isinstance(headers, dict) else ""
        texts = stream_texts(chunks, binary="amazon.eventstream" in ctype.lower())
        events = response.get("events")
        if isinstance(events, list):  # the decoded events kept beside the chunks
            texts.extend(event_texts(events))
        for joined in texts:
            found.update(Finding(path, line, kind) for kind in _scan_text(joined, values))
    return found


def _chunks(exchange: Any) -> list[tuple[bytes, float]]:
    """A recorded stream's chunks as bytes, from either stored form (version 3's list of
    objects, version 4's body and sizes: :mod:`toolbench.cassettes.chunk_list`); what
    does not decode is scanned as the text it is."""
    response = exchange.get("response") if isinstance(exchange, dict) else None
    chunks = response.get("chunks") if isinstance(response, dict) else None
    if isinstance(chunks, dict):
        return [(_bytes_of(chunks), 0.0)]
    out: list[tuple[bytes, float]] = []
    for c in chunks if isinstance(chunks, list) else ():
        if isinstance(c, dict):
            out.append((_bytes_of(c), 0.0))
    return out


def _bytes_of(stored: dict[str, Any]) -> bytes:
    """A stored chunk's or body's bytes (``b64`` decoded, else ``text``)."""
    try:
        if isinstance(stored.get("b64"), str):
            return base64.b64decode(stored["b64"])
        return str(stored.get("text") or "").encode("utf-8")
    except ValueError:  # base64 that does not decode, a lone surrogate in the text
        kept = stored.get("b64") if isinstance(stored.get("b64"), str) else stored.get("text")
        return str(kept).encode("utf-8", "surrogatepass")


def _json_strings(data: Any) -> Iterator[str]:
    stack = [data]
    while stack:  # iterative: a deep document must not hit the recursion limit
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def audit(root: Path) -> list[Finding]:
    """Every secret-shaped string (and every current secret environment value)."""
    if not root.exists():
        raise UserError(f"{root}: no such directory")
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    values = tuple(secret_values())
    found: list[Finding] = []
    for f in files:
        found.extend(audit_file(f, values))
    return found
