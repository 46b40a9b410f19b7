"""Strict function schemas (``native:strict``): OpenAI's ``strict: true`` rules.

Strict mode constrains the model's arguments to the schema, and in exchange takes only
a subset of JSON Schema: every object lists all its properties in ``required`` and has
``additionalProperties: false``. An optional property is sent as required but nullable
(``null`` then means "left out"), so a strict call is read back with those nulls
removed (:func:`drop_optional_nulls`): what the model chose is scored, not the
transformation. Every change is said in words (:func:`strict_schema` returns them) and
recorded on the trial.

What cannot be made strict is refused before any call (:func:`why_not_strict`), naming
the place in the schema: an open object (``additionalProperties`` not false, or an
object without ``properties``), ``patternProperties``, and the composition keywords
strict mode does not take (``allOf``, ``oneOf``, ``not``, ``if``/``then``/``else``,
``dependentRequired``, ``dependentSchemas``, ``unevaluatedProperties``).
"""

from __future__ import annotations

import copy
from typing import Any

UNSUPPORTED = (
    "patternProperties", "allOf", "oneOf", "not", "if", "then", "else",
    "dependentRequired", "dependentSchemas", "unevaluatedProperties", "propertyNames",
)  # fmt: skip
"""Keywords OpenAI's strict mode refuses (its "supported schemas" list)."""
_SUBSCHEMA_LISTS = ("anyOf", "prefixItems")
_SUBSCHEMA_MAPS = ("$defs", "definitions")
MAX_DEPTH = 64
"""Deeper than any tool schema the scenario loader accepts; a walk never recurses past it."""


def why_not_strict(schema: Any, where: str = "parameters") -> str | None:
    """Why ``schema`` cannot be made strict (the first reason, with its path), or None."""
    return _why(schema, where, 0)


def _why(schema: Any, where: str, depth: int) -> str | None:
    if depth > MAX_DEPTH:
        return f"{where}: nested too deep"
    if not isinstance(schema, dict):
        return None
    for key in UNSUPPORTED:
        if key in schema:
            return f"{where}: '{key}' is not allowed in strict mode"
    if _is_object(schema):
        extra = schema.get("additionalProperties", False)
        if extra is not False:
            return f"{where}: an open object (additionalProperties is not false)"
        if not isinstance(schema.get("properties"), dict):
            return f"{where}: an object without properties (strict mode takes no open object)"
    for name, sub in _children(schema):
        why = _why(sub, f"{where}.{name}", depth + 1)
        if why is not None:
            return why
    return None


def strict_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``schema`` made strict (a copy) and what was changed, one line per change.

    Call only when :func:`why_not_strict` found nothing."""
    out = copy.deepcopy(schema)
    changes: list[str] = []
    _make_strict(out, "parameters", changes, 0)
    return out, changes


def _make_strict(schema: Any, where: str, changes: list[str], depth: int) -> None:
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return
    if _is_object(schema) and isinstance(schema.get("properties"), dict):
        props: dict[str, Any] = schema["properties"]
        required = schema.get("required")
        given = set(required) if isinstance(required, list) else set()
        for name in props:
            if name not in given:
                props[name] = nullable(props[name])
                changes.append(f"{where}.{name}: optional, sent as required and nullable")
        schema["required"] = list(props)
        if "additionalProperties" not in schema:
            changes.append(f"{where}: additionalProperties set to false")
        schema["additionalProperties"] = False
    for name, sub in _children(schema):
        _make_strict(sub, f"{where}.{name}", changes, depth + 1)


def nullable(schema: Any) -> Any:
    """``schema`` that also takes ``null`` (its ``type`` widened, else an ``anyOf``)."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    kind = out.get("type")
    if isinstance(kind, str) and "anyOf" not in out:
        out["type"] = [kind, "null"] if kind != "null" else kind
    elif isinstance(kind, list) and "anyOf" not in out:
        out["type"] = kind if "null" in kind else [*kind, "null"]
    elif isinstance(out.get("anyOf"), list) and "type" not in out:
        if not any(isinstance(s, dict) and s.get("type") == "null" for s in out["anyOf"]):
            out["anyOf"] = [*out["anyOf"], {"type": "null"}]
        return out
    else:
        return {"anyOf": [schema, {"type": "null"}]}
    if isinstance(out.get("enum"), list) and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def drop_optional_nulls(arguments: Any, schema: Any) -> Any:
    """``arguments`` without the ``null`` values of properties the original ``schema``
    left optional (strict mode's way of leaving them out), at every level of objects."""
    return _drop(arguments, schema, 0)


def _drop(value: Any, schema: Any, depth: int) -> Any:
    if depth > MAX_DEPTH or not isinstance(value, dict) or not isinstance(schema, dict):
        return value
    props = schema.get("properties")
    if not isinstance(props, dict):
        return value
    required = schema.get("required")
    given = set(required) if isinstance(required, list) else set()
    out: dict[str, Any] = {}
    for key, item in value.items():
        if item is None and key in props and key not in given:
            continue
        out[key] = _drop(item, props.get(key), depth + 1)
    return out


def _is_object(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind)


def _children(schema: dict[str, Any]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    props = schema.get("properties")
    if isinstance(props, dict):
        out += [(str(k), v) for k, v in props.items()]
    items = schema.get("items")
    if isinstance(items, dict):
        out.append(("items", items))
    for key in _SUBSCHEMA_LISTS:
        subs = schema.get(key)
        if isinstance(subs, list):
            out += [(f"{key}[{i}]", s) for i, s in enumerate(subs)]
    for key in _SUBSCHEMA_MAPS:
        subs = schema.get(key)
        if isinstance(subs, dict):
            out += [(f"{key}.{k}", v) for k, v in subs.items()]
    return out
