"""Checks on a tool's parameter schema that ``scenarios validate`` runs before any trial.

A schema that passes here cannot crash scoring or a provider request:

* it is valid JSON Schema (Draft 2020-12 metaschema), so ``type: float`` is refused
  instead of turning every call into ``args.schema_invalid``;
* it nests at most :data:`MAX_SCHEMA_DEPTH` levels (jsonschema recurses several Python
  frames per level; 150 levels hit the recursion limit mid-run);
* every ``$ref`` / ``$dynamicRef`` points inside the schema itself (``#`` or a JSON
  pointer ``#/...`` that resolves): a remote, ``file:`` or dangling reference would make
  the validator fetch, read local files, or fail at scoring time;
* its references, expanded, make at most :data:`MAX_SCHEMA_WORK` subschemas
  (:func:`schema_work`): references that fan out multiply, and validating one argument
  against such a schema would never end.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

MAX_SCHEMA_DEPTH = 32
"""Deepest nesting of objects and arrays in one tool's ``parameters``."""

_REF_KEYS = ("$ref", "$dynamicRef")


def _depth(value: Any, limit: int) -> int:
    """Nesting depth of a JSON value, counted without recursion, stopping past ``limit``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if not isinstance(item, dict | list):
            continue
        deepest = max(deepest, level)
        if deepest > limit:
            return deepest
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, level + 1) for child in children)
    return deepest


MAX_SCHEMA_WORK = 20_000
"""Most subschemas one value may be checked against in one tool's ``parameters``, counted
with every local ``$ref`` expanded (:func:`schema_work`)."""


_MISSING = object()
"""What :func:`_resolve` gives for a reference that names nothing (a target may be null)."""


def _resolve(root: Any, ref: str) -> Any:
    """The node a local reference (``#`` or ``#/a/b``) names in ``root``, or
    :data:`_MISSING`."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return _MISSING
    node = root
    for raw in ref[2:].split("/"):
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _MISSING
    return node


def _parts(root: Any, node: Any) -> list[Any]:
    """The objects and arrays a validator may descend into from ``node``: its own, and
    what its local ``$ref`` / ``$dynamicRef`` names."""
    items = node.values() if isinstance(node, dict) else node
    out = [v for v in items if isinstance(v, dict | list)]
    if isinstance(node, dict):
        for key in _REF_KEYS:
            ref = node.get(key)
            target = _resolve(root, ref) if isinstance(ref, str) else None
            if isinstance(target, dict | list):
                out.append(target)
    return out


def schema_work(schema: Any, limit: int = MAX_SCHEMA_WORK) -> int:
    """How many subschemas validating one value may visit: the schema's objects and
    arrays counted with every local ``$ref`` expanded where it stands (a reference back
    to a subschema it sits in, a recursive schema, counts once: its recursion follows
    the value's own nesting). Stops counting past ``limit``.

    References can multiply: ``a0: {allOf: [{$ref: a1}, {$ref: a1}]}``, ``a1`` the same
    over ``a2``, ... thirty levels make a 2 kB schema whose every check visits a billion
    subschemas (jsonschema does not share the work), and scoring a single call never
    ends. Each node is counted once (shared subschemas are added by their count, not
    walked again), without recursion: linear in the schema's size."""
    memo: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[Any, bool]] = [(schema, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            open_.discard(key)
            total = 1 + sum(memo.get(id(part), 1) for part in _parts(schema, node))
            memo[key] = min(total, limit + 1)
            continue
        if key in memo or key in open_:
            continue
        open_.add(key)
        stack.append((node, True))
        stack.extend((p, False) for p in _parts(schema, node) if id(p) not in memo)
    return memo.get(id(schema), 1)


def _refs(value: Any) -> list[str]:
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key in _REF_KEYS:
                if key in item:
                    out.append(item[key] if isinstance(item[key], str) else repr(item[key]))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
_TEXT = frozenset({"description", "title", "$comment", "format"})
_ANY = frozenset({"default", "const"})
_NUMBER = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_COUNT = frozenset({"minLength", "maxLength", "minItems", "maxItems", "minProperties",
                    "maxProperties"})  # fmt: skip
_SCHEMA_MAPS = frozenset({"properties", "$defs"})
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf"})
_SCHEMA_OR_BOOL = frozenset({"items", "additionalProperties", "not"})


def _plainly_valid(schema: Any) -> bool:
    """Whether ``schema`` uses only the common keywords (``type``, ``properties``,
    ``required``, ``items``, ``enum``, bounds, texts, ``anyOf``...) each with a value of
    the kind the Draft 2020-12 metaschema asks for: then it is valid JSON Schema without
    asking the metaschema. Any other keyword, or a value of another kind, answers False
    and the metaschema decides (the answer is only ever "valid"; never a verdict of
    invalid, whose message is jsonschema's). The metaschema's check was a noticeable
    share of replaying the 1,000 ``bfcl-smoke`` trials; a property test holds
    that this never calls a schema valid that the metaschema refuses."""
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict):
            return False
        for key, value in node.items():
            if key == "type":
                kinds = value if isinstance(value, list) else [value]
                if not kinds or len(set(map(str, kinds))) != len(kinds):
                    return False
                if not all(isinstance(k, str) and k in TYPES for k in kinds):
                    return False
            elif key in _TEXT:
                if not isinstance(value, str):
                    return False
            elif key in _ANY:
                continue
            elif key in ("enum", "examples"):
                if not isinstance(value, list):
                    return False
            elif key == "required":
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    return False
                if len(set(value)) != len(value):
                    return False
            elif key in _NUMBER:
                if isinstance(value, bool) or not isinstance(value, int | float):
                    return False
            elif key in _COUNT:
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    return False
            elif key in _SCHEMA_MAPS:
                if not isinstance(value, dict):
                    return False
                stack.extend(value.values())
            elif key in _SCHEMA_LISTS:
                if not isinstance(value, list) or not value:
                    return False
                stack.extend(value)
            elif key in _SCHEMA_OR_BOOL:
                if not isinstance(value, dict | bool):
                    return False
                stack.append(value)
            else:
                return False
    return True


@lru_cache(maxsize=1024)
def _problem(schema_json: str) -> str | None:
    schema = json.loads(schema_json)
    if _depth(schema, MAX_SCHEMA_DEPTH) > MAX_SCHEMA_DEPTH:
        return f"schema nested deeper than {MAX_SCHEMA_DEPTH} levels"
    for ref in _refs(schema):
        if _resolve(schema, ref) is _MISSING:
            return (
                f"$ref '{ref}' does not resolve inside the schema "
                "(only local references such as '#/$defs/name' are allowed)"
            )
    if schema_work(schema) > MAX_SCHEMA_WORK:
        return (
            f"its $refs expand to more than {MAX_SCHEMA_WORK} subschemas (a reference"
            " used several times in a subschema that is itself referenced several times"
            " multiplies: validating one argument would not end)"
        )
    if _plainly_valid(schema):
        return None
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        return f"not valid JSON Schema{f' at {where}' if where else ''}: {exc.message}"
    except RecursionError:
        return f"schema nested deeper than {MAX_SCHEMA_DEPTH} levels"
    return None


def schema_problem(parameters: Any) -> str | None:
    """Why ``parameters`` cannot serve as a tool's schema, or ``None`` when it can."""
    if not isinstance(parameters, dict):
        return "must be a JSON Schema object"
    try:
        text = json.dumps(parameters, sort_keys=True)
    except (TypeError, ValueError):
        return "holds values that are not JSON (dates, binary...)"
    except RecursionError:
        return f"schema nested deeper than {MAX_SCHEMA_DEPTH} levels"
    return _problem(text)
