"""How a streamed body is cut into events, chosen by its content type.

A framing (server-sent events, NDJSON, AWS eventstream, ...) is one module that builds
one :class:`Framing` and one entry point in the ``toolbench.framings`` group naming it;
:data:`FRAMINGS` is the registry of them (:mod:`toolbench.registry`'s one loader;
toolbench's own come first, from :mod:`.builtin`). The cassette layer's event guard
(:mod:`toolbench.cassettes.stream_framing`) asks :func:`framing_of` for a body's framing
and cuts it with what the framing declares, so a new framing touches neither the
cassettes nor the providers nor the runner. This package sits below the cassettes (it
imports only the ground: :mod:`toolbench.registry` and the framings' own codecs).

A content type is only a label: providers and gateways label the same events
``text/event-stream``, ``application/x-ndjson``, ``application/json`` or nothing. So a
line framing may also claim a body by its first line (:attr:`Framing.sniff`), whatever
its label said; a body no framing claims is cut by :data:`FALLBACK` (lines whose size
alone is guarded: nothing toolbench reads, judged by the streamed completion).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from toolbench.registry import Registry, instances_of

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

GROUP = "toolbench.framings"
BUILTIN = "toolbench.framings.builtin:FRAMINGS"
"""toolbench's own framings: listed here rather than read from its installed metadata,
since no stream can be read without them (as the wire protocols' registry does)."""

FALLBACK = "lines"
"""The framing of a body whose content type no framing declares."""


class FrameTooLarge(Exception):
    """A binary frame longer than the event-size limit (refused before it is buffered)."""


class BadFrame(Exception):
    """A binary frame that is not one (a bad checksum, an impossible length)."""


class FrameCutter(Protocol):
    """A binary framing's reader of one body: the JSON payloads of the frames each piece
    of bytes completes (raising :class:`FrameTooLarge` or :class:`BadFrame`), and how
    many bytes are left inside an unfinished frame."""

    def feed(self, data: bytes) -> list[bytes]: ...

    @property
    def pending(self) -> int: ...


@dataclass(frozen=True)
class Framing:
    """One way of cutting a body into events.

    A line framing gives ``line`` (the JSON payload a line carries, or None when it
    carries none); a binary framing gives ``frames`` (a fresh :class:`FrameCutter` for
    a body, given the event-size limit). ``what`` names one event in a fault message.
    """

    name: str
    content_types: tuple[str, ...]
    """Parts of a ``content-type`` header that select this framing (lower case)."""
    what: str
    line: Callable[[bytes], bytes | None] | None = None
    event_per_line: bool = False
    """Each line is one event (its size counted alone), not a blank-line-ended block."""
    sniff: Callable[[bytes], bool] | None = None
    """Whether a line-cut body's first non-blank line is this framing's, whatever the
    body's label said (Cohere v2 labels server-sent events otherwise)."""
    frames: Callable[[int], FrameCutter] | None = None


class FramingRegistry(Registry[Framing]):
    """The framings by name, and the framing of a content type (remembered per label:
    every streamed exchange asks, replayed or live)."""

    def __init__(self) -> None:
        super().__init__(
            GROUP, instances_of(Framing), "framing", lambda f: f.name, self._forget_labels
        )
        self._by_label: dict[str, Framing] = {}

    def installed(self) -> list[EntryPoint]:
        # imported here, as the general loader does: importlib.metadata is start-up cost
        from importlib.metadata import EntryPoint

        found: Iterable[EntryPoint] = self.find(self.group)
        plugins = sorted((ep for ep in found if ep.value != BUILTIN), key=lambda ep: ep.name)
        return [EntryPoint("builtin", BUILTIN, GROUP), *plugins]

    def _forget_labels(self) -> None:
        self._by_label = {}

    def of_content_type(self, ctype: str) -> Framing:
        """The framing whose longest declared content type is part of ``ctype``
        (:data:`FALLBACK` when none is)."""
        found = self._by_label.get(ctype)
        if found is None:
            label = ctype.lower()
            best: tuple[int, Framing] | None = None
            for framing in self.values():
                for part in framing.content_types:
                    if part in label and (best is None or len(part) > best[0]):
                        best = (len(part), framing)
            found = best[1] if best is not None else self.get(FALLBACK)
            self._by_label[ctype] = found
        return found

    def sniffers(self) -> list[Framing]:
        """The line framings that may claim a body by its first line, in order."""
        return [f for f in self.values() if f.sniff is not None and f.line is not None]


FRAMINGS = FramingRegistry()


def framing_of(headers: object) -> Framing:
    """The framing a response's headers declare (a mapping with ``content-type``)."""
    get = getattr(headers, "get", None)
    ctype = str(get("content-type", "")) if get is not None else ""
    return FRAMINGS.of_content_type(ctype)
