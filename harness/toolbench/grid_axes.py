"""A stored format spec read as a point of a prompt-axis grid, as text.

A leaf, so that the reports group a run's cells into grids
(:mod:`toolbench.report.sensitivity`) by the spec alone: the report reads the store and
nothing below it, so it neither builds formats nor asks their registry. The run expanded
its grids with :mod:`toolbench.runner.format_grid` into canonical specs, which write an
axis only where it is set away from the format's default: an axis a stored spec does not
write is at the default. The names are those :mod:`toolbench.formats.prompt_axes`
defines (a test holds the two lists equal).
"""

from __future__ import annotations

from toolbench.stream_option import split_stream

AXIS_NAMES: tuple[str, ...] = ("doc", "form", "markup", "style", "tag")
"""The prompt axes a grid varies (BFCL's format-sensitivity axes, issue 37)."""
DEFAULT = "default"
"""The value of an axis a spec does not write."""


def _options(spec: str) -> tuple[str, list[str], str]:
    """``(name, option items, fallback tail with its '|')`` of a spec without ``stream``."""
    head, bar, tail = split_stream(spec)[0].partition("|")
    name, _, opts = head.partition(":")
    items = [i.strip() for i in opts.split(",") if i.strip()]
    return name.strip(), items, bar + tail


def grid_base(spec: str) -> str:
    """The spec without its axes (``prompt-json:doc=python,shots=2`` ->
    ``prompt-json:shots=2``; ``:stream`` kept): the cells of one grid share it."""
    name, items, tail = _options(spec)
    kept = [i for i in items if i.partition("=")[0].strip() not in AXIS_NAMES]
    if split_stream(spec)[1]:
        kept.append("stream")
    return name + (":" + ",".join(kept) if kept else "") + tail


def grid_point(spec: str) -> dict[str, str]:
    """Every axis at the value the spec writes, else :data:`DEFAULT`."""
    _, items, _ = _options(spec)
    given = {k.strip(): v.strip() for k, _, v in (i.partition("=") for i in items)}
    return {a: given.get(a, DEFAULT) for a in AXIS_NAMES}


def writes_axes(spec: str) -> bool:
    """Whether the spec sets an axis (a grid is a base some of whose cells do)."""
    _, items, _ = _options(spec)
    return any(i.partition("=")[0].strip() in AXIS_NAMES for i in items)
