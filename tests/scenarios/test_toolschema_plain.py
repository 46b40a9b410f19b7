"""The metaschema-free check of common tool schemas never calls valid what the Draft
2020-12 metaschema refuses, and takes most real tool schemas (bundled and BFCL)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from toolbench.scenarios.loader import load_scenarios
from toolbench.scenarios.toolschema import _plainly_valid, schema_problem

KEYS = ["type", "description", "title", "$comment", "format", "default", "const", "enum",
        "examples", "required", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
        "properties", "$defs", "anyOf", "oneOf", "allOf", "items", "additionalProperties",
        "not", "pattern", "$ref", "uniqueItems", "multipleOf", "prefixItems"]  # fmt: skip
"""The keywords the check knows, and some it leaves to the metaschema."""

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(-2, 2, allow_nan=False),
    st.sampled_from(["object", "array", "string", "number", "integer", "boolean", "null",
                     "float", "", "x"]),
)  # fmt: skip
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from([*KEYS, "a", "b"]), inner, max_size=3),
    ),
    max_leaves=12,
)


def _nested(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    named = st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)
    value = st.one_of(values, inner, st.lists(inner, max_size=3), named)
    return st.dictionaries(st.sampled_from(KEYS), value, max_size=4)


schemas = st.recursive(
    st.one_of(st.booleans(), st.dictionaries(st.sampled_from(KEYS), values, max_size=4)),
    _nested,
    max_leaves=20,
)


def _valid(schema: Any) -> bool:
    # As check_schema asks: the metaschema, with its format checker.
    meta = Draft202012Validator(
        Draft202012Validator.META_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER
    )
    return not list(meta.iter_errors(schema))


@settings(max_examples=600, deadline=None)
@given(schemas)
def test_never_valid_where_the_metaschema_refuses(schema: Any) -> None:
    if _plainly_valid(schema):
        assert _valid(schema), schema


@pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")
def test_the_generated_schemas_reach_both_answers() -> None:
    seen = {_plainly_valid(schemas.example()) for _ in range(300)}
    assert seen == {True, False}


def test_it_takes_most_bundled_tool_schemas_and_they_are_valid() -> None:
    tools = [t for s in load_scenarios(None) for t in s.tools]
    params = [t.parameters for t in tools]
    plain = [p for p in params if _plainly_valid(p)]
    assert len(plain) >= 0.8 * len(params)
    assert all(_valid(p) for p in plain)


def test_a_refused_schema_still_gets_the_metaschemas_message() -> None:
    assert schema_problem({"type": "float"}) == (
        "not valid JSON Schema at type: 'float' is not valid under any of the given schemas"
    )
