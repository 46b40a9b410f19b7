"""A tool schema whose ``$ref``s fan out is refused at plan time, and fails its calls
with a typed code if it reaches scoring; every real schema passes (issue 34, section 6).

``schema_work`` counts the subschemas one value may be checked against, each local
reference expanded where it stands; it is linear in the schema's size whatever the
expansion, and stops counting at the limit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolbench import codes
from toolbench.formats.base import ToolCall
from toolbench.scenarios.loader import load_scenarios
from toolbench.scenarios.toolschema import MAX_SCHEMA_WORK, schema_problem, schema_work
from toolbench.scoring.arg_schema import schema_problems
from toolbench.tools import ToolDef

BFCL = Path("/work/shared/bfcl")


def fan_out(levels: int, keyword: str = "allOf", width: int = 2) -> dict[str, Any]:
    """``a0`` references ``a1`` ``width`` times, ``a1`` references ``a2`` so, ...:
    ``width ** levels`` subschemas for one value, in a schema of ``levels`` lines."""
    defs: dict[str, Any] = {
        f"a{i}": {keyword: [{"$ref": f"#/$defs/a{i + 1}"}] * width} for i in range(levels)
    }
    defs[f"a{levels}"] = {"type": "string"}
    return {"type": "object", "properties": {"x": {"$ref": "#/$defs/a0"}}, "$defs": defs}


def chain(length: int) -> dict[str, Any]:
    defs: dict[str, Any] = {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(length)}
    defs[f"d{length}"] = {"type": "string"}
    return {"$ref": "#/$defs/d0", "$defs": defs}


RECURSIVE = {"type": "object", "properties": {"name": {"type": "string"},
             "children": {"type": "array", "items": {"$ref": "#"}},
             "partner": {"$ref": "#"}}}  # fmt: skip
MUTUAL = {"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/b"}, {"type": "null"}]},
                    "b": {"type": "object", "properties": {"next": {"$ref": "#/$defs/a"}}}},
          "$ref": "#/$defs/a"}  # fmt: skip


@pytest.mark.parametrize(
    ("schema", "refused"),
    [
        (fan_out(30), True),  # 2**30 subschemas in 30 lines
        (fan_out(12, "anyOf", 3), True),  # 3**12
        (fan_out(5, "oneOf", 4), False),  # 4**5 expansions: large, bounded
        (fan_out(10), False),  # 2**10: just under the limit
        (fan_out(11), True),  # 2**11: just over
        (RECURSIVE, False),  # recursion follows the value's own nesting
        (MUTUAL, False),
        (chain(100), False),
        (chain(200_000), True),  # long enough to be work on its own
    ],
)
def test_schema_work_refuses_fan_out_and_keeps_recursion(
    schema: dict[str, Any], refused: bool
) -> None:
    problem = schema_problem(schema)
    if refused:
        assert problem is not None and problem.startswith(
            f"its $refs expand to more than {MAX_SCHEMA_WORK} subschemas"
        )
        assert schema_work(schema) == MAX_SCHEMA_WORK + 1  # counting stopped at the limit
    else:
        assert problem is None, problem
        assert schema_work(schema) <= MAX_SCHEMA_WORK


def test_schema_work_counts_each_expansion() -> None:
    assert schema_work({"type": "string"}) == 1
    assert schema_work({"properties": {"a": {}, "b": {}}}) == 4
    # the root, properties, x, the $ref's target counted where it stands, $defs, a
    assert schema_work({"properties": {"x": {"$ref": "#/$defs/a"}}, "$defs": {"a": {}}}) == 6
    assert schema_work(fan_out(3), limit=10**9) > 2**3


def test_every_real_schema_is_far_under_the_limit() -> None:
    """The bundled suite and, where present, BFCL v4's functions: the largest is a
    small fraction of the limit."""
    schemas = [t.parameters for sc in load_scenarios(None) for t in sc.tools]
    for path in sorted(BFCL.glob("BFCL_v4_*.json")):
        for line in path.read_text(encoding="utf-8").splitlines():
            schemas += [f.get("parameters", {}) for f in json.loads(line).get("function", [])]
    assert schemas
    assert max(schema_work(s) for s in schemas) * 100 < MAX_SCHEMA_WORK


def test_scoring_a_fan_out_schema_built_in_code_is_a_typed_failure() -> None:
    """A scenario that skipped validate: the call fails ``args.schema_invalid`` at once
    (validating ``"s"`` against ``fan_out(30)`` would visit 2**30 subschemas)."""
    tool = ToolDef(name="f", description="d", parameters=fan_out(30))
    (problem,) = schema_problems(ToolCall(name="f", arguments={"x": "s"}), [tool])
    assert problem == (
        codes.ARGS_SCHEMA_INVALID,
        f"tool 'f' has an invalid schema: its $refs expand to more than {MAX_SCHEMA_WORK}"
        " subschemas",
    )
