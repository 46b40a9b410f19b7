"""AWS eventstream frames (Bedrock's ``converse-stream``): binary frames, not lines
(:mod:`toolbench.eventstream` decodes them). An exception frame carries no event here:
LiteLLM raises it, classified as such."""

from __future__ import annotations

from toolbench import eventstream
from toolbench.framings import BadFrame, FrameTooLarge, Framing


class _Frames:
    """The JSON payloads of the event frames a body's bytes complete."""

    def __init__(self, limit: int) -> None:
        self.reader = eventstream.FrameReader(limit)

    @property
    def pending(self) -> int:
        return self.reader.pending

    def feed(self, data: bytes) -> list[bytes]:
        try:
            frames = self.reader.feed(data)
        except eventstream.FrameTooLarge as exc:
            raise FrameTooLarge(str(exc)) from None
        except eventstream.FrameError as exc:
            raise BadFrame(str(exc)) from None
        return [f.payload for f in frames if f.headers.get(":message-type", "event") == "event"]


EVENTSTREAM = Framing(
    "eventstream", (eventstream.CONTENT_TYPE,), "an eventstream payload", frames=_Frames
)
