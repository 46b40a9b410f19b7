"""The scanning pieces of the incremental reader (:mod:`toolbench.formats.marker_reader`).

What lets a reader look at each new chunk once: the characters a pattern's match can
begin with (so most chunks never reach the pattern engine), a bracket counter for calls
that end where their brackets balance, the tail of a text that can still begin a literal
closer, and the compiled openers of a :class:`~toolbench.formats.stream_syntax.StreamSyntax`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

import regex

from toolbench.formats.stream_syntax import StreamSyntax

_CODE_SIGN = re.compile(r"[\"']|[(\[{]+|[)\]}]+")
"""A quote, or a run of opening or of closing brackets (one step for ``[[[[...``)."""
_OPENING = frozenset("([{")


class Brackets:
    """Bracket depth over JSON or Python text, strings skipped (both quote kinds)."""

    __slots__ = ("depth", "escape", "quote")

    def __init__(self) -> None:
        self.depth = 0
        self.quote = ""
        self.escape = False

    def scan(self, text: str) -> int:
        """The index just after the bracket that closes the outermost one, or -1.

        Jumps from one thing that matters to the next (a quote, or a run of brackets of
        one direction; in a string, its own quote or a backslash) with a search or a
        ``str.find``: the runs between them, and the brackets of a run, are never walked
        a character at a time in Python."""
        i, n = 0, len(text)
        if self.escape:
            if not n:
                return -1
            self.escape = False
            i = 1
        code = _CODE_SIGN.search
        while i < n:
            quote = self.quote
            if quote:
                end = text.find(quote, i)
                slash = text.find("\\", i, n if end < 0 else end)
                if slash >= 0:
                    i = slash + 2
                    if i > n:
                        self.escape = True
                        return -1
                elif end < 0:
                    return -1
                else:
                    i = end + 1
                    self.quote = ""
                continue
            m = code(text, i)
            if m is None:
                return -1
            start, i = m.span()
            c = text[start]
            if c == '"' or c == "'":
                self.quote = c
            elif c in _OPENING:
                self.depth += i - start
            else:
                depth = self.depth
                if depth - (i - start) <= 0:  # the closer that balances is in this run
                    self.depth = depth - max(1, depth)
                    return start + max(1, depth)
                self.depth = depth - (i - start)
        return -1


SAMPLES_NON_ASCII = "\u00a0\u2028\u3000éü東🙂"
"""Characters that stand for all non-ASCII ones when a pattern's first characters are
worked out: one of them starting a match means any non-ASCII character may."""


class Firsts(NamedTuple):
    """The characters a match can begin with: a class to search a chunk for, and the same
    as a set (plus "any non-ASCII character") to test a one-character chunk faster."""

    pattern: re.Pattern[str]
    chars: frozenset[str]
    non_ascii: bool


@lru_cache(maxsize=256)
def first_chars(pattern: str) -> Firsts | None:
    """Every character a match of ``pattern`` can begin with (after any context), or None
    when that is too broad to be worth a fast path.

    The reader skips the ``regex`` search for a chunk that holds none of them: most text
    of a reply fed a character at a time never reaches the pattern engine. A character
    that can begin a match only at the start of a line (``^Action:``) is not listed;
    ``"\\n"`` is, and a search that ends on a possible start (a partial match, even an
    empty one after the newline) sends the next chunk to the engine too.
    """
    compiled = regex.compile(pattern, regex.M)
    if compiled.search("", partial=True) is not None and compiled.search("x", 1) is not None:
        return None  # matches the empty string anywhere
    alphabet = {chr(i) for i in range(128)} | set(pattern) | set(SAMPLES_NON_ASCII)
    found: set[str] = set()
    for c in alphabet:
        for ctx in ("x", " ", "\n", ""):
            m = compiled.search(ctx + c, len(ctx), partial=True)
            if m is not None and m.start() == len(ctx):
                found.add(c if ctx in ("x", " ") else "\n")
                break
    return _firsts(found)


@lru_cache(maxsize=256)
def line_first_chars(pattern: str) -> Firsts | None:
    """:func:`first_chars`, plus every character a match can begin with at the start of
    a line (or of the reply): what a chunk must hold to need a search when it begins a
    line. For ``^[ \\t]{0,16}Action:``, a space, a tab, ``A`` and the newline: a line that
    begins ``Thought`` is shown without the pattern engine."""
    base = first_chars(pattern)
    if base is None:
        return None
    compiled = regex.compile(pattern, regex.M)
    alphabet = {chr(i) for i in range(128)} | set(pattern) | set(SAMPLES_NON_ASCII)
    found = set(base.chars) | (set(SAMPLES_NON_ASCII) if base.non_ascii else set())
    for c in alphabet:
        for ctx in ("\n", ""):
            m = compiled.search(ctx + c, len(ctx), partial=True)
            if m is not None and m.start() == len(ctx):
                found.add(c)
                break
    return _firsts(found)


@lru_cache(maxsize=256)
def after_newline_firsts(pattern: str) -> Firsts | None:
    """:func:`first_chars` of a pattern that looks behind only with ``^``, sharpened for
    chunks of several characters: a newline needs a search only when the character after
    it (in the chunk) can begin a match at a line start, or when it ends the chunk. For
    react, ``"ok\\nThou"`` needs no search; ``"ok\\nAct"`` and ``"ok\\n"`` do. A one-character
    chunk is tested against the characters, newline included, as before. None: no such
    sharpening (the newline can begin a match itself, or the classes are too broad)."""
    base, line = first_chars(pattern), line_first_chars(pattern)
    if base is None or line is None:
        return None
    compiled = regex.compile(pattern, regex.M)
    for ctx in ("x", " "):
        m = compiled.search(ctx + "\n", len(ctx), partial=True)
        if m is not None and m.start() == len(ctx):
            return None  # a newline begins a match wherever it is
    others = sorted(base.chars - {"\n"})
    alternatives = [f"[{re.escape(''.join(others))}]"] if others else []
    if base.non_ascii:
        alternatives.append("[^\\x00-\\x7f]")
    alternatives.append(f"\\n(?:{line.pattern.pattern}|\\Z)")
    return Firsts(re.compile("|".join(alternatives)), base.chars, base.non_ascii)


@lru_cache(maxsize=256)
def line_start_firsts(pattern: str) -> Firsts | None:
    """What a chunk that begins a line must hold to need a search, for a pattern that looks
    behind only with ``^``: at its first character, one that begins a match at a line
    start; further on, what :func:`after_newline_firsts` looks for (react: ``"The "`` at a
    line start needs no search, ``" Act"`` does). One-character chunks: the characters."""
    line, later = line_first_chars(pattern), after_newline_firsts(pattern)
    if line is None or later is None:
        return line
    both = f"\\A(?:{line.pattern.pattern})|{later.pattern.pattern}"
    return Firsts(re.compile(both), line.chars, line.non_ascii)


def _firsts(found: set[str]) -> Firsts | None:
    if len(found) > 64:
        return None
    non_ascii = bool(set(SAMPLES_NON_ASCII) & found)
    chars = frozenset(c for c in found if c not in SAMPLES_NON_ASCII or not non_ascii)
    alternatives = [f"[{re.escape(''.join(sorted(chars)))}]"] if chars else []
    if non_ascii:
        alternatives.append("[^\\x00-\\x7f]")
    return Firsts(re.compile("|".join(alternatives) or "(?!)"), chars, non_ascii)


Openers = tuple[regex.Pattern[str] | None, Firsts | None]
_OPENERS: dict[int, tuple[StreamSyntax, Openers]] = {}


def openers(syntax: StreamSyntax) -> Openers:
    """The syntax's openers as one pattern (a named group per region) and their firsts.

    Cached by the syntax object's identity (kept alive by the cache): hashing a syntax
    walks all its regions, and a reader is made per reply."""
    got = _OPENERS.get(id(syntax))
    if got is not None and got[0] is syntax:
        return got[1]
    if not syntax.regions:
        return None, None
    alternatives = "|".join(f"(?P<r{i}>{r.open})" for i, r in enumerate(syntax.regions))
    made = regex.compile(alternatives, regex.M), first_chars(alternatives)
    if len(_OPENERS) >= 256:
        _OPENERS.clear()
    _OPENERS[id(syntax)] = (syntax, made)
    return made


IN_CODE = Firsts(re.compile(r"[\"'\\()\[\]{}]"), frozenset("\"'\\()[]{}"), non_ascii=False)
IN_STRING = {
    '"': Firsts(re.compile(r'["\\]'), frozenset('"\\'), non_ascii=False),
    "'": Firsts(re.compile(r"['\\]"), frozenset("'\\"), non_ascii=False),
}
"""What can change the bracket count of a ``balanced`` region: outside a string, and
inside a string of each quote kind (only its own quote, or a backslash, can end it: an
apostrophe inside a JSON string sends no chunk to the counter)."""


@lru_cache(maxsize=256)
def compiled(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern, regex.M)


_LOOKS_BEHIND = re.compile(r"\^|\(\?(?![:=!P])|\\[bBGAmMyY<>]")
"""What lets a match depend on the text before it: an anchor at a line start (and, to
stay on the safe side, a negated class), a lookbehind or any inline flag, a word
boundary or a search anchor."""


@lru_cache(maxsize=256)
def context_free(pattern: str) -> bool:
    """Whether a match of ``pattern`` starting at a position never depends on the text
    before it (conservative: a pattern that might is not)."""
    return _LOOKS_BEHIND.search(pattern) is None


@lru_cache(maxsize=256)
def context_width(pattern: str, most: int) -> int:
    """How many characters before a position can change a match of ``pattern`` there:
    0 (context free), 1 (it looks behind only with ``^``, which depends on the one
    character before: a newline, or none at the start), else ``most`` (all the context a
    reader keeps). A held tail is remembered with this much of its context, so a tail
    that almost forms a line-anchored opener after ever different text is still known."""
    if context_free(pattern):
        return 0
    return 1 if context_free(pattern.replace("^", "")) else most


def overlap(s: str, closer: str) -> int:
    """The length of the longest end of ``s`` that is a proper beginning of ``closer``
    (tried only where the closer's first character is, in the last ``len(closer) - 1``)."""
    n = len(s)
    first = closer[:1]
    i = s.find(first, max(0, n - len(closer) + 1)) if first else -1
    while i >= 0:
        if closer.startswith(s[i:]):
            return n - i
        i = s.find(first, i + 1)
    return 0


@lru_cache(maxsize=64)
def literal_firsts(first: str) -> Firsts:
    return Firsts(re.compile(re.escape(first)), frozenset(first), non_ascii=False)


def pending(m: regex.Match[str] | None, s: str) -> bool:
    """Whether the next chunk must be searched: a match may have begun before it (the
    ``regex`` module reports an empty partial match at the end of any text; that one only
    counts after a newline, where ``^`` makes the next character's start depend on it)."""
    return m is not None and bool(m.partial) and (m.start() < len(s) or s.endswith("\n"))


NEVER = Firsts(re.compile(r"(?!)"), frozenset(), non_ascii=False)
