"""Locating ``<tag>JSON</tag>`` call blocks (Hermes ``<tool_call>``) in reply text.

A block's payload ends where its JSON value ends, found by the string-aware scanner
(:func:`~toolbench.formats.jsonscan.value_end`), not at the first closing tag: so a
literal ``</tool_call>`` inside a JSON string does not end the call, and an unclosed
final call does not swallow what follows it. After the value:

* only whitespace (or a closing fence) before the closing tag: an *exact* block;
* other text before the closing tag (prose, a second object, a special token): the
  block runs to that tag and its reading is *lenient*;
* no closing tag before the next opening tag or the end: the call ends with its JSON
  (a stop sequence may have eaten the tag) and what follows is text after the call, as
  it would be had the tag been there. A missing tag before another call is lenient; a
  missing tag at the end is not (reference parsers accept it).

When the payload does not start with ``{``/``[``, or its value never closes, the block
runs to the next closing tag (or the end), as reference parsers read it.

Linear time: each tag search is memoised forward (:class:`_Forward`), and a JSON scan
stops where its value closes, before the next block starts. A scan over a value that
never closes runs to the end of the text, so such scans draw on a budget of a few times
the text's length; once it is spent, later blocks are read by their closing tags only.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from toolbench.formats.jsonscan import scan_objects, value_end
from toolbench.formats.text import Cutter

SCAN_BUDGET = 3
"""Unclosed JSON scans may cover this many times the text's length in all."""

_LEAD = re.compile(r"\s*+(?:```[A-Za-z]*+\s*+)?+")
_TRAIL = re.compile(r"\s*+(?:```\s*+)?+")


class Block(NamedTuple):
    """One call block: ``text[start:end]`` is cut out, ``text[inner:inner_end]`` read
    (a tuple: cheap to make in bulk)."""

    start: int
    end: int
    inner: int
    inner_end: int
    closed: bool
    """The block's closing tag was found."""
    exact: bool
    """The payload is exactly one balanced JSON value (a strict reading is possible)."""
    lenient: bool
    """Reading it needs leniency (text beside the value, or a missing closing tag before
    another call)."""


class _Forward:
    """``str.find`` for one needle with queries that move forward: amortised linear."""

    def __init__(self, text: str, needle: str) -> None:
        self.text = text
        self.needle = needle
        self.asked = -1
        self.found = -1

    def find(self, pos: int) -> int:
        if self.asked < 0 or pos < self.asked or 0 <= self.found < pos:
            self.found = self.text.find(self.needle, pos)
        self.asked = pos
        return self.found


class BlockFinder:
    """Yields the blocks of ``open_tag``/``close_tag`` in ``text``, left to right."""

    def __init__(self, text: str, open_tag: str, close_tag: str) -> None:
        self.text = text
        self.open_tag = open_tag
        self.close_tag = close_tag
        self._opens = _Forward(text, open_tag)
        self._closes = _Forward(text, close_tag)
        self._budget = SCAN_BUDGET * len(text) + 4096

    @property
    def spent(self) -> bool:
        """The scan budget is spent: blocks are now read by their tags only."""
        return self._budget <= 0

    def next(self, pos: int) -> Block | None:
        """The first block whose opening tag starts at or after ``pos``."""
        text = self.text
        i = self._opens.find(pos)
        if i < 0:
            return None
        s = i + len(self.open_tag)
        lead = _LEAD.match(text, s)
        p = lead.end() if lead else s
        if self._budget > 0 and p < len(text) and text[p] in "{[":
            k = value_end(text, p)
            if k is None:
                self._budget -= len(text) - p  # scanned to the end: pay for it
            else:
                trail = _TRAIL.match(text, k)
                t = trail.end() if trail else k
                if text.startswith(self.close_tag, t):
                    return Block(i, t + len(self.close_tag), p, k, True, True, False)
                j = self._closes.find(t)
                o = self._opens.find(t)
                if j >= 0 and (o < 0 or j < o):
                    return Block(i, j + len(self.close_tag), s, j, True, False, True)
                return Block(i, k, p, k, False, True, o >= 0)
        j = self._closes.find(s)
        end = len(text) if j < 0 else j
        return Block(i, end if j < 0 else j + len(self.close_tag), s, end, j >= 0, False, False)


def cut_end(text: str, block: Block) -> int:
    """Where a block's cut ends when only removing it: an unclosed block read by its tags
    ends with its last complete object, as the xml parser reads it."""
    if block.closed or block.exact:
        return block.end
    scan = scan_objects(text, block.inner, block.inner_end)
    return scan.spans[-1].end if scan.spans and scan.unclosed is None else block.end


def drop_blocks(text: str, open_tag: str, close_tag: str) -> str:
    """``text`` without its ``open_tag``...``close_tag`` blocks, located as above."""
    if open_tag not in text:
        return text
    cuts = Cutter(text)
    blocks = BlockFinder(text, open_tag, close_tag)
    while not blocks.spent and (block := blocks.next(cuts.pos)) is not None:
        cuts.cut(block.start, cut_end(text, block))
    # Budget spent: the finder reads blocks by their tags only; do the same in a tight loop.
    while blocks.spent and (i := text.find(open_tag, cuts.pos)) >= 0:
        s = i + len(open_tag)
        j = text.find(close_tag, s)
        if j < 0:
            cuts.cut(i, cut_end(text, Block(i, len(text), s, len(text), False, False, False)))
            break
        cuts.cut(i, j + len(close_tag))
    return cuts.finish()
