"""Invisible control characters made visible before model text reaches a report.

Escaping markup is not enough for hostile text: Unicode bidirectional controls (U+202E
RIGHT-TO-LEFT OVERRIDE, U+2066 LEFT-TO-RIGHT ISOLATE, ...) reorder what a reader sees
without changing the bytes (the "Trojan Source" trick), so a reply can look like a
different call than the one scored. Reports show each such character as a visible
``⟨U+202E⟩`` tag instead, which keeps the text honest and still searchable.
"""

from __future__ import annotations

import re

BIDI_CONTROLS = (
    "\u061c"  # ARABIC LETTER MARK
    "\u200e\u200f"  # LEFT-TO-RIGHT / RIGHT-TO-LEFT MARK
    "\u202a\u202b\u202c\u202d\u202e"  # embeddings, pop, overrides
    "\u2066\u2067\u2068\u2069"  # isolates
)
"""Every character with a bidirectional *control* role (Unicode's Bidi_Control property)."""

_PATTERN = re.compile(f"[{BIDI_CONTROLS}]")


def show_invisible(text: str) -> str:
    """``text`` with every bidi control replaced by a visible ``⟨U+XXXX⟩`` tag."""
    if not _PATTERN.search(text):
        return text
    return _PATTERN.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", text)
