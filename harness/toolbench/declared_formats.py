"""Format names known without importing a format: the pseudo-format ``auto``, and the
names toolbench's own entry points declare in the formats group.

The format registry (:mod:`toolbench.formats.format_registry`) knows its names by
importing every format, most of what a command loads before it runs. ``toolbench run``
refuses an unknown format name before that, from the names the installed entry points
declare, where those are certainly the registry's: nothing but toolbench's own entry
points is installed in any of its groups (a plugin's names are known only by importing
it, and one that fails is left out with a warning), a test holds each declared name to
the format it loads, and the registry is not loaded in this process yet (code may have
registered formats in it).
"""

from __future__ import annotations

import sys

from toolbench.registry import ours

ENTRY_POINT_GROUP = "toolbench.formats"
"""The formats' entry-point group (toolbench's own formats are listed there too)."""
AUTO = "auto"
"""The pseudo-format of ``--formats``: each model's detected dialect."""
_REGISTRY = "toolbench.formats.format_registry"
_GROUPS = "toolbench."
"""The prefix of every entry-point group toolbench reads (formats, executors, ...)."""


def declared_format_names() -> list[str] | None:
    """The registry's format names, sorted, read from the installed entry points; None
    when they may differ from the registry's (see the module doc): ask the registry."""
    if _REGISTRY in sys.modules:
        return None
    # imported here: importlib.metadata (with the email package) is no part of --help
    from importlib.metadata import entry_points

    installed = entry_points()
    groups = [g for g in installed.groups if g.startswith(_GROUPS)]
    eps = [ep for g in groups for ep in installed.select(group=g)]
    verdicts: dict[int, bool] = {}  # a distribution's metadata is read once, not per entry
    for ep in eps:
        if id(ep.dist) not in verdicts:
            verdicts[id(ep.dist)] = ours(ep)
    if not all(verdicts.values()):
        return None
    names = sorted(ep.name for ep in eps if ep.group == ENTRY_POINT_GROUP)
    return names or None
