"""One registry type and one loader for everything toolbench looks up by name.

Formats, provider kinds, scorers, metrics and report outputs are each a
:class:`Registry`: an entry-point group, the kind of object it holds, and a name per
object. toolbench's own objects come in through the same entry points as a plugin's
(its ``pyproject.toml`` lists them under the group), so there is one way in and one
list: what is installed. The loader's rules are the same for every registry:

- an entry point names one object of the registry's kind or a sequence of them;
- a plugin that fails to import, or names something else, is one warning line on
  stderr and is left out; the others load (one broken plugin must not take a command
  down);
- a name already taken is refused (one warning line): a plugin cannot silently change
  what a built-in means; toolbench's own entry points load first, then plugins by name;
- when toolbench's own entry points of a group are missing (installed metadata older
  than the checkout) that is said once, as they would otherwise vanish silently.

A registry loads on first use, once, under a lock (trials are scored in worker
threads); the lock is reentrant so that a plugin being imported may read the registry
as loaded so far (a scorer that wraps the built-in it replaces).
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeGuard, TypeVar

from toolbench.errors import UnknownNameError

if TYPE_CHECKING:  # importlib.metadata is imported when a registry loads (start-up)
    from importlib.metadata import EntryPoint

T = TypeVar("T")

DIST_NAME = "toolbench-harness"
"""The distribution (pyproject's ``project.name``; the import name stays ``toolbench``)."""

STALE = (
    "warning: toolbench's own '{group}' entry points are not installed (metadata older "
    "than this checkout): reinstall it, `pip install -e .`"
)
"""Said once when the built-ins are missing: a checkout whose installed metadata predates
the group would otherwise lose them silently."""


class RegistrationError(ValueError):
    """An object cannot be registered (a plugin's is left out with one warning line)."""


class DuplicateNameError(RegistrationError):
    """A name is taken already by another object of the registry."""


@dataclass(frozen=True)
class Kind(Generic[T]):
    """What a registry holds: a test of an object, and its noun for warnings."""

    test: Callable[[object], TypeGuard[T]]
    noun: str


def instances_of(cls: type[T]) -> Kind[T]:
    """A registry of instances of ``cls`` (scorers, metrics, report outputs)."""

    def test(obj: object) -> TypeGuard[T]:
        return isinstance(obj, cls)

    return Kind(test, cls.__name__)


def ours(ep: EntryPoint) -> bool:
    """Declared by toolbench's own distribution (its built-ins), not by a plugin's."""
    dist = ep.dist
    return dist is not None and re.sub(r"[-_.]+", "-", dist.name).lower() == DIST_NAME


def _find(group: str) -> Iterable[EntryPoint]:
    # imported here, not at the top: ``--help`` and a usage error never load a registry,
    # and importlib.metadata (with the email package) is a large share of their start-up
    from importlib.metadata import entry_points

    return entry_points(group=group)


class Registry(Generic[T]):
    """Objects of one kind by name, filled from one entry-point group.

    ``what`` names the kind in messages (``format``, ``scorer``); ``name_of`` gives an
    object's name; ``find`` lists a group's installed entry points (tests replace it
    with their own list, as an installed plugin distribution would add to it).
    """

    def __init__(
        self,
        group: str,
        kind: Kind[T],
        what: str,
        name_of: Callable[[T], str],
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.group = group
        self.kind = kind
        self.what = what
        self.name_of = name_of
        self.find: Callable[[str], Iterable[EntryPoint]] = _find
        self._on_change = on_change
        self._items: dict[str, T] = {}
        self._builtin: set[str] = set()
        self._loaded = False
        self._loading = False
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ editing

    def register(self, item: T, *, replace: bool = False) -> T:
        """Make ``item`` known by its name; a name taken by another object is refused
        (:class:`DuplicateNameError`) unless ``replace``."""
        name = self.name_of(item)
        old = self._items.get(name)
        if old is not None and old is not item and not replace:
            raise DuplicateNameError(f"{self.what} '{name}' is already registered")
        self._put(name, item)
        return item

    def _put(self, name: str, item: T) -> None:
        self._items[name] = item
        self.changed()

    def _replace_all(self, items: Iterable[tuple[str, T]]) -> None:
        """Set the whole table at once, in the given order (a subclass's replacement)."""
        order = list(items)
        self._items.clear()
        self._items.update(order)
        self.changed()

    def unregister(self, name: str) -> None:
        """Forget ``name`` (tests that register toy objects clean up with this)."""
        self._items.pop(name, None)
        self.changed()

    def changed(self) -> None:
        """Tell whoever derives something from the table that it changed."""
        if self._on_change is not None:
            self._on_change()

    # ------------------------------------------------------------------ loading

    def warn(self, ep: EntryPoint, problem: str, consequence: str | None = None) -> None:
        """One warning line about plugin ``ep``."""
        tail = consequence if consequence is not None else f"its {self.what}s are left out"
        print(
            f"warning: {self.what} plugin '{ep.name}' ({ep.value}) {problem}; {tail}",
            file=sys.stderr,
        )

    def load_entries(self, eps: Iterable[EntryPoint]) -> None:
        """Register every object each entry point names; what cannot be loaded or
        registered is one warning line and the rest load."""
        for ep in eps:
            try:
                obj = ep.load()
            except Exception as exc:  # a plugin's import error is its own, not ours
                first = str(exc).splitlines()[0] if str(exc) else ""
                self.warn(ep, f"failed to load: {type(exc).__name__}: {first}")
                continue
            found = self._entries(obj)
            if found is None:
                noun = self.kind.noun
                self.warn(ep, f"does not name a {noun} or a sequence of {noun} objects")
                continue
            builtin = ours(ep)  # once per entry point: each call parses its metadata again
            for item in found:
                try:
                    self.register(item)
                except RegistrationError as exc:
                    self.warn(ep, str(exc), f"'{self.name_of(item)}' is left out")
                    continue
                if builtin:
                    self._builtin.add(self.name_of(item))

    def _entries(self, obj: object) -> list[T] | None:
        if self.kind.test(obj):
            return [obj]
        if isinstance(obj, Sequence) and not isinstance(obj, str) and obj:
            items = [x for x in obj if self.kind.test(x)]
            if len(items) == len(obj):
                return items
        return None

    def installed(self) -> list[EntryPoint]:
        """The group's installed entry points, toolbench's own first, then by name;
        says once (:data:`STALE`) when toolbench's own are missing."""
        eps = sorted(self.find(self.group), key=lambda ep: (not ours(ep), ep.name))
        if not any(ours(ep) for ep in eps):
            print(STALE.format(group=self.group), file=sys.stderr)
        return eps

    def load(self) -> None:
        """Load the installed entry points (once; a no-op while loading)."""
        if self._loaded:
            return
        with self._lock:
            if self._loaded or self._loading:
                return
            self._loading = True
            try:
                self.load_entries(self.installed())
            finally:
                self._loading = False
            self._loaded = True

    @contextmanager
    def installing(self, *eps: EntryPoint) -> Iterator[None]:
        """Within the block, the registry is loaded as if a distribution declaring
        ``eps`` were installed beside the real ones; after it, as it was. A plugin's own
        tests use this to load it through its entry point without installing it."""
        find, saved, builtin, loaded = (
            self.find,
            dict(self._items),
            set(self._builtin),
            self._loaded,
        )
        self.find = lambda group: [*find(group), *eps]
        try:
            self._forget()  # loaded again on first use, with them
            yield
        finally:
            self.find = find
            self._items.clear()
            self._items.update(saved)
            self._builtin = builtin
            self._loaded = loaded
            self.changed()

    def reload(self) -> None:
        """Forget everything and read the entry points again (tests, long sessions)."""
        self._forget()
        self.load()

    def _forget(self) -> None:
        with self._lock:
            self._items.clear()
            self._builtin.clear()
            self._loaded = False
            self.changed()

    # ------------------------------------------------------------------ reading

    def get(self, name: str) -> T:
        """The object called ``name``, else a did-you-mean error listing the names."""
        self.load()
        try:
            return self._items[name]
        except KeyError:
            raise UnknownNameError(self.what, name, list(self._items)) from None

    def find_item(self, name: str) -> T | None:
        """The object called ``name``, or None."""
        self.load()
        return self._items.get(name)

    def names(self) -> list[str]:
        """Every name, in registration order (toolbench's own first)."""
        self.load()
        return list(self._items)

    def values(self) -> list[T]:
        """Every object, in registration order."""
        self.load()
        return list(self._items.values())

    def builtin_names(self) -> list[str]:
        """The names toolbench's own entry points registered."""
        self.load()
        return [n for n in self._items if n in self._builtin]

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
