"""One BFCL entry (question line + possible-answer line) as a toolbench scenario.

The matchers reproduce BFCL's AST checker (``bfcl_eval/eval_checker/ast_eval``):

* a string (or ``any``) parameter: ``any_of`` the string answers with ``normalize`` and a
  strict ``string`` type guard (BFCL's ``string_checker``);
* ``integer``, ``float``, ``boolean``: ``any_of`` with a strict type guard (BFCL converts an
  int to a float where a float is expected, and refuses ``3.0`` for an integer);
* ``array`` / ``tuple``: the answer lists, normalised item by item (``list_checker``),
  each item of the items' exact Python type (``type_checker``'s nested check:
  ``type_error:nested``); a list of dicts: ``alternatives`` of ``items`` of ``fields``
  (``list_dict_checker``);
* ``dict``: ``alternatives`` of ``fields``, values compared with Python's ``==`` as
  ``dict_checker`` does (``True == 1``);
* ``""`` among the answers: the argument may be left out.

Function names are kept as BFCL writes them, dots included (``math.gcd``): BFCL shows
prompt-mode models the original names and its checker expects them back. Providers whose
tool APIs refuse dots get provider-safe names from the ``native`` format, which maps the
calls back (:mod:`toolbench.formats.tool_names`), as BFCL's ``underscore_to_dot`` does.
"""

from __future__ import annotations

import re
from typing import Any

from toolbench.errors import UserError

BFCL_TYPES = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "string": "string",
    "integer": "integer",
    "boolean": "boolean",
    "array": "array",
    "object": "object",
    "number": "number",
    "null": "null",
}
"""BFCL's type names as JSON Schema types; ``any`` drops the ``type`` keyword."""

_PY_TYPE = {
    "string": str,
    "any": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
}
"""BFCL's ``PYTHON_TYPE_MAPPING``: the Python type its checker requires."""

_GUARD = {
    "string": "string",
    "any": "string",
    "integer": "integer",
    "float": "number",
    "boolean": "boolean",
    "array": "array",
    "tuple": "array",
    "dict": "object",
}

_ID_BAD = re.compile(r"[^A-Za-z0-9_.-]")


class SkipEntry(Exception):
    """This entry cannot become a faithful scenario; the message says why."""


class BadInput(UserError):
    """A BFCL file that is not what BFCL writes (one line naming file and line)."""


def scenario_id(raw: str) -> str:
    """A BFCL id as a toolbench id (``[A-Za-z0-9][A-Za-z0-9_.-]*``, at most 128)."""
    out = _ID_BAD.sub("_", raw)
    if not out or not out[0].isalnum():
        out = "bfcl_" + out
    return out[:128]


def json_schema(node: Any) -> Any:
    """BFCL's parameter schema as valid JSON Schema (types renamed at every level)."""
    if isinstance(node, list):
        return [json_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, str):
            if value == "any":
                continue
            if value not in BFCL_TYPES:
                raise SkipEntry(f"unknown BFCL type '{value}'")
            out[key] = BFCL_TYPES[value]
        elif key == "properties" and isinstance(value, dict):
            out[key] = {k: json_schema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = json_schema(value)
        elif key == "required" and not isinstance(value, list):
            continue  # BFCL sometimes marks a property ``required: true``; not JSON Schema
        else:
            out[key] = value
    return out


def _answer_type(alts: list[Any]) -> type | None:
    for a in alts:
        if a != "":
            return type(a)
    return None


def _fields(answer: dict[str, Any]) -> dict[str, Any]:
    """A dict answer's keys: BFCL's ``dict_checker`` compares each value with ``in`` (no
    type check: ``1`` matches ``True`` and ``1.0``), strings standardized."""
    return {
        k: {
            "any_of": list(v) if isinstance(v, list) else [v],
            "normalize": True,
            "python_equal": True,
        }
        for k, v in answer.items()
    }


def _typed_items(alts: list[Any], item_type: str) -> dict[str, Any] | None:
    """BFCL's nested type check of a list argument (``type_checker``, one level deep), or
    None when BFCL skips it (an answer that is not a list, such as ``""``).

    Each item must have the items' Python type exactly (``[12, 15]`` is not a list of
    floats: ``type_error:nested``), or the type of the answer's first item (BFCL's
    "variable" reading); the list must equal that answer, strings standardized.
    """
    if item_type not in _PY_TYPE or any(not isinstance(a, list) for a in alts):
        return None
    want = _PY_TYPE[item_type].__name__
    options: list[dict[str, Any]] = []
    for a in alts:
        allowed = [want]
        first = next((x for x in a if x != ""), None)
        own = type(first).__name__ if first is not None else want
        if own not in allowed and own in ("str", "int", "float", "bool", "list", "dict"):
            allowed.append(own)
        items = [
            {"alternatives": [{"any_of": [x], "normalize": True, "py_type": t} for t in allowed]}
            for x in a
        ]
        options.append({"items": items})
    return {"alternatives": options}


def arg_matcher(
    param: str, alts: list[Any], spec: dict[str, Any], required: bool = False
) -> dict[str, Any]:
    """The matcher (as YAML data) for one parameter's list of acceptable values."""
    out = _matcher(param, alts, spec)
    if required and "" in alts:
        out["required"] = True
        out.pop("optional", None)
    return out


def _matcher(param: str, alts: list[Any], spec: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(alts, list):
        raise SkipEntry(f"answer for '{param}' is not a list of values")
    btype = spec.get("type") if isinstance(spec, dict) else None
    if btype not in _PY_TYPE:
        raise SkipEntry(f"parameter '{param}' has BFCL type {btype!r}, which the checker refuses")
    want = _PY_TYPE[btype]
    atype = _answer_type(alts)
    if atype is not None and atype is not want and not (want is float and atype is int):
        # BFCL's "variable" case: the answer's own type is accepted, compared with ==.
        own = {int: "integer", str: "string", bool: "boolean"}.get(atype)
        return {"any_of": list(alts), **({"type": own, "strict_type": True} if own else {})}
    guard = {"type": _GUARD[btype], "strict_type": True}
    if want is str:
        return {**guard, "any_of": [a for a in alts if isinstance(a, str)], "normalize": True}
    if want is dict:
        dict_options = [{"fields": _fields(a)} for a in alts if isinstance(a, dict)]
        out: dict[str, Any] = {**guard, "alternatives": dict_options}
        if "" in alts:
            out["optional"] = True
        return out
    if want is list:
        items: Any = spec.get("items")
        if isinstance(items, dict) and items.get("type") == "dict":
            options: list[dict[str, Any]] = []
            for a in alts:
                if a == "":
                    options.append({"items": []})
                elif isinstance(a, list):
                    options.append(
                        {
                            "items": [
                                {"fields": _fields(d)} if isinstance(d, dict) else {"exact": d}
                                for d in a
                            ]
                        }
                    )
            optional = {"optional": True} if "" in alts else {}
            return {**guard, "alternatives": options, **optional}
        item_type = items.get("type") if isinstance(items, dict) else None
        typed = _typed_items(alts, item_type) if isinstance(item_type, str) else None
        if typed is not None:
            return {**guard, **typed}
        values = [a if a != "" else [] for a in alts]
        optional = {"optional": True} if "" in alts else {}
        return {**guard, "any_of": values, "normalize": True, **optional}
    return {**guard, "any_of": list(alts)}
