"""Formats registered by name; third parties extend it through the entry-point group
``toolbench.formats`` (each entry point names a :class:`Format` subclass).

A format spec on the command line is ``name`` or ``name:key=value,key=value``
(for example ``prompt-json:shots=2``).
"""

from __future__ import annotations

from importlib.metadata import entry_points

from pydantic import ValidationError

from toolbench.errors import UnknownNameError, UserError
from toolbench.formats.base import Format, FormatOptions

ENTRY_POINT_GROUP = "toolbench.formats"

_REGISTRY: dict[str, type[Format]] = {}
_loaded = False


def register_format(cls: type[Format]) -> type[Format]:
    """Class decorator: make a format available by its ``name``."""
    _REGISTRY[cls.name] = cls
    return cls


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    # The built-in formats register themselves on import.
    import toolbench.formats.families  # noqa: F401  (the model-family dialects)
    from toolbench.formats import native, prompt_json, react, xml  # noqa: F401

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        obj = ep.load()
        if isinstance(obj, type) and issubclass(obj, Format):
            register_format(obj)


def format_names() -> list[str]:
    _load()
    return sorted(_REGISTRY)


def format_class(name: str) -> type[Format]:
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownNameError("format", name, _REGISTRY) from None


def parse_spec(spec: str) -> tuple[str, FormatOptions]:
    """Split ``name:k=v,...`` into a name and validated options."""
    name, _, rest = spec.strip().partition(":")
    raw: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise UserError(f"format '{spec}': option '{item}' must be key=value")
        raw[key.strip()] = value.strip()
    try:
        options = FormatOptions.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "options"
        raise UserError(f"format '{spec}': option {field}: {err['msg']}") from None
    return name, options


def get_format(spec: str) -> Format:
    """Instantiate a format from its command-line spec."""
    name, options = parse_spec(spec)
    return format_class(name)(options)
