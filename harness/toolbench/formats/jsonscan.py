"""Finding JSON objects inside free text in one linear pass.

Model output mixes prose and JSON. Trying ``json.JSONDecoder.raw_decode`` at every ``{``
is quadratic on hostile input, and counting braces with a regex breaks on braces inside
strings. This scanner walks the text once, left to right:

* outside objects it skips to the next ``{`` (prose quotes are not JSON strings), passing
  over objects that hold no string at all (``{}``, ``{1}``): they cannot hold a key, so
  cannot be a call;
* inside an object one tokenising regex consumes a run of openers (or of closers)
  together with the payload that follows: whole strings, escapes included. Every
  quantifier is possessive, so the regex never backtracks;
* a run of openers is pushed as one stack entry and only expanded to single positions
  when a closer pops into the middle of it, so each character is handled a constant
  number of times;
* an object that is valid JSON is measured by the C decoder in one call, so real calls,
  however many or however nested, cost no Python work per bracket;
* the Python-level work is bounded: at most :data:`TOKEN_BUDGET` bracket runs and
  objects are read per scan. Past that, ``Scan.stopped`` says where reading stopped and
  the rest is not scanned. Hostile text can make every two characters a token
  (``{]`` repeated); without the bound a megabyte of it took far over the parsers' aim.

Every closing bracket ends a balanced span; nested spans fold into the outermost closed
one, which also recovers the valid objects that follow a stray unbalanced ``{``.
Decoding a span is the caller's job (:func:`decode`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, NamedTuple

from json_repair import repair_json

_STRING = r'"[^"\\]*+(?:\\.[^"\\]*+)*+"?'  # an unclosed string runs to the end
_PAYLOAD = r'(?:[^{}\[\]"]++|' + _STRING + r")*+"
# Payload whose strings hold no bracket, so every bracket in a run is structural.
_PLAIN = r'(?:[^{}\[\]"]++|"[^"\\{}\[\]]*+(?:\\[^{}\[\]][^"\\{}\[\]]*+)*+")*+'
_OPEN_RUN = r"([{\[](?:" + _PLAIN + r"[{\[])*+)" + _PAYLOAD
_CLOSE_RUN = r"([}\]](?:" + _PLAIN + r"[}\]])*+)" + _PAYLOAD
_TOKEN = re.compile(_OPEN_RUN + "|" + _CLOSE_RUN, re.DOTALL)
_SKIP = re.compile(r'(?:[^{]++|\{[^{}\[\]"]*+\})*+')
# A flat object (strings, no nested brackets): the common case, taken in one match.
_LEAF = re.compile(r'\{(?:[^{}\[\]"]++|"[^"\\]*+(?:\\.[^"\\]*+)*+")*+\}', re.DOTALL)
_OPENER = re.compile(r"[{\[]")
_CLOSER = re.compile(r"[}\]]")

_DECODER = json.JSONDecoder()

TOKEN_BUDGET = 8_192
"""Bracket runs and objects one scan reads before it stops (see ``Scan.stopped``).

A valid JSON object goes through the C decoder and costs one unit; a real reply, even
one with many kilobytes of nested arguments, spends a few dozen. Sized so that the
densest hostile text (``{]`` repeated) stays linear and cheap; ``bench_parsers.py``
measures it (figures in docs/benchmarks.md)."""

REPAIR_LIMIT = 200_000
"""Spans longer than this are not handed to the (pure Python) repair library."""

_Entry = int | tuple[int, int, int]  # one opener, or a run: (start, end, count)


class Span(NamedTuple):
    """A balanced ``{...}`` region: ``text[start:end]`` (a tuple: cheap to make in bulk)."""

    start: int
    end: int


@dataclass(slots=True)
class Scan:
    """Outermost balanced object spans, in order, and where an unclosed object began."""

    spans: list[Span] = field(default_factory=list)
    unclosed: int | None = None
    """Start of the outermost object still open at the end of the text (truncation)."""
    stopped: int | None = None
    """Where reading stopped because :data:`TOKEN_BUDGET` ran out (None: read to the end).
    An object open at that point is reported as ``unclosed``."""

    @property
    def unread(self) -> int | None:
        """Where text not read to its end starts (an object open at the stop), or None."""
        if self.stopped is None:
            return None
        return self.stopped if self.unclosed is None else min(self.stopped, self.unclosed)


def scan_objects(text: str, start: int = 0, end: int | None = None) -> Scan:
    """Find the outermost balanced ``{...}`` spans of ``text[start:end]`` in linear time.

    A stray ``{`` in prose followed by a prose quote can flip the string state and hide
    the objects after it; so when an object is still open at the end and its text holds
    a quote, the rest is scanned once more from just after that brace (at most once,
    so the cost stays linear). ``unclosed`` keeps the first open brace either way.
    """
    stop = len(text) if end is None else min(end, len(text))
    budget = [TOKEN_BUDGET]
    out = _scan(text, start, stop, budget)
    quoted = out.unclosed is not None and text.find('"', out.unclosed, stop) >= 0
    if out.unclosed is not None and out.stopped is None and quoted:
        again = _scan(text, out.unclosed + 1, stop, budget)
        kept = [sp for sp in out.spans if sp.start < out.unclosed]
        out = Scan(kept + again.spans, out.unclosed, again.stopped)
    return out


def _json_end(text: str, start: int) -> int | None:
    """Where a valid JSON object at ``text[start]`` ends (the C decoder), or None.

    A failed decode stops at or before its error, which lies inside the balanced region
    the token loop reads next: each character is decoded at most once more.
    """
    try:
        value, done = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    return int(done) if isinstance(value, dict) else None


def _scan(text: str, start: int, stop: int, budget: list[int]) -> Scan:
    out = Scan()
    pos = start
    while pos < stop:
        skipped = _SKIP.match(text, pos, stop)
        first = skipped.end() if skipped else pos
        if first >= stop:
            break
        if budget[0] <= 0:
            out.stopped = first
            break
        budget[0] -= 1
        leaf = _LEAF.match(text, first, stop)
        # Only up to the text's end: the decoder cannot be told to stop at a window's.
        whole = stop == len(text)
        done = leaf.end() if leaf else _json_end(text, first) if whole else None
        if done is not None:
            out.spans.append(Span(first, done))
            pos = done
            continue
        stack: list[_Entry] = []
        depth = 0
        pos = stop
        read = 0
        last = first
        tokens = islice(_TOKEN.finditer(text, first, stop), budget[0])
        for read, m in enumerate(tokens, 1):  # noqa: B007 - read counts the budget spent
            last = m.end()
            if m.lastindex == 1:
                s, e = m.span(1)
                n = 1 if e - s == 1 else _count(m.group(1), "{", "[")
                if n == e - s <= 16:  # a few adjacent openers ("{[", "[["): one entry each
                    stack.extend(range(s, e))
                elif n == 2:  # two openers with text between ('{"a": ['): first and last
                    stack.append(s)
                    stack.append(e - 1)
                else:
                    stack.append((s, e, n))
                depth += n
                continue
            s, e = m.span(2)
            n = 1 if e - s == 1 else _count(m.group(2), "}", "]")
            if n >= depth:
                if n > depth:  # the object ends inside this run of closers
                    e = _nth_end(text, s, e, depth)
                _add(out.spans, text, _pop(stack, depth, text), e)
                depth = 0
                pos = e
                break
            top = stack[-1] if n == 1 and stack else None
            if isinstance(top, int):  # the common pair, one opener and one closer: inline
                stack.pop()
                if text[top] == "{":
                    _add(out.spans, text, top, e)
            else:
                _add(out.spans, text, _pop(stack, n, text), e)
            depth -= n
        else:
            if read >= budget[0] and last < stop:  # the budget ran out inside the object
                out.stopped = last
        budget[0] -= read
        if stack:
            bottom = stack[0]
            out.unclosed = bottom if isinstance(bottom, int) else bottom[0]
            break
    return out


def value_end(text: str, start: int, end: int | None = None) -> int | None:
    """Where the JSON object or array that opens at ``text[start]`` closes, or None.

    String-aware (a ``}`` or a tag inside a JSON string does not end the value) and linear
    in the length scanned: the same possessive tokens as :func:`scan_objects`, but only a
    depth count, and it stops at the first point where the value closes. None when
    ``text[start]`` is no opener or the value is still open at ``end``. Bracket kinds are
    not matched (``{]`` closes), as in :func:`scan_objects`: decoding judges validity.
    """
    stop = len(text) if end is None else min(end, len(text))
    if start >= stop or text[start] not in "{[":
        return None
    try:  # valid JSON, the common case: the C decoder, which stops where the value ends
        _, done = _DECODER.raw_decode(text, start)
        if done <= stop:
            return int(done)
    except (ValueError, RecursionError):
        pass  # it stopped at or before the error, so scanning on stays linear
    leaf = _LEAF.match(text, start, stop)
    if leaf:
        return leaf.end()
    depth = 0
    for m in _TOKEN.finditer(text, start, stop):
        if m.lastindex == 1:
            s, e = m.span(1)
            depth += 1 if e - s == 1 else _count(m.group(1), "{", "[")
            continue
        s, e = m.span(2)
        n = 1 if e - s == 1 else _count(m.group(2), "}", "]")
        if n >= depth:
            return e if n == depth else _nth_end(text, s, e, depth)
        depth -= n
    return None


def _count(run: str, a: str, b: str) -> int:
    return run.count(a) + run.count(b)


def _nth_end(text: str, start: int, end: int, n: int) -> int:
    for k, m in enumerate(_CLOSER.finditer(text, start, end), 1):
        if k == n:
            return m.end()
    return end  # pragma: no cover - the run holds at least n closers


def _pop(stack: list[_Entry], n: int, text: str) -> int:
    """Pop ``n`` openers; return the position of the outermost one popped."""
    outer = -1
    while n > 0 and stack:
        top = stack.pop()
        if isinstance(top, int):
            n -= 1
            outer = top
            continue
        s, e, count = top
        if count <= n:
            n -= count
            outer = s
        else:  # expand the run once into single positions
            stack.extend(m.start() for m in _OPENER.finditer(text, s, e))
    return outer


def _add(spans: list[Span], text: str, opener: int, end: int) -> None:
    if opener < 0 or text[opener] != "{":
        return
    while spans and spans[-1].start >= opener:
        spans.pop()
    spans.append(Span(opener, end))


@dataclass(slots=True)
class Decoded:
    """A decoded JSON value and how it was obtained."""

    value: Any = None
    ok: bool = False
    repaired: bool = False


def loads_strict(text: str) -> Decoded:
    """``json.loads`` that never raises (deep nesting included)."""
    try:
        return Decoded(json.loads(text), ok=True)
    except (ValueError, RecursionError):
        return Decoded()


def decode(text: str, *, allow_repair: bool = True) -> Decoded:
    """Strict JSON first; then the ``json_repair`` library, marked ``repaired``."""
    strict = loads_strict(text)
    if strict.ok or not allow_repair or len(text) > REPAIR_LIMIT:
        return strict
    try:
        fixed = repair_json(text, return_objects=True)
    except Exception:  # - third-party repair must not break parsing
        return Decoded()
    if fixed in ("", None):
        return Decoded()
    return Decoded(fixed, ok=True, repaired=True)
