"""Registered environments, by name: built-ins and plugins through one entry-point group.

An entry point in ``toolbench.environments`` names an
:class:`~toolbench.environments.environment.EnvironmentKind` or a sequence of them, loaded by
the one registry type (:class:`toolbench.registry.Registry`): a plugin that fails to
load, or reuses a name, is one warning line and the others load. A scenario naming an
environment nobody registered is a user error (one line, exit 2) when scenarios are
validated or a run is planned, and a typed code on the trial if it reaches one.
"""

from __future__ import annotations

from toolbench.environments.env_faults import UnknownEnvironmentError
from toolbench.environments.environment import EnvironmentKind
from toolbench.registry import Registry, instances_of

ENTRY_POINT_GROUP = "toolbench.environments"

ENVIRONMENTS: Registry[EnvironmentKind] = Registry(
    ENTRY_POINT_GROUP, instances_of(EnvironmentKind), "environment", lambda k: k.name
)


def register_environment(kind: EnvironmentKind, *, replace: bool = False) -> EnvironmentKind:
    """Make ``kind`` available by its name (tests register toy ones with ``replace``)."""
    return ENVIRONMENTS.register(kind, replace=replace)


def unregister_environment(name: str) -> None:
    """Forget an environment (tests clean up with this)."""
    ENVIRONMENTS.unregister(name)


def environment_names() -> list[str]:
    """Every registered environment's name, sorted."""
    return sorted(ENVIRONMENTS.names())


def get_environment(name: str) -> EnvironmentKind:
    """The environment called ``name``; :class:`UnknownEnvironmentError` when none is."""
    kind = ENVIRONMENTS.find_item(name)
    if kind is None:
        raise UnknownEnvironmentError("environment", name, ENVIRONMENTS.names())
    return kind
