"""Judging one argument value against an :class:`~toolbench.scenarios.model.ArgMatcher`.

Values are compared as JSON values, because that is what a model emits:

* ``exact``: deep JSON equality. Numbers compare by value (``1 == 1.0``) but a boolean is
  never a number (``True != 1``); with ``ignore_case`` strings compare case-folded, at any
  depth.
* ``any_of``: any listed value matches exactly. ``""`` among the values means the argument
  may be left out (the BFCL convention), like ``optional: true``.
* ``regex``: the value is a string and the whole of it matches (``fullmatch``), within
  a time bound (:mod:`toolbench.timedregex`): a check that runs out of time fails with
  ``args.regex_timeout``.
* ``type``: the JSON type of the value. ``integer`` excludes booleans and accepts an
  integral float such as ``3.0`` (as JSON Schema does); ``number`` accepts both.
* ``approx``: a number (not a boolean) within ``tol`` of the target (``abs(v - x) <= tol``).
* ``absent``: the argument must be left out.
* ``fields``: an object whose every key is named and matches; a named key it lacks must
  be one that may be missing. ``items``: a list of exactly these items, in order.
  ``alternatives``: any one of the listed matchers.
* ``type`` beside another check is a guard checked first (``{any_of: [...], type:
  integer}``); ``strict_type`` makes it Python's check as BFCL runs it: ``integer`` refuses
  ``3.0``, ``boolean`` is never a number.
* ``py_type``: a guard on the exact Python type (``float`` refuses ``12``, ``int`` refuses
  ``True``), as BFCL checks the items of a list argument; ``python_equal``: compare with
  Python's ``==`` (``True == 1``), as BFCL's dict checker compares a dict's values.
* ``normalize``: strings compare as BFCL's ``standardize_string`` leaves them (lowercase;
  spaces and ``,./-_*^`` removed; ``'`` read as ``"``), for the value itself and the
  top-level items of a list value, as BFCL's string and list checkers do.

A missing argument is fine when the matcher is ``optional``, ``absent``, or ``any_of``
contains ``""`` (unless ``required``); otherwise it is ``args.missing_required``.
"""

from __future__ import annotations

import math
import re
from typing import Any

from toolbench import codes
from toolbench.scenarios.model import ArgMatcher
from toolbench.timedregex import RegexTimeout, matches

Problem = tuple[str, str]
"""An error code and its human-readable reason."""


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_type(value: Any) -> str:
    """The JSON type name of a decoded JSON value (``integer`` for integral ints)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def json_equal(a: Any, b: Any, ignore_case: bool = False) -> bool:
    """Deep JSON equality: ``1 == 1.0`` but ``True != 1``; strings optionally case-folded."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if is_number(a) or is_number(b):
        return is_number(a) and is_number(b) and a == b
    if isinstance(a, str) or isinstance(b, str):
        if not (isinstance(a, str) and isinstance(b, str)):
            return False
        return a.casefold() == b.casefold() if ignore_case else a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(
            json_equal(x, y, ignore_case) for x, y in zip(a, b, strict=True)
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k], ignore_case) for k in a)
    return False


def type_matches(value: Any, want: str) -> bool:
    if want == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and math.isfinite(value) and value.is_integer()
        )
    if want == "number":
        return is_number(value)
    return json_type(value) == want


_BFCL_PUNCT = re.compile(r"[ ,./\-_*^]")


def normalize_string(text: str) -> str:
    """BFCL's ``standardize_string``: ``"April 1, 2024"`` and ``"april 1 2024"`` agree."""
    return _BFCL_PUNCT.sub("", text).lower().replace("'", '"')


def _norm(value: Any) -> Any:
    """Normalise a string, or the string items of a list (one level, as BFCL does)."""
    if isinstance(value, str):
        return normalize_string(value)
    if isinstance(value, list | tuple):
        return [normalize_string(v) if isinstance(v, str) else v for v in value]
    return value


def _equal(m: ArgMatcher, value: Any, want: Any) -> bool:
    if m.python_equal:
        return bool(_norm(value) == _norm(want)) if m.normalize else bool(value == want)
    if m.normalize:
        return json_equal(_norm(value), _norm(want), m.ignore_case)
    return json_equal(value, want, m.ignore_case)


def strict_type_matches(value: Any, want: str) -> bool:
    """Python's type check as BFCL runs it (an int passes as a number, 3.0 is no integer)."""
    if want == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return type_matches(value, want)


def may_be_missing(m: ArgMatcher) -> bool:
    if m.required:
        return False
    return m.absent or m.optional or (m.any_of is not None and "" in m.any_of)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def value_matches(m: ArgMatcher, value: Any) -> bool:
    """Whether a present value satisfies the matcher's value check.

    Raises :class:`~toolbench.timedregex.RegexTimeout` when a regex check runs out of time.
    """
    if m.absent:
        return False
    if m.type is not None:
        ok = strict_type_matches(value, m.type) if m.strict_type else type_matches(value, m.type)
        if not ok:
            return False
    if m.py_type is not None and type(value).__name__ != m.py_type:
        return False
    if m.has_exact:
        return _equal(m, value, m.exact)
    if m.any_of is not None:
        return any(_equal(m, value, v) for v in m.any_of)
    if m.fields is not None:
        if not isinstance(value, dict) or any(k not in m.fields for k in value):
            return False
        return all(
            value_matches(f, value[k]) if k in value else may_be_missing(f)
            for k, f in m.fields.items()
        )
    if m.items is not None:
        return (
            isinstance(value, list)
            and len(value) == len(m.items)
            and all(value_matches(f, v) for f, v in zip(m.items, value, strict=True))
        )
    if m.alternatives is not None:
        return any(value_matches(a, value) for a in m.alternatives)
    if m.regex is not None:
        if not isinstance(value, str):
            return False
        return matches(m.regex, value, ignore_case=m.ignore_case)
    if m.approx is not None:
        return is_number(value) and math.isfinite(value) and abs(value - m.approx) <= m.tol
    return m.type is not None  # the type guard above was the whole check


def describe(m: ArgMatcher) -> str:
    """The matcher as a short phrase for reasons (``'Paris'``, ``one of [...]``...)."""
    if m.absent:
        return "absent"
    if m.has_exact:
        return _show(m.exact)
    if m.any_of is not None:
        return "one of " + _show(m.any_of)
    if m.fields is not None:
        return "an object with keys " + _show(sorted(m.fields))
    if m.items is not None:
        return f"a list of {len(m.items)} matching items"
    if m.alternatives is not None:
        return "one of " + " | ".join(describe(a) for a in m.alternatives)
    if m.regex is not None:
        return f"matching /{m.regex}/"
    if m.type is not None:
        return f"of type {m.type}"
    return f"{m.approx} ± {m.tol}"


def check_arg(name: str, m: ArgMatcher, args: dict[str, Any]) -> Problem | None:
    """Judge argument ``name`` of a call's ``args``; ``None`` when it is acceptable."""
    if name not in args:
        if may_be_missing(m):
            return None
        return codes.ARGS_MISSING_REQUIRED, f"argument '{name}' is missing"
    value = args[name]
    if m.absent:
        return codes.ARGS_UNEXPECTED, f"argument '{name}' must be left out, got {_show(value)}"
    try:
        if value_matches(m, value):
            return None
    except RegexTimeout as exc:
        return codes.ARGS_REGEX_TIMEOUT, f"argument '{name}': {exc}"
    return codes.ARGS_MISMATCH, f"argument '{name}': expected {describe(m)}, got {_show(value)}"
