"""Tool descriptions for prompt formats, generated from each tool's JSON Schema.

The prompt formats tell the model about tools in prose, so everything the schema says
that matters for a correct call must be spelled out: names, descriptions, types,
required versus optional, defaults and allowed values. Nested objects and arrays are
described recursively (depth-limited, so a hostile schema cannot blow up the prompt).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from toolbench.tools import ToolDef

_MAX_DEPTH = 4


def type_name(schema: Any) -> str:
    """A short human type for a schema: ``string``, ``array of integer``, ``string or null``."""
    if not isinstance(schema, dict):
        return "any"
    t = schema.get("type")
    if isinstance(t, list):
        return " or ".join(str(x) for x in t) or "any"
    if t == "array":
        return f"array of {type_name(schema.get('items'))}"
    if t is None:
        for key in ("anyOf", "oneOf"):
            alts = schema.get(key)
            if isinstance(alts, list) and alts:
                return " or ".join(type_name(a) for a in alts)
        if "enum" in schema:
            return "enum"
        if "properties" in schema:
            return "object"
        return "any"
    return str(t)


def _facts(schema: dict[str, Any], required: bool) -> list[str]:
    facts = [type_name(schema), "required" if required else "optional"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        facts.append("one of: " + ", ".join(json.dumps(v, ensure_ascii=False) for v in enum))
    if "default" in schema:
        facts.append("default: " + json.dumps(schema["default"], ensure_ascii=False))
    for key, label in (("minimum", "min"), ("maximum", "max"), ("format", "format")):
        if key in schema:
            facts.append(f"{label}: {schema[key]}")
    return facts


def describe_params(schema: Any, indent: str = "    ", depth: int = 0) -> list[str]:
    """One line per property: ``- name (type, required, one of: ..., default: ...): text``."""
    if not isinstance(schema, dict):
        return []
    props = schema.get("properties")
    if not isinstance(props, dict) or not props:
        return []
    required = schema.get("required")
    req = set(required) if isinstance(required, list) else set()
    lines: list[str] = []
    for name, sub in props.items():
        sub = sub if isinstance(sub, dict) else {}
        desc = str(sub.get("description", "")).strip()
        line = f"{indent}- {name} ({', '.join(_facts(sub, name in req))})"
        lines.append(line + (f": {desc}" if desc else ""))
        if depth < _MAX_DEPTH:
            inner = sub.get("items") if sub.get("type") == "array" else sub
            nested = describe_params(inner, indent + "  ", depth + 1)
            if nested:
                lines.append(f"{indent}  fields:" if inner is sub else f"{indent}  item fields:")
                lines.extend(nested)
    return lines


def describe_tool(tool: ToolDef) -> str:
    """A tool as a readable block: name, description, then its parameters."""
    head = f"- {tool.name}" + (f": {tool.description.strip()}" if tool.description.strip() else "")
    params = describe_params(tool.parameters)
    if not params:
        return head + "\n  Parameters: none"
    return head + "\n  Parameters:\n" + "\n".join(params)


def describe_tools(tools: Sequence[ToolDef]) -> str:
    """Every tool, one block each."""
    if not tools:
        return "(no tools are available)"
    return "\n".join(describe_tool(t) for t in tools)


def merge_system(messages: Sequence[dict[str, Any]], section: str) -> list[dict[str, Any]]:
    """Append ``section`` to the scenario's system message, or add one in front."""
    out = [dict(m) for m in messages]
    if out and out[0].get("role") == "system":
        own = str(out[0].get("content") or "").rstrip()
        out[0]["content"] = f"{own}\n\n{section}" if own else section
    else:
        out.insert(0, {"role": "system", "content": section})
    return out
