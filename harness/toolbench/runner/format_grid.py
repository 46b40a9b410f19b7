"""A format spec as a grid: ``prompt-json:doc=python|json|xml,tag=on|off`` is six cells.

Format sensitivity is measured by running the same trials under each point of a grid of
prompt shapes (:mod:`toolbench.formats.prompt_axes`); writing each point by hand would
be error-prone, so an option may list several values joined by ``|`` and the spec stands
for the cross product of them, each cell a format spec of its own, in canonical form
(options in the fixed order :attr:`~toolbench.formats.base.Format.spec` writes them), so
cells of one grid group cleanly in the report (:func:`base_of`, :func:`axes_of`).

``|`` also joins a fallback (``native|xml``): after ``key=value``, a piece is another
value of that key unless it names a format and is not a value the key takes
(``prompt-json:doc=python|react`` is a fallback to ``react``; ``doc=python|xml`` is two
values of ``doc``; a fallback to ``xml`` after an axis writes another option last:
``prompt-json:doc=python,shots=0|xml``).

A grid is bounded (:data:`MAX_CELLS` model-format cells in all, ``$TOOLBENCH_MAX_CELLS``
raises it): a typo in a grid should cost one line, not a thousand calls.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from toolbench.errors import UserError
from toolbench.formats.format_registry import FORMATS, get_format
from toolbench.formats.prompt_axes import AXIS_NAMES, axis

MAX_CELLS = 200
"""Models x format cells a run with a grid may hold, unless ``$TOOLBENCH_MAX_CELLS`` says."""
MAX_CELLS_ENV = "TOOLBENCH_MAX_CELLS"
_VALUE = re.compile(r"[\w.+-]+")


@dataclass(frozen=True)
class Grid:
    """One spec read as a grid: its format name, its options (each with its values, in
    the order given) and what follows them (a fallback, kept as written)."""

    name: str
    options: tuple[tuple[str, tuple[str, ...]], ...]
    tail: str

    @property
    def size(self) -> int:
        out = 1
        for _, values in self.options:
            out *= len(values)
        return out


def read_grid(spec: str) -> Grid | None:
    """The spec as a grid, or None when no option lists more than one value."""
    name, colon, rest = spec.strip().partition(":")
    if not colon or "|" not in rest or "|" in name:  # a fallback's parts are not expanded
        return None
    options: list[tuple[str, tuple[str, ...]]] = []
    items = rest.split(",")
    for i, item in enumerate(items):
        key, eq, value = item.partition("=")
        pieces = value.split("|")
        if not eq or "|" in key or ":" in key:  # a bare option or a fallback's format
            tail_from = item if "|" in item else None
            if tail_from is not None:
                head, _, tail = item.partition("|")
                if head.strip():
                    options.append((head.strip(), ()))
                return _grid(name, options, "|".join([tail, *items[i + 1 :]]) if tail else "")
            options.append((item.strip(), ()))
            continue
        values = [pieces[0].strip()]
        for j, piece in enumerate(pieces[1:], start=1):
            if not _is_value(key.strip(), piece.strip()):
                tail = ",".join(["|".join(pieces[j:]), *items[i + 1 :]])
                options.append((key.strip(), tuple(values)))
                return _grid(name, options, tail)
            values.append(piece.strip())
        options.append((key.strip(), tuple(values)))
    return _grid(name, options, "")


def _items(options: str) -> list[tuple[str, str, str]]:
    """``k=v,k2=v2`` as ``(key, "=", value)`` triples (``("flag", "", "")`` for a bare one)."""
    return [item.partition("=") for item in options.split(",")]


def _grid(name: str, options: list[tuple[str, tuple[str, ...]]], tail: str) -> Grid | None:
    if not any(len(values) > 1 for _, values in options):
        return None
    return Grid(name.strip(), tuple(options), tail.strip())


def _is_value(key: str, piece: str) -> bool:
    """Whether ``piece`` after ``key=value|`` is another value (else a fallback starts)."""
    if not _VALUE.fullmatch(piece):
        return False
    known = axis(key)
    if known is not None and piece in known.values:
        return True
    return piece not in FORMATS.names()


def _check_axes(spec: str, name: str, options: Sequence[tuple[str, tuple[str, ...]]]) -> None:
    """Refuse an axis the format does not take, or a value its axis does not have, naming
    --formats and the value (before any cell is built)."""
    fields = FORMATS.get(name).Options.model_fields
    takes = [a for a in AXIS_NAMES if a in fields]
    for key, values in options:
        known = axis(key)
        if known is None:
            if key not in fields and len(values) > 1:
                raise UserError(
                    f"--formats: '{spec}': format '{name}' has no option '{key}'"
                    f" (its axes: {', '.join(takes) or 'none'})"
                )
            continue
        if key not in fields:
            raise UserError(
                f"--formats: '{spec}': format '{name}' has no axis '{key}'"
                f" (its axes: {', '.join(takes) or 'none'})"
            )
        for value in values:
            if value not in known.values:
                raise UserError(
                    f"--formats: '{spec}': {key} takes {', '.join(known.values)} (got '{value}')"
                )
        if len(set(values)) < len(values):
            twice = next(v for v in values if values.count(v) > 1)
            raise UserError(f"--formats: '{spec}': {key}={twice} is listed twice")


def expand_spec(spec: str) -> list[str]:
    """The cells of one spec: itself when it is no grid (its axis values checked), else
    each point of the grid as a canonical spec."""
    grid = read_grid(spec)
    if grid is None:
        name, colon, rest = spec.strip().partition(":")
        given = [(k.strip(), (v.strip(),)) for k, _, v in _items(rest.partition("|")[0])]
        given = [item for item in given if item[0] in AXIS_NAMES]
        if colon and "|" not in name and given:
            _check_axes(spec.strip(), name.strip(), given)
        return [spec]
    _check_axes(spec.strip(), grid.name, grid.options)
    cells: list[str] = []
    for point in itertools.product(*(values or (None,) for _, values in grid.options)):
        opts = [
            k if v is None else f"{k}={v}" for (k, _), v in zip(grid.options, point, strict=True)
        ]
        text = f"{grid.name}:{','.join(opts)}" + (f"|{grid.tail}" if grid.tail else "")
        try:
            cells.append(get_format(text).spec)
        except UserError as exc:
            raise UserError(f"--formats: '{spec.strip()}': {exc}") from None
    return list(dict.fromkeys(cells))


def max_cells() -> int:
    """The bound on a grid run's cells: ``$TOOLBENCH_MAX_CELLS`` when set, else 200."""
    raw = os.environ.get(MAX_CELLS_ENV, "").strip()
    if not raw:
        return MAX_CELLS
    if not raw.isdigit() or int(raw) < 1:
        raise UserError(
            f"${MAX_CELLS_ENV}: must be a whole number of cells, at least 1 (got '{raw}')"
        )
    return int(raw)


_OPTION_PIECE = re.compile(r"\s*[A-Za-z_][\w-]*\s*=[^:]*")


def rejoin(specs: Sequence[str]) -> list[str]:
    """Specs with each ``key=a|b`` piece joined back to the spec before it: the command
    line's comma split counts a piece holding ``|`` as a spec of its own
    (``prompt-json:doc=python|json,tag=on|off``), but a piece that starts ``key=``
    names no format, so it can only be an option of the spec before it."""
    out: list[str] = []
    for spec in specs:
        if out and ":" in out[-1] and _OPTION_PIECE.match(spec) and "|" in spec:
            out[-1] += "," + spec.strip()
        else:
            out.append(spec)
    return out


def expand_formats(specs: Sequence[str], models: int) -> list[str]:
    """``--formats`` with every grid expanded (each cell once, in the order written);
    refused past :func:`max_cells` model-format cells when a grid is among them."""
    out: list[str] = []
    grids = False
    for spec in rejoin(specs):
        cells = expand_spec(spec)
        grids = grids or read_grid(spec) is not None
        out.extend(c for c in cells if c not in out)
    bound = max_cells() if grids else None
    if bound is not None and models * len(out) > bound:
        raise UserError(
            f"--formats: the grid expands to {models * len(out)} cells ({models} model(s) x"
            f" {len(out)} format(s)), more than {bound} (set ${MAX_CELLS_ENV} to raise it)"
        )
    return out


def base_of(spec: str) -> str:
    """A cell's spec without its axis options: the cells of one grid share it
    (``prompt-json:doc=python,shots=2`` -> ``prompt-json:shots=2``)."""
    name, colon, rest = spec.strip().partition(":")
    if not colon:
        return name
    head, bar, tail = rest.partition("|")
    kept = [i for i in head.split(",") if i.partition("=")[0].strip() not in AXIS_NAMES]
    opts = ",".join(i for i in kept if i.strip())
    return name + (":" + opts if opts else "") + (bar + tail if bar else "")


def axes_of(spec: str) -> dict[str, str]:
    """A cell's point on the grid: every axis its format takes, with the value the spec
    gives or the format's default (``{}`` for a format without axes, or one not
    installed: then only the axes the spec writes)."""
    name, _, rest = spec.strip().partition(":")
    given = {k.strip(): v.strip() for k, _, v in _items(rest.partition("|")[0])}
    given = {k: v for k, v in given.items() if k in AXIS_NAMES}
    try:
        fields = FORMATS.get(name.strip()).Options.model_fields
    except UserError:
        return dict(sorted(given.items()))
    out = {a: str(fields[a].default) for a in AXIS_NAMES if a in fields}
    out.update(given)
    return out
