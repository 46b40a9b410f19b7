"""A gate's bounds, as given: ``--min``/``--max``/``--max-drop`` and the ``[gate]`` table
of ``--config``, ``toolbench.toml`` or ``pyproject.toml`` (:mod:`toolbench.report.gate`
says what they mean).

Read and checked apart from the run and the report (no pandas, no pydantic): a bad bound
or table is refused in the words of the option or file, before any run is read, and a
folder holding no run is said right after, as cheaply.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbench.errors import UserError
from toolbench.metrics import get_metric

_KINDS = ("min", "max", "max_drop")
_FLAGS = ("per_cell", "significant")
REPEAT_BOUNDS = {"pass_hat_k": "pass^k", "pass_at_k": "pass@k"}
"""Bounds on repeated samples (gate name -> the name the reports print)."""


@dataclass
class GateConfig:
    """Bounds per kind: ``min``/``max``/``max_drop`` -> metric -> number."""

    min: dict[str, float] = field(default_factory=dict)
    max: dict[str, float] = field(default_factory=dict)
    max_drop: dict[str, float] = field(default_factory=dict)
    per_cell: bool = False
    source: str | None = None
    significant: bool = False
    """A ``max_drop`` on a rate fails only when the drop is significant."""
    pass_k: int | None = None
    """The k of ``pass_hat_k`` / ``pass_at_k`` bounds (None: the run's samples)."""
    pass_k_from: str = "--pass-k"
    """Where ``pass_k`` was given, for the error that refuses it."""

    def merged(self, other: GateConfig, per_cell: bool) -> GateConfig:
        """``other`` (the command line) on top of ``self`` (the file)."""
        cli_k = other.pass_k is not None
        return GateConfig(
            {**self.min, **other.min},
            {**self.max, **other.max},
            {**self.max_drop, **other.max_drop},
            self.per_cell or per_cell,
            self.source,
            self.significant or other.significant,
            other.pass_k if cli_k else self.pass_k,
            other.pass_k_from if cli_k else self.pass_k_from,
        )

    @property
    def repeat_bounds(self) -> list[str]:
        """The pass^k / pass@k bounds asked for."""
        return sorted(m for m in {*self.min, *self.max} if m in REPEAT_BOUNDS)

    @property
    def empty(self) -> bool:
        return not (self.min or self.max or self.max_drop)


def parse_bound(option: str, text: str) -> tuple[str, float]:
    """``metric=value`` from the command line; errors name the option."""
    name, eq, raw = text.partition("=")
    name, raw = name.strip(), raw.strip()
    if not eq or not name or not raw:
        raise UserError(f"{option} '{text}': expected metric=value (e.g. call_accuracy=0.9)")
    if name in REPEAT_BOUNDS and option == "--max-drop":
        raise UserError(f"{option} '{text}': {name} takes --min or --max bounds, not a drop")
    if name not in REPEAT_BOUNDS:
        get_metric(name)
    try:
        value = float(raw)
    except ValueError:
        raise UserError(f"{option} '{text}': value '{raw}' is not a number") from None
    if not math.isfinite(value):
        raise UserError(f"{option} '{text}': value '{raw}' is not a finite number")
    why = out_of_range(name, value)
    if why is not None:
        raise UserError(f"{option} '{text}': {why}")
    return name, value


def out_of_range(metric: str, value: float) -> str | None:
    """Why a bound cannot mean anything (a rate is a fraction: ``call_accuracy=2`` would
    gate on nothing, or on everything), or None."""
    rate = metric in REPEAT_BOUNDS or get_metric(metric).kind == "rate"
    if rate and not 0 <= value <= 1:
        return f"{metric} is a rate from 0 to 1 (got {value:g})"
    return None


def from_options(
    mins: Sequence[str],
    maxs: Sequence[str],
    drops: Sequence[str],
    per_cell: bool,
    pass_k: int | None = None,
) -> GateConfig:
    if pass_k is not None and pass_k < 2:
        raise UserError(f"--pass-k: expected a k of 2 or more (got {pass_k})")
    return GateConfig(
        dict(parse_bound("--min", t) for t in mins),
        dict(parse_bound("--max", t) for t in maxs),
        dict(parse_bound("--max-drop", t) for t in drops),
        per_cell,
        pass_k=pass_k,
    )


def _table_from_file(path: Path) -> dict[str, Any] | None:
    # imported when a file is read: most gates have none, and tomllib's parser is no
    # small part of refusing a bound or a folder
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: cannot read: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: invalid TOML: {exc}") from None
    tool = data.get("tool", {})
    nested = tool.get("toolbench", {}).get("gate") if isinstance(tool, dict) else None
    table = data.get("gate") if path.name != "pyproject.toml" else None
    found = table if table is not None else nested
    if found is not None and not isinstance(found, dict):
        raise UserError(f"{path}: gate: expected a table")
    return found


def load_config(config: str | Path | None = None, cwd: Path | None = None) -> GateConfig:
    """Thresholds from ``--config`` or the current directory's toolbench.toml/pyproject.toml."""
    if config is not None:
        path = Path(config)
        if not path.is_file():
            raise UserError(f"--config: {path}: no such file")
        table = _table_from_file(path)
        if table is None:
            raise UserError(f"{path}: no [gate] or [tool.toolbench.gate] table")
        return _parse_table(path, table)
    base = cwd if cwd is not None else Path()
    for name in ("toolbench.toml", "pyproject.toml"):
        path = base / name
        if path.is_file():
            table = _table_from_file(path)
            if table is not None:
                return _parse_table(path, table)
    return GateConfig()


def _parse_table(path: Path, table: dict[str, Any]) -> GateConfig:
    prefix = "tool.toolbench.gate" if path.name == "pyproject.toml" else "gate"
    cfg = GateConfig(source=str(path))
    for key, val in table.items():
        where = f"{path}: {prefix}.{key}"
        if key in _FLAGS:
            if not isinstance(val, bool):
                raise UserError(f"{where}: expected true or false")
            setattr(cfg, key, val)
            continue
        if key == "pass_k":
            if isinstance(val, bool) or not isinstance(val, int) or val < 2:
                raise UserError(f"{where}: expected a whole number of samples, 2 or more")
            cfg.pass_k, cfg.pass_k_from = val, where
            continue
        if key not in _KINDS:
            raise UserError(
                f"{where}: unknown key (expected one of min, max, max_drop, per_cell, "
                "significant, pass_k)"
            )
        if not isinstance(val, dict):
            raise UserError(f"{where}: expected a table of metric = number")
        bounds: dict[str, float] = getattr(cfg, key)
        for metric, num in val.items():
            if metric in REPEAT_BOUNDS and key == "max_drop":
                raise UserError(f"{where}.{metric}: takes min or max bounds, not a drop")
            try:
                if metric not in REPEAT_BOUNDS:
                    get_metric(metric)
            except UserError as exc:
                raise UserError(f"{where}.{metric}: {exc}") from None
            if isinstance(num, bool) or not isinstance(num, int | float):
                raise UserError(f"{where}.{metric}: expected a number")
            why = out_of_range(metric, float(num))
            if why is not None:
                raise UserError(f"{where}.{metric}: {why}")
            bounds[metric] = float(num)
    return cfg
