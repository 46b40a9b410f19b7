"""Validating call arguments against the tool's own JSON Schema.

This is independent of the scenario's matchers: a call can match the expected values yet
break the declared schema (a string where an integer is declared), or the reverse. It uses
the Draft 2020-12 validator, built once per distinct schema. A tool whose schema is itself
invalid does not crash scoring: its calls count as invalid with ``args.schema_invalid``
and a reason naming the schema problem (one whose local ``$ref``s fan out past
:data:`~toolbench.scenarios.toolschema.MAX_SCHEMA_WORK` subschemas is such a problem:
validating against it would not end). The ``schema`` scorer gives a trial
``args_schema_valid``: every call of its effective turns validates (None: no call).

The keywords that run a schema's regexes against model-written strings (``pattern``,
``patternProperties`` and the ``additionalProperties`` check that consults it) are
replaced with time-bounded versions (:mod:`toolbench.timedregex`): jsonschema's own use
``re.search``, and ``(a|a)+$`` against a 31-character argument ran for a minute. A
pattern that runs out of time is reported as ``args.regex_timeout``. (``unevaluated
Properties`` with ``patternProperties`` still uses jsonschema's ``re``.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError, ValidationError
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource, Unresolvable

from toolbench import codes
from toolbench.formats.base import ToolCall
from toolbench.scenarios.toolschema import MAX_SCHEMA_WORK, schema_work
from toolbench.scoring.core import label
from toolbench.scoring.matchers import Problem
from toolbench.scoring.scorer import Scored, Scorer, TrialInput, named
from toolbench.timedregex import RegexTimeout, matches
from toolbench.tools import ToolDef


def _search(pattern: str, text: str) -> bool:
    return matches(pattern, text, how="search")


def _pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "string"):
        return
    try:
        found = _search(patrn, instance)
    except RegexTimeout as exc:
        yield ValidationError(str(exc), cause=exc)
        return
    if not found:
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            try:
                found = _search(pattern, key)
            except RegexTimeout as exc:
                yield ValidationError(f"property {key!r}: {exc}", cause=exc)
                continue
            if found:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, aP: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = "|".join(schema.get("patternProperties", {}))
    extras: list[str] = []
    for key in instance:
        if key in properties:
            continue
        if patterns:
            try:
                if _search(patterns, key):
                    continue
            except RegexTimeout as exc:
                yield ValidationError(f"property {key!r}: {exc}", cause=exc)
                continue
        extras.append(key)
    if validator.is_type(aP, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], aP, path=extra)
    elif not aP and extras:
        # The same texts as jsonschema's own keyword: replayed results stay identical.
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            listed = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {listed}")
        else:
            ordered = sorted(extras, key=str)
            verb = "was" if len(ordered) == 1 else "were"
            names = ", ".join(repr(extra) for extra in ordered)
            yield ValidationError(
                f"Additional properties are not allowed ({names} {verb} unexpected)"
            )


TimedValidator: Any = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    },
)
"""Draft 2020-12 with every model-facing regex keyword time-bounded."""


def _refuse_retrieval(uri: str) -> Resource[Any]:
    """Never fetch a ``$ref`` (jsonschema would open remote and ``file:`` URLs itself)."""
    raise NoSuchResource(uri)


_LOCAL_ONLY: Registry[Any] = Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]
"""Scoring resolves references inside the tool's schema only; validate refuses others."""


@lru_cache(maxsize=512)
def _validator(schema_json: str) -> Any:
    """A validator for the schema, or the reason (a ``str``) the schema itself is invalid."""
    schema: Any = json.loads(schema_json)
    if schema_work(schema) > MAX_SCHEMA_WORK:
        # A scenario built in code (or an older file) skipped validate: references that
        # fan out would make every call's validation endless; the tool's fault, typed.
        return f"its $refs expand to more than {MAX_SCHEMA_WORK} subschemas"
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return exc.message
    return TimedValidator(schema, registry=_LOCAL_ONLY)


def validator_for(tool: ToolDef) -> Any:
    return _validator(json.dumps(tool.parameters, sort_keys=True, default=str))


def _timed_out(err: ValidationError) -> bool:
    if isinstance(err.cause, RegexTimeout):
        return True
    return any(_timed_out(sub) for sub in err.context)


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
    try:
        for err in validator.iter_errors(call.arguments):
            where = "/".join(str(p) for p in err.absolute_path) or "arguments"
            message = err.message if len(err.message) <= 160 else err.message[:157] + "..."
            code = codes.ARGS_REGEX_TIMEOUT if _timed_out(err) else codes.ARGS_SCHEMA_INVALID
            out.append((code, f"{call.name}: {where}: {message}"))
            if len(out) >= 3:
                break
    except Unresolvable as exc:
        # A scenario that skipped validate (built in code, or an older file) can still
        # name a remote or dangling $ref: a schema fault of that tool, never a crash.
        why = f"{call.name}: arguments: the schema's $ref does not resolve: {exc}"
        out.append((codes.ARGS_SCHEMA_INVALID, why))
    except RecursionError:
        # A recursive schema (``$ref: "#"``) descends as deep as the model's arguments go.
        why = f"{call.name}: arguments: nested too deeply to validate"
        out.append((codes.ARGS_SCHEMA_INVALID, why))
    return out


def _score(inp: TrialInput) -> Scored:
    """``args_schema_valid``: every call the effective turns made validates against its
    tool's schema (None when no call was made)."""
    eff = inp.effective
    made = [(n, c) for n, t in enumerate(eff, 1) for c in t.parsed.calls]
    if not made:
        return Scored(named(args_schema_valid=None))
    problems = [
        (code, label(n, len(eff)) + why)
        for n, call in made
        for code, why in schema_problems(call, inp.scenario.all_tools())
    ]
    return Scored(named(args_schema_valid=not problems), problems)


SCORER = Scorer(
    "schema",
    {"args_schema_valid": "boolean"},
    _score,
    "whether every call's arguments validate against its tool's JSON Schema",
)
