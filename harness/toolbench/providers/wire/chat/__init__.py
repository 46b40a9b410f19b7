"""OpenAI chat completions (``chat.completion.chunk`` events): the wire every kind hands
the shared call, and LiteLLM's translation of the others (:mod:`.reader`)."""

from __future__ import annotations

from toolbench.providers.wire.chat.reader import Assembler

name = "openai-chat"


def speaks(events: list[tuple[object, float | None]]) -> bool:
    """Whether these events are OpenAI chat chunks (the first one's ``object``)."""
    first = events[0][0] if events else None
    return isinstance(first, dict) and first.get("object") == "chat.completion.chunk"


def assemble(events: list[tuple[object, float | None]]) -> Assembler:
    """The reply assembled from the chunks as the bytes carried them."""
    return Assembler().feed_events(events)
