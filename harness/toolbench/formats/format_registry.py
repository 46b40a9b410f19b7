"""Formats registered by name, all through the entry-point group ``toolbench.formats``.

The built-in formats are listed in toolbench's own ``pyproject.toml`` under that group,
exactly as a plugin lists its formats in its own, so there is one way in: each entry
point names a :class:`Format` subclass (``module:Class``). A plugin that fails to import
(or names something that is not a format, or a name already taken) is named in one
warning line and left out; the other formats still work.

The registry reads no ``pyproject.toml`` at run time: the installed metadata is the one
list (an editable install made before a format was added needs ``pip install -e .``
again, as for any new entry point). What other lists need from a format (its detection
patterns, its conformance family, whether its syntax leaks into native replies) is
declared on the format class and read from here (:mod:`toolbench.formats.detect`,
:func:`toolbench.formats.native.dialects`). Loading follows :mod:`toolbench.registry`.

A format spec on the command line is ``name`` or ``name:key=value,key=value``
(for example ``prompt-json:shots=2``); the options are validated by the format's own
``Options`` model: an option the format does not take is refused with the options it
does take, and a bad value with the model's reason.
"""

from __future__ import annotations

from typing import TypeGuard

from pydantic import BaseModel, ValidationError

from toolbench.declared_formats import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
from toolbench.errors import UserError
from toolbench.formats.base import Format
from toolbench.formats.composition import compose
from toolbench.formats.stream_spec import Streamed, split_stream
from toolbench.registry import Kind, Registry


def _is_format(obj: object) -> TypeGuard[type[Format]]:
    return isinstance(obj, type) and issubclass(obj, Format)


FORMATS: Registry[type[Format]] = Registry(
    ENTRY_POINT_GROUP, Kind(_is_format, "Format subclass"), "format", lambda cls: cls.name
)
"""Every format class by its ``name``."""


def register_format(cls: type[Format]) -> type[Format]:
    """Class decorator: make a format available by its ``name`` (without an entry point)."""
    return FORMATS.register(cls)


def format_names() -> list[str]:
    return sorted(FORMATS.names())


def builtin_format_names() -> list[str]:
    """The formats toolbench itself ships (its own entry points)."""
    return sorted(FORMATS.builtin_names())


def format_class(name: str) -> type[Format]:
    return FORMATS.get(name)


def _option_list(model: type[BaseModel]) -> str:
    return ", ".join(sorted(model.model_fields)) or "none"


def _is_flag(model: type[BaseModel], key: str) -> bool:
    """Whether ``key`` is a boolean option (given bare, it means ``key=true``)."""
    field = model.model_fields.get(key)
    return field is not None and field.annotation in (bool, bool | None)


def parse_spec(spec: str) -> tuple[str, BaseModel]:
    """Split ``name:k=v,...`` into a name and options validated by that format's model.

    An empty option (``prompt-json:,shots=2``, ``shots=2,,x=1``) and an option given
    twice (``shots=2,shots=3``) are refused: neither has one reading (a typo, or which
    value is meant), and keeping the last value would run a format nobody asked for."""
    name, _, rest = spec.strip().partition(":")
    model = format_class(name.strip()).Options
    raw: dict[str, str] = {}
    for item in (p.strip() for p in rest.split(",")) if rest.strip() else ():
        if not item:
            raise UserError(f"format '{spec.strip()}': an empty option (a ',' with none beside it)")
        key, eq, value = item.partition("=")
        if not eq and _is_flag(model, key.strip()):
            value, eq = "true", "="  # a bare boolean option: native:strict
        if not eq:
            raise UserError(f"format '{spec}': option '{item}' must be key=value")
        if key.strip() in raw:
            raise UserError(f"format '{spec.strip()}': option '{key.strip()}' is given twice")
        raw[key.strip()] = value.strip()
    given = ",".join(f"{k}={v}" for k, v in raw.items())
    if raw and not model.model_fields:
        raise UserError(f"format '{name.strip()}' takes no options (got {given})")
    unknown = [k for k in raw if k not in model.model_fields]
    if unknown:
        raise UserError(
            f"format '{spec}': unknown option '{unknown[0]}' "
            f"(format '{name.strip()}' takes: {_option_list(model)})"
        )
    try:
        options = model.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "options"
        raise UserError(f"format '{spec}': option {field}: {err['msg']}") from None
    return name.strip(), options


def get_format(spec: str) -> Format:
    """Instantiate a format from its command-line spec.

    ``a|b`` is a fallback composition (:mod:`toolbench.formats.composition`): both parts
    must be known formats (each may carry its options); ``a|b|c`` is ``a|(b|c)``.
    The ``stream`` option (``xml:stream``, ``native:stream|xml``) asks the whole format
    streamed (:mod:`toolbench.formats.stream_spec`).
    """
    base, streamed = split_stream(spec)
    if any(split_stream(part)[1] for part in base.split("|")[1:]):
        raise UserError(f"format '{spec.strip()}': write stream on the first format only")
    if streamed:
        return Streamed(get_format(base))
    head, sep, rest = spec.partition("|")
    if sep:
        if not head.strip() or not rest.strip():
            raise UserError(
                f"format '{spec.strip()}': a fallback needs a format on each side of '|'"
            )
        primary, fallback = get_format(head), get_format(rest)
        parts = [get_format(part).spec for part in base.split("|")]
        if len(set(parts)) < len(parts):
            twice = next(p for p in parts if parts.count(p) > 1)
            raise UserError(
                f"format '{spec.strip()}': '{twice}' appears twice (a fallback parses what"
                " the formats before it find no call in; the same format finds none again)"
            )
        return compose(primary, fallback)
    name, options = parse_spec(spec)
    return format_class(name)(options)
