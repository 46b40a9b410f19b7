"""Option values that need no pydantic: absent ones, defaults, plain words, integers, paths,
and the words of a repeatable text option.

Typer 0.29 coerces every parameter's value, a default or an absent one included, through
a pydantic ``TypeAdapter`` that it builds on first use. A command line that fails to
parse (a missing argument, an unknown option) would import pydantic and build adapters
for every option before it, only to print one line: most of a usage error's start-up.
:func:`coerce_lazily` gives each parameter a coercion that answers the values whose
result is certain (``None``, a ``str`` for a ``str`` option, a ``bool`` for a flag, an
``int`` or a plain decimal for an ``int`` option without bounds, the list of the words
given to a repeatable ``list[str]`` option) as typer's own would; a
path goes to typer's own checks of a path as the ``Path`` pydantic would have made of
it; every other value goes to typer's coercion, built then. Typer still parses; no value
is read differently (``tests/cli/test_value_coercion.py`` compares both on every option
of every command).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, get_args, get_origin

from typer._coercion import build_runtime_param
from typer._param_types import coerce_cli_path

_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
"""An ``int`` pydantic reads as Python does (no sign ``+``, spaces, ``_`` or leading 0)."""


class LazyCoercion:
    """A parameter's coercion: the certain cases here, the rest by typer's own."""

    def __init__(self, descriptor: Any) -> None:
        self.descriptor = descriptor
        self._typer: Any = None

    def typer_coercion(self) -> Any:
        """Typer's coercion of this parameter (through pydantic), built on first need."""
        if self._typer is None:
            self._typer = build_runtime_param(self.descriptor)
        return self._typer

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        if value is None:  # typer's own first step, before any adapter
            return () if param.multiple or param.nargs == -1 else None
        desc = self.descriptor
        info = desc.parameter_info
        if param.nargs == 1 and not param.multiple and info.parser is None:
            if _certain(desc, value):
                return int(value) if desc.annotation is int else value
            path = _as_path(desc, value)
            if path is not None:
                return coerce_cli_path(path, info, path_type=Path, param=param, ctx=ctx)
        if param.multiple and info.parser is None and _words(desc, value):
            return list(value)
        return self.typer_coercion().coerce(value, param=param, ctx=ctx)


def _certain(descriptor: Any, value: Any) -> bool:
    """Whether typer's coercion would hand back ``value`` itself (an ``int`` option: the
    integer a decimal string spells)."""
    annotation = descriptor.annotation
    if annotation is str:
        return type(value) is str
    if annotation is bool:
        return type(value) is bool
    if annotation is int:
        info = descriptor.parameter_info
        if info.min is not None or info.max is not None or info.clamp:
            return False
        return type(value) is int or (type(value) is str and _DECIMAL.fullmatch(value) is not None)
    return False


def _words(descriptor: Any, value: Any) -> bool:
    """Whether ``value`` is the words of a ``list[str]`` option, which typer's coercion
    hands back as a list of the same words."""
    annotation = descriptor.annotation
    if get_origin(annotation) is not list or get_args(annotation) != (str,):
        return False
    return type(value) in (tuple, list) and all(type(v) is str for v in value)


def _as_path(descriptor: Any, value: Any) -> Path | None:
    """The ``Path`` typer's pydantic adapter makes of ``value`` for a ``Path`` option
    (``Path(value)``), or None where it may do otherwise."""
    if descriptor.annotation is not Path or descriptor.parameter_info.path_type is not None:
        return None
    if isinstance(value, Path):
        return value
    return Path(value) if type(value) is str else None


def coerce_lazily(params: Iterable[Any]) -> None:
    """Give each typer parameter of ``params`` a :class:`LazyCoercion` (parameters of a
    typer that coerces differently are left as they are)."""
    for p in params:
        typed = "_runtime_param" in vars(p) and hasattr(p, "type_descriptor")
        if typed and p._runtime_param is None:
            p._runtime_param = LazyCoercion(p.type_descriptor)
