"""A concrete call for every expected call of a scenario: the reply a perfect model gives.

The bundled suite is checked by instantiating each expectation (the first acceptable value
of every matcher, a string generated from each regex) and asking the real scorer and the
tool's JSON Schema whether that call is right. An expectation no call can satisfy (a
required parameter the matchers forget, an ``exact`` value outside the schema's ``enum``,
a regex the prompt's text cannot meet) is a contradiction the suite must not ship.
"""

from __future__ import annotations

from re import _parser as sre  # the stdlib's own regex parser: a sample string per pattern
from typing import Any

from toolbench.formats.base import ToolCall
from toolbench.scenarios.model import ArgMatcher, ExpectedCall, Round, Scenario

MISSING: Any = object()
"""The argument is left out of the sample call."""

_CATEGORY = {"CATEGORY_DIGIT": "0", "CATEGORY_SPACE": " ", "CATEGORY_WORD": "a"}
_TYPED: dict[str, Any] = {
    "string": "x", "integer": 1, "number": 1.5, "boolean": True, "array": [], "object": {},
    "null": None,
}  # fmt: skip


def _in_sample(items: list[tuple[Any, Any]]) -> str:
    for op, av in items:
        if str(op) == "LITERAL":
            return chr(av)
        if str(op) == "RANGE":
            return chr(av[0])
        if str(op) == "CATEGORY" and str(av) in _CATEGORY:
            return _CATEGORY[str(av)]
    raise ValueError(f"no sample for the character set {items!r}")


def _gen(tokens: Any) -> str:
    out: list[str] = []
    for op, av in tokens:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(av))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            out.append(_gen(av[2]) * av[0])
        elif name in ("SUBPATTERN", "ATOMIC_GROUP"):
            out.append(_gen(av[-1]))
        elif name == "BRANCH":
            out.append(_gen(av[1][0]))
        elif name == "IN":
            out.append(_in_sample(av))
        elif name in ("ANY", "NOT_LITERAL"):
            out.append("a" if av != ord("a") else "b")
        elif name != "AT":
            raise ValueError(f"no sample for the regex element {name}")
    return "".join(out)


def regex_sample(pattern: str) -> str:
    """The shortest string the pattern's first alternatives spell (checked by the caller)."""
    return _gen(sre.parse(pattern))


def sample_value(m: ArgMatcher, schema: dict[str, Any]) -> Any:
    """A value the matcher accepts, or :data:`MISSING` when leaving it out is right."""
    if m.absent:
        return MISSING
    if m.has_exact:
        return m.exact
    if m.any_of is not None:
        given = [v for v in m.any_of if v != ""]
        return given[0] if given else MISSING
    if m.approx is not None:
        whole = schema.get("type") == "integer" and float(m.approx).is_integer()
        return int(m.approx) if whole else m.approx
    if m.fields is not None:
        props = schema.get("properties", {})
        out = {k: sample_value(f, props.get(k, {})) for k, f in m.fields.items()}
        return {k: v for k, v in out.items() if v is not MISSING}
    if m.items is not None:
        item_schema = schema.get("items", {})
        return [sample_value(f, item_schema) for f in m.items]
    if m.alternatives is not None:
        return sample_value(m.alternatives[0], schema)
    if m.regex is not None:
        return regex_sample(m.regex)
    if m.optional:
        return MISSING
    if "enum" in schema:
        return schema["enum"][0]
    assert m.type is not None
    return _TYPED[m.type]


def sample_call(sc: Scenario, expected: ExpectedCall) -> ToolCall:
    tool = sc.tool(expected.name)
    assert tool is not None, f"{sc.id}: {expected.name} is not offered"
    props = tool.parameters.get("properties", {})
    args = {name: sample_value(m, props.get(name, {})) for name, m in expected.arguments.items()}
    return ToolCall(
        name=expected.name, arguments={k: v for k, v in args.items() if v is not MISSING}
    )


def sample_round(sc: Scenario, rnd: Round) -> list[ToolCall]:
    return [sample_call(sc, c) for c in rnd.calls]
