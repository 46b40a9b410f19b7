"""Text helpers shared by the formats: think blocks, code fences, tidying.

All of them are ``str.find`` loops or regexes with a single way to match, so they stay
linear on hostile input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"

# A fence left empty once the call inside it was cut out (```json\n\n```).
_EMPTY_FENCE = re.compile(r"```[A-Za-z0-9_+-]*+\s*+```")
_BLANK_RUN = re.compile(r"\n(?:[ \t]*+\n){2,}")


@dataclass(frozen=True, slots=True)
class ThinkSplit:
    """Reply text with its reasoning taken out."""

    text: str
    reasoning: str | None


def split_think(text: str, *, opened_in_prompt: bool = True) -> ThinkSplit:
    """Remove ``<think>...</think>`` blocks and return their text as reasoning.

    An unclosed ``<think>`` runs to the end of the reply (the model never finished
    thinking). A ``</think>`` with no opening tag before it is read by the family's rule:

    * ``opened_in_prompt`` (DeepSeek R1 / V3.1, Qwen3.5 / Nemotron 3 / Step 3.5, QwQ,
      Hermes-style Qwen templates): the chat template opens the block in the generation
      prompt, so everything before the first ``</think>`` is reasoning;
    * otherwise (families whose templates never open one: Llama, Mistral, Kimi, gpt-oss,
      Claude prompts): the tag is a stray marker; it is dropped and the text before it
      stays visible, since it is what the user was told.
    """
    parts: list[str] = []
    thoughts: list[str] = []
    pos = 0
    first_close = text.find(THINK_CLOSE)
    first_open = text.find(THINK_OPEN)
    stray = False
    if first_close >= 0 and (first_open < 0 or first_open > first_close):
        if opened_in_prompt:
            thoughts.append(text[:first_close])
        else:
            parts.append(text[:first_close])
            stray = True
        pos = first_close + len(THINK_CLOSE)
    found = bool(thoughts)
    while True:
        i = text.find(THINK_OPEN, pos)
        if i < 0:
            parts.append(text[pos:])
            break
        found = True
        parts.append(text[pos:i])
        j = text.find(THINK_CLOSE, i + len(THINK_OPEN))
        if j < 0:
            thoughts.append(text[i + len(THINK_OPEN) :])
            break
        thoughts.append(text[i + len(THINK_OPEN) : j])
        pos = j + len(THINK_CLOSE)
    if not found:
        return ThinkSplit("".join(parts) if stray else text, None)
    visible = "".join(parts)
    return ThinkSplit(visible, "\n".join(t.strip() for t in thoughts if t.strip()))


@dataclass(slots=True)
class Cutter:
    """Cuts regions (calls, blocks) out of a text and keeps what lies between them.

    Parsers end alike: the visible text is what the calls leave, and the stop checks need
    where the first call began and where the last one ended.
    """

    text: str
    kept: list[str] = field(default_factory=list)
    pos: int = 0
    """Where the last cut ended (the start of the text before any cut)."""
    first_start: int | None = None
    last_end: int | None = None

    def cut(self, start: int, end: int) -> None:
        """Drop ``text[start:end]``; ``start`` must not lie before :attr:`pos`."""
        self.kept.append(self.text[self.pos : start])
        self.pos = end
        if self.first_start is None:
            self.first_start = start
        self.last_end = end

    def finish(self, end: int | None = None) -> str:
        """The kept text, ending with what follows the last cut up to ``end`` (or the end)."""
        self.kept.append(self.text[self.pos : len(self.text) if end is None else end])
        return "".join(self.kept)


def drop_think_tags(text: str) -> str:
    """Text without think blocks and without stray think tags (for sanitizing)."""
    visible = split_think(text).text
    return visible.replace(THINK_OPEN, "").replace(THINK_CLOSE, "")


def tidy(text: str) -> str:
    """Drop fences emptied by cutting calls out, squeeze blank runs, strip the ends."""
    if "```" in text:
        text = _EMPTY_FENCE.sub("", text)
    if "\n" in text:
        text = _BLANK_RUN.sub("\n\n", text)
    return text.strip()


MARKER_ROUNDS = 8
"""Removal passes: each pass undoes one level of markers nested to splice (``<to<x>ol>``).
Bounded so hostile nesting costs at most this many linear passes."""


def remove_all(text: str, needles: tuple[str, ...], rounds: int = MARKER_ROUNDS) -> str:
    """Remove literal markers, repeating so a removal cannot splice a new marker."""
    for _ in range(rounds):
        before = text
        for needle in needles:
            if needle in text:
                text = text.replace(needle, "")
        if text == before:
            break
    return text


def strip_markers(text: str, needles: tuple[str, ...]) -> str:
    """Tidy, then remove literal markers, then strip.

    Tidying comes first: removing an emptied fence afterwards could splice a marker.
    """
    return remove_all(tidy(text), needles).strip()
