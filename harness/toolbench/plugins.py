"""Loading registered objects from entry points, the same way for every registry.

Scorers (``toolbench.scorers``) and metrics (``toolbench.metrics``) come from entry points,
toolbench's own and plugins' alike. One broken plugin must not take the others down: an
import error, an entry that names the wrong kind of object, or a name already taken is
one warning line, and the rest load.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from importlib.metadata import EntryPoint, entry_points
from typing import Any, TypeVar

T = TypeVar("T")


def _entries(obj: object, kind: type[T]) -> list[T] | None:
    if isinstance(obj, kind):
        return [obj]
    if isinstance(obj, Sequence) and obj and all(isinstance(x, kind) for x in obj):
        return list(obj)
    return None


def warn(what: str, ep: EntryPoint, problem: str, consequence: str | None = None) -> None:
    """One warning line about ``what`` plugin ``ep`` (``scorer``, ``metric``)."""
    tail = consequence if consequence is not None else f"its {what}s are left out"
    print(f"warning: {what} plugin '{ep.name}' ({ep.value}) {problem}; {tail}", file=sys.stderr)


def load_entry_points(
    eps: Iterable[EntryPoint],
    kind: type[T],
    what: str,
    register: Callable[[T], Any],
    duplicate: type[Exception],
) -> None:
    """Register every ``kind`` object each entry point names (one object or a sequence
    of them) with ``register``; what cannot be loaded or registered is one warning line."""
    for ep in eps:
        try:
            obj = ep.load()
        except Exception as exc:  # a plugin's import error is its own, not ours
            first = str(exc).splitlines()[0] if str(exc) else ""
            warn(what, ep, f"failed to load: {type(exc).__name__}: {first}")
            continue
        found = _entries(obj, kind)
        if found is None:
            name = kind.__name__
            warn(what, ep, f"does not name a {name} or a sequence of {name} objects")
            continue
        for item in found:
            try:
                register(item)
            except duplicate as exc:
                warn(what, ep, f"{exc}", f"'{getattr(item, 'name', item)}' is left out")


STALE = (
    "warning: toolbench's own '{group}' entry points are not installed (metadata older "
    "than this checkout): reinstall it, `pip install -e .`"
)
"""Said once when the built-ins are missing: a checkout whose installed metadata predates
the group would otherwise lose them silently."""


def installed(
    group: str, ours_first: bool = False, find: Callable[..., Iterable[EntryPoint]] = entry_points
) -> list[EntryPoint]:
    """The group's installed entry points (``find``: a registry's own lookup, which tests
    replace), by name, toolbench's own first when ``ours_first``; warns once
    (:data:`STALE`) when toolbench's own are missing."""
    eps = sorted(find(group=group), key=lambda ep: (ours_first and not ours(ep), ep.name))
    if not any(ours(ep) for ep in eps):
        print(STALE.format(group=group), file=sys.stderr)
    return eps


def ours(ep: EntryPoint) -> bool:
    """Declared by toolbench's own distribution (its built-ins), not by a plugin's."""
    dist = ep.dist
    return dist is not None and dist.name == "toolbench"
