"""One streamed Gemini function call's arguments, put back together from its parts.

With ``toolConfig.functionCallingConfig.streamFunctionCallArguments`` a Gemini model
(Vertex AI; googleapis js-genai ``PartialArg``) sends a call's arguments as a list of
``PartialArg`` per part: ``jsonPath`` (RFC 9535, e.g. ``$.foo.bar[0].data``) and one of
``stringValue`` / ``numberValue`` / ``boolValue`` / ``nullValue`` (``"NULL_VALUE"``), with
``willContinue`` when more of the same path's string follows. Strings are joined across
parts at their path, the other values are set, objects and arrays are made as the paths
name them, so the arguments equal the ``args`` object a non-streamed reply carries.

What a server sends is hostile input: a path this reader cannot read, a path through a
value of another type, an array index past the end, a path deeper than
:data:`MAX_DEPTH` is a :class:`PartialArgsError` (the caller's typed fault), never an
exception of Python's; each piece costs its path's length, so a stream is read in
linear time (string pieces are joined once, at the end).
"""

from __future__ import annotations

import itertools
import re
from typing import Any

MAX_DEPTH = 64
"""The deepest path taken (deeper ones would make arguments no JSON encoder recurses into)."""

_NAME = re.compile(r"\.([A-Za-z_][A-Za-z0-9_\-]*)")
_INDEX = re.compile(r"\[(0|[1-9][0-9]{0,8})\]")
_QUOTED = re.compile(r"""\[(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\]""")
_ESCAPES = re.compile(r"\\(.)")


class PartialArgsError(ValueError):
    """The parts of a call's arguments cannot be put together (why, in one line)."""


def parse_path(path: Any) -> list[str | int]:
    """The segments of a JSON path (``$``, then ``.name``, ``['name']`` or ``[index]``)."""
    if not isinstance(path, str) or not path.startswith("$"):
        raise PartialArgsError(f"jsonPath {str(path)[:80]!r} does not start with '$'")
    segments: list[str | int] = []
    at = 1
    while at < len(path):
        m = _NAME.match(path, at) or _INDEX.match(path, at) or _QUOTED.match(path, at)
        if m is None or len(segments) >= MAX_DEPTH:
            why = "is deeper than the paths taken" if m is not None else "cannot be read"
            raise PartialArgsError(f"jsonPath {path[:80]!r} {why} (at {at})")
        if m.re is _INDEX:
            segments.append(int(m.group(1)))
        elif m.re is _QUOTED:
            quoted = m.group(1) if m.group(1) is not None else m.group(2)
            segments.append(_ESCAPES.sub(r"\1", quoted))
        else:
            segments.append(m.group(1))
        at = m.end()
    if not segments:
        raise PartialArgsError("jsonPath '$' names the arguments themselves, not one of them")
    return segments


class _Text:
    """A string value still arriving: its pieces, joined once when the call is read."""

    __slots__ = ("pieces",)

    def __init__(self, first: str) -> None:
        self.pieces = [first]


_VALUES = ("stringValue", "numberValue", "boolValue", "nullValue")


def _value(arg: dict[str, Any]) -> tuple[bool, Any]:
    """``(present, value)`` of one PartialArg (a string as :class:`_Text`)."""
    present = [k for k in _VALUES if k in arg]
    if len(present) > 1:
        raise PartialArgsError(f"a partial argument with {' and '.join(present)}")
    if not present:
        return False, None  # a piece announcing its path: nothing to set yet
    key = present[0]
    value = arg[key]
    ok = {
        "stringValue": isinstance(value, str),
        "numberValue": isinstance(value, int | float) and not isinstance(value, bool),
        "boolValue": isinstance(value, bool),
        "nullValue": value in ("NULL_VALUE", None, 0),
    }[key]
    if not ok:
        raise PartialArgsError(f"{key} {str(value)[:40]!r} is not of its type")
    if key == "stringValue":
        return True, _Text(value)
    return True, None if key == "nullValue" else value


class PartialArgs:
    """The arguments of one call, piece by piece (:meth:`add`), then whole (:meth:`value`)."""

    def __init__(self) -> None:
        self.root: dict[str, Any] = {}
        self.open: dict[str, bool] = {}
        """Each path given so far, and whether its last piece said ``willContinue``."""

    def add(self, arg: Any) -> None:
        """One ``PartialArg``; a :class:`PartialArgsError` when it cannot be placed."""
        if not isinstance(arg, dict):
            raise PartialArgsError(f"a partial argument that is not an object: {str(arg)[:40]!r}")
        path = arg.get("jsonPath")
        segments = parse_path(path)
        present, value = _value(arg)
        key = str(path)
        if present:
            self._set(segments, value, key)
        self.open[key] = arg.get("willContinue") is True

    def _set(self, segments: list[str | int], value: Any, key: str) -> None:
        node: Any = self.root
        for seg, nxt in itertools.pairwise(segments):
            node = self._child(node, seg, [] if isinstance(nxt, int) else {}, key)
        last = segments[-1]
        current = self._get(node, last, key)
        if current is None and not self._has(node, last):
            self._put(node, last, value, key)
        elif isinstance(current, _Text) and isinstance(value, _Text):
            current.pieces.extend(value.pieces)  # the same string, continued
        else:
            raise PartialArgsError(f"jsonPath {key[:80]!r} given a second, conflicting value")

    @staticmethod
    def _has(node: Any, seg: str | int) -> bool:
        if isinstance(node, dict):
            return seg in node
        return isinstance(seg, int) and seg < len(node)

    @staticmethod
    def _get(node: Any, seg: str | int, key: str) -> Any:
        if isinstance(node, dict) and isinstance(seg, str):
            return node.get(seg)
        if isinstance(node, list) and isinstance(seg, int):
            return node[seg] if seg < len(node) else None
        kind = "an object" if isinstance(node, dict) else "an array"
        raise PartialArgsError(f"jsonPath {key[:80]!r} indexes {kind} the wrong way")

    def _put(self, node: Any, seg: str | int, value: Any, key: str) -> None:
        if isinstance(node, dict):
            node[seg] = value
        elif isinstance(seg, int) and seg == len(node):
            node.append(value)
        else:
            raise PartialArgsError(f"jsonPath {key[:80]!r}: array index {seg} past its end")

    def _child(self, node: Any, seg: str | int, fresh: Any, key: str) -> Any:
        child = self._get(node, seg, key)
        if child is None and not self._has(node, seg):
            self._put(node, seg, fresh, key)
            return fresh
        if type(child) is not type(fresh):
            raise PartialArgsError(f"jsonPath {key[:80]!r} goes through a value of another type")
        return child

    def unfinished(self) -> list[str]:
        """The paths whose last piece said more would follow."""
        return [k for k, more in self.open.items() if more]

    def value(self) -> dict[str, Any]:
        """The arguments as one object (strings joined)."""
        return _whole(self.root)  # type: ignore[no-any-return]


def _whole(node: Any) -> Any:
    """``node`` with every :class:`_Text` joined (depth is bounded by :data:`MAX_DEPTH`)."""
    if isinstance(node, _Text):
        return "".join(node.pieces)
    if isinstance(node, dict):
        return {k: _whole(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_whole(v) for v in node]
    return node
