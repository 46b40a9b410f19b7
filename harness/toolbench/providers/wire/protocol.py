"""What a wire protocol offers the shared call: a leaf every protocol package imports.

A protocol package (:mod:`toolbench.providers.wire`) owns its request shaping, its reader
and what it says about its streams; the reading of a streamed reply asks the registered
protocols in turn whether they speak the events the bytes carried (:data:`WIRES`).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from toolbench.providers.wire.chat.reader import Assembler

Events = list[tuple[Any, float | None]]
"""A stream's events as decoded from the bytes, with their offsets."""


@runtime_checkable
class WireProtocol(Protocol):
    """One wire protocol, registered by its name (``toolbench.wires``)."""

    name: str

    def speaks(self, events: Events) -> bool:
        """Whether a stream's decoded events are this protocol's."""
        ...

    def assemble(self, events: Events) -> Assembler:
        """The reply put back together from those events (its chat deltas)."""
        ...
