"""Argument values written as bare text, typed with the tool's JSON Schema.

XML-style dialects (``qwen3-coder``, ``kimi-k2``, Claude's ``invoke``) carry each argument
as the text between two tags: ``<parameter=days>3</parameter>`` means the integer 3 only
because the offered tool says ``days`` is an integer. :func:`convert_value` reads such a
text the way the reference parsers (vLLM, llama.cpp) do: by the types the parameter's
schema allows, JSON where the schema wants an object or array, a Python literal as vLLM's
``qwen3_coder`` accepts one, and the text itself otherwise.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from toolbench.formats.jsonscan import Decoded, loads_strict
from toolbench.formats.pycalls import python_literal
from toolbench.tools import ToolDef

_JSON_TYPES: dict[type, str] = {
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    list: "array",
    dict: "object",
    type(None): "null",
}


_TYPE_ALIASES = {
    "int": "integer",
    "float": "number",
    "double": "number",
    "bool": "boolean",
    "str": "string",
    "text": "string",
    "dict": "object",
    "list": "array",
}
"""Python-style type names some tool definitions use; the reference parsers accept them."""


def param_schema(tools: Sequence[ToolDef] | None, tool: str, param: str) -> dict[str, Any] | None:
    """The JSON Schema of ``param`` of ``tool`` if the request offered it, else None."""
    for t in tools or ():
        if t.name == tool:
            props = t.parameters.get("properties")
            if isinstance(props, dict):
                sub = props.get(param)
                return sub if isinstance(sub, dict) else None
            return None
    return None


def schema_types(schema: dict[str, Any] | None, depth: int = 0) -> set[str]:
    """The JSON types a schema allows (``type``, lists of types, ``anyOf``/``oneOf``, ``enum``)."""
    if not isinstance(schema, dict) or depth > 8:
        return set()
    t = schema.get("type")
    if isinstance(t, str):
        return {_TYPE_ALIASES.get(t, t)}
    if isinstance(t, list):
        return {_TYPE_ALIASES.get(x, x) for x in t if isinstance(x, str)}
    out: set[str] = set()
    for key in ("anyOf", "oneOf"):
        alts = schema.get(key)
        if isinstance(alts, list):
            for alt in alts:
                out |= schema_types(alt if isinstance(alt, dict) else None, depth + 1)
    enum = schema.get("enum")
    if not out and isinstance(enum, list):
        out = {_JSON_TYPES.get(type(v), "string") for v in enum}
    return out


def _fits(value: Any, types: set[str]) -> bool:
    kind = _JSON_TYPES.get(type(value), "")
    if kind in types:
        return True
    if kind == "integer" and "number" in types:
        return True
    return kind == "number" and "integer" in types and float(value).is_integer()


_INT_TEXT = re.compile(r"[+-]?[0-9]{1,300}")
"""An integer as models write it, leading zeros included (``007``); bounded in length."""
_NUM_TEXT = re.compile(
    r"[+-]?(?:[0-9]{1,300}(?:\.[0-9]{0,300})?|\.[0-9]{1,300})(?:[eE][+-]?[0-9]{1,4})?"
)
"""A decimal number as models write it (``007.5``, ``.5``, ``1e3``)."""


def convert_value(
    raw: str,
    schema: dict[str, Any] | None,
    *,
    untyped_json: bool = True,
    null_any_type: bool = False,
) -> Any:
    """Type a bare-text argument value by the parameter's JSON Schema.

    A string parameter keeps the text exactly. Other types read the text the way the
    reference parsers (vLLM's ``qwen3_coder``, ``minimax_m2``...) read it, since models write
    values as text and not as JSON: ``true`` / ``FALSE`` for a boolean and ``null`` /
    ``NULL`` for a nullable parameter in any case, an integer with leading zeros (``007``)
    for an integer; else the JSON reading when it has the schema's type (``{"a": 1}``),
    or for an object or array its Python-literal reading (``{'a': 1}``, vLLM's fallback).
    Text that fits nothing stays a string, for schema validation to flag.

    Without a schema (a tool or parameter the request did not offer) ``untyped_json``
    decides: True reads valid JSON that is not itself a string (``2`` is a number,
    ``"foo"`` stays the five characters); False keeps the text, as vLLM's and llama.cpp's
    Qwen3-Coder parsers do, except a case-insensitive ``null``, which they read as null.
    ``null_any_type`` reads that ``null`` as null whatever the schema says, a string
    parameter included: Qwen3-Coder's rule in vLLM, SGLang and Ollama alike.
    """
    types = schema_types(schema)
    text = raw.strip()
    lowered = text.lower() if len(text) <= 5 else ""
    if null_any_type and lowered == "null":
        return None
    if not types:
        if not untyped_json:
            return None if lowered == "null" else raw
    elif "null" in types and lowered == "null":
        return None
    elif types <= {"string", "null"}:
        return raw
    else:
        typed = _typed_text(text, lowered, types)
        if typed is not _NO_READING:
            return typed
    got = loads_strict(text) if text else None
    if (got is None or not got.ok) and types & {"object", "array"}:
        got = _python_literal(text)  # vLLM's qwen3_coder reads {'a': 1} for an object
    if got is None or not got.ok:
        return raw
    value = got.value
    if not types:
        return raw if isinstance(value, str) else value
    if _fits(value, types):
        if "integer" in types and isinstance(value, float) and value.is_integer():
            return int(value) if "number" not in types else value
        return value
    return raw


_NO_READING = object()


def _python_literal(text: str) -> Decoded:
    """A Python-literal object or list (single quotes, ``True``/``None``), read with
    ``ast`` by the pythonic format's checked reader, never evaluated."""
    ok, value = python_literal(text)
    return Decoded(value, ok=True) if ok and isinstance(value, (dict, list)) else Decoded()


def _typed_text(text: str, lowered: str, types: set[str]) -> Any:
    """The value of ``text`` read as a boolean or number the schema allows (else a sentinel)."""
    if "boolean" in types and lowered in ("true", "false"):
        return lowered == "true"
    if "integer" in types and _INT_TEXT.fullmatch(text):
        return int(text)
    if "number" in types and _NUM_TEXT.fullmatch(text):
        if _INT_TEXT.fullmatch(text):
            return int(text)
        number = float(text)
        return number if math.isfinite(number) else text  # 1e999: no JSON number
    return _NO_READING


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value."""
    return _JSON_TYPES.get(type(value), "object")
