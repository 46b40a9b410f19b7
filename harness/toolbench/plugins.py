"""The loader's old entry, for a registry not yet moved onto :class:`toolbench.registry.Registry`.

Everything here is :mod:`toolbench.registry`'s one loader: the same warning lines, the
same order (toolbench's own first), the same stale-install line. A registry should hold
a :class:`~toolbench.registry.Registry` instead; this goes when none calls it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib.metadata import EntryPoint, entry_points
from typing import Any, TypeVar

from toolbench.registry import STALE, RegistrationError, Registry, instances_of, ours

__all__ = ["STALE", "installed", "load_entry_points", "ours"]

T = TypeVar("T")


class _Adapter(Registry[T]):
    """A registry whose table is someone else's: registering calls their function."""

    def __init__(
        self, kind: type[T], what: str, register: Callable[[T], Any], duplicate: type[Exception]
    ) -> None:
        super().__init__(
            "", instances_of(kind), what, lambda item: str(getattr(item, "name", item))
        )
        self._register, self._duplicate = register, duplicate

    def register(self, item: T, *, replace: bool = False) -> T:
        try:
            self._register(item)
        except self._duplicate as exc:
            raise RegistrationError(str(exc)) from exc
        return item


def load_entry_points(
    eps: Iterable[EntryPoint],
    kind: type[T],
    what: str,
    register: Callable[[T], Any],
    duplicate: type[Exception],
) -> None:
    """Register every ``kind`` object each entry point names with ``register``; what
    cannot be loaded or registered is one warning line."""
    _Adapter(kind, what, register, duplicate).load_entries(eps)


def installed(
    group: str, ours_first: bool = False, find: Callable[..., Iterable[EntryPoint]] = entry_points
) -> list[EntryPoint]:
    """The group's installed entry points, toolbench's own first; warns once
    (:data:`STALE`) when toolbench's own are missing."""
    reg: Registry[object] = Registry(group, instances_of(object), "", str)
    reg.find = lambda g: find(group=g)
    return reg.installed()
