"""Validating call arguments against the tool's own JSON Schema.

This is independent of the scenario's matchers: a call can match the expected values yet
break the declared schema (a string where an integer is declared), or the reverse. It uses
the Draft 2020-12 validator, built once per distinct schema. A tool whose schema is itself
invalid does not crash scoring: its calls count as invalid with ``args.schema_invalid``
and a reason naming the schema problem.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from toolbench import codes
from toolbench.formats.base import ToolCall
from toolbench.scoring.matchers import Problem
from toolbench.tools import ToolDef


@lru_cache(maxsize=512)
def _validator(schema_json: str) -> Draft202012Validator | str:
    """A validator for the schema, or the reason the schema itself is invalid."""
    schema: Any = json.loads(schema_json)
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return exc.message
    return Draft202012Validator(schema)


def validator_for(tool: ToolDef) -> Draft202012Validator | str:
    return _validator(json.dumps(tool.parameters, sort_keys=True, default=str))


def schema_problems(call: ToolCall, tools: Sequence[ToolDef]) -> list[Problem]:
    """Why ``call``'s arguments break its tool's schema (empty: they validate)."""
    tool = next((t for t in tools if t.name == call.name), None)
    if tool is None:
        return [(codes.CALL_UNKNOWN_TOOL, f"'{call.name}' is not one of the offered tools")]
    validator = validator_for(tool)
    if isinstance(validator, str):
        return [
            (codes.ARGS_SCHEMA_INVALID, f"tool '{tool.name}' has an invalid schema: {validator}")
        ]
    out: list[Problem] = []
    for err in validator.iter_errors(call.arguments):
        where = "/".join(str(p) for p in err.absolute_path) or "arguments"
        message = err.message if len(err.message) <= 160 else err.message[:157] + "..."
        out.append((codes.ARGS_SCHEMA_INVALID, f"{call.name}: {where}: {message}"))
        if len(out) >= 3:
            break
    return out
