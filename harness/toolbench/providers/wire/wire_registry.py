"""The wire protocols by name: toolbench's own packages, then those plugins declare in
the entry-point group ``toolbench.wires`` (an entry point naming a protocol package or
object: :class:`~toolbench.providers.wire.protocol.WireProtocol`).

One :class:`~toolbench.registry.Registry` and its one loader; toolbench's own protocols
are listed here rather than read from its installed metadata, since the call cannot read
a stream without them. The order is the order the reading of a stream asks them in.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeGuard

from toolbench.providers.wire.protocol import WireProtocol
from toolbench.registry import Kind, Registry

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

GROUP = "toolbench.wires"
BUILTIN = ("cohere", "responses", "gemini", "chat")
"""toolbench's own protocol packages, in the order a stream's events are offered them."""


def _is_wire(obj: object) -> TypeGuard[WireProtocol]:
    return isinstance(obj, WireProtocol)


class WireRegistry(Registry[WireProtocol]):
    """The wire protocols: toolbench's own entry points are made here, a plugin's come
    from its installed metadata; both load through the one loader."""

    def installed(self) -> list[EntryPoint]:
        # imported here, as the general loader does: importlib.metadata is start-up cost
        from importlib.metadata import EntryPoint

        own = [EntryPoint(n, f"toolbench.providers.wire.{n}", GROUP) for n in BUILTIN]
        values = {ep.value for ep in own}
        found: Iterable[EntryPoint] = self.find(self.group)
        plugins = sorted((ep for ep in found if ep.value not in values), key=lambda ep: ep.name)
        return [*own, *plugins]


WIRES = WireRegistry(GROUP, Kind(_is_wire, "wire protocol"), "wire protocol", lambda w: w.name)
"""Every wire protocol toolbench reads, by name."""
