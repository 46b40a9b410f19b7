"""Lines of a body whose content type says nothing toolbench reads (the fallback,
:data:`toolbench.framings.FALLBACK`): only each line's size is guarded, and what the
stream carried is not judged here (LiteLLM reads it)."""

from __future__ import annotations

from toolbench.framings import FALLBACK, Framing


def _nothing(line: bytes) -> bytes | None:
    return None


LINES = Framing(FALLBACK, (), "a line", line=_nothing, event_per_line=True)
