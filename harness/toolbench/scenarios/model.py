"""The scenario file schema (pydantic, unknown keys rejected).

A scenario is a task: tools offered, a conversation so far, and what the model should do.
``expect`` takes exactly one of three shapes:

* ``calls`` (+ ``order``): one reply should make these calls;
* ``no_call: true``: the model should answer in text and call nothing;
* ``rounds`` (+ ``max_turns``, ``final_answer``): multi-turn, each round's calls get
  scripted results fed back, then a final answer is checked.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    Strict,
    field_validator,
    model_serializer,
    model_validator,
)

from toolbench.timedregex import compile_problem
from toolbench.tools import ToolDef

SCHEMA_VERSION = 1

_UNSET: Any = object()

MAX_ID_LENGTH = 128
"""Longest scenario id: ids become cassette file names (255 bytes at most on most file
systems, with the sample suffix and ``.yaml`` still to come)."""

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
"""ASCII letters, digits, ``_``, ``.``, ``-``; starting with a letter or digit."""

REF_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$"
"""A tool-set name, optionally in sub-folders of ``tools/``: no ``..``, no absolute path."""

StrictNumber = Annotated[float, Strict()]
"""A number written as one: ``approx: "3.0"`` is refused, not coerced."""
JsonType = Literal["string", "integer", "number", "boolean", "array", "object", "null"]


class ArgMatcher(BaseModel):
    """How one argument is judged. Exactly one of the value checks, or ``absent``.

    In YAML a bare scalar (string, number, bool, null) is shorthand for ``{exact: value}``;
    lists and objects must be written as ``{exact: ...}`` or ``{any_of: [...]}`` so a list
    of acceptable values can never be confused with a list-valued argument.
    """

    model_config = ConfigDict(extra="forbid")

    exact: Any = None
    any_of: list[Any] | None = None
    regex: str | None = None
    type: JsonType | None = None
    approx: StrictNumber | None = None
    tol: StrictNumber = Field(default=1e-6, ge=0)
    optional: bool = False
    """The argument may be left out (BFCL's ``""`` among acceptable values)."""
    absent: bool = False
    """The argument must be left out."""
    required: bool = False
    """The argument must be given even when ``any_of`` holds ``""`` (BFCL checks the
    schema's required list before the answers)."""
    ignore_case: bool = False
    normalize: bool = False
    """Compare strings as BFCL does: lowercase, spaces and ``,./-_*^`` removed, ``'`` as
    ``"`` (for the value itself, the items of a list value, and dict values)."""
    strict_type: bool = False
    """With ``type``: ``integer`` refuses ``3.0`` and ``number`` accepts ints (BFCL's
    Python type check after its int-to-float conversion)."""
    py_type: Literal["str", "int", "float", "bool", "list", "dict"] | None = None
    """A guard beside another check: the value's exact Python type, with no int-to-float
    conversion and no bool as int (BFCL's type check of the items of a list argument:
    ``[12, 15]`` is not a list of floats)."""
    python_equal: bool = False
    """Compare with Python's ``==`` as BFCL's dict checker does (``True == 1``,
    ``1 == 1.0``) instead of JSON equality, after ``normalize``."""
    fields: dict[str, ArgMatcher] | None = None
    """The value is an object; each key it has is named here and matches, each named key
    it lacks may be missing (BFCL's nested dict answers)."""
    items: list[ArgMatcher] | None = None
    """The value is a list of exactly these items, each matched in order."""
    alternatives: list[ArgMatcher] | None = None
    """Any one of these matchers matches (BFCL's several dict or list-of-dict answers)."""

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if data is None or isinstance(data, str | int | float | bool):
            return {"exact": data, "_has_exact": True}
        if isinstance(data, dict) and "exact" in data:
            return {**data, "_has_exact": True}
        if isinstance(data, list):
            raise ValueError("a list must be written as {exact: [...]} or {any_of: [...]}")
        return data

    has_exact: bool = Field(default=False, alias="_has_exact", exclude=True)

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> Any:
        # Without this a dump holds ``exact: None`` for every matcher, which reads back
        # as an exact-null check: a dumped scenario would no longer validate.
        data = handler(self)
        if isinstance(data, dict) and not self.has_exact:
            data.pop("exact", None)
        return data

    @model_validator(mode="after")
    def _one_check(self) -> ArgMatcher:
        checks = [
            self.has_exact,
            self.any_of is not None,
            self.regex is not None,
            self.approx is not None,
            self.fields is not None,
            self.items is not None,
            self.alternatives is not None,
        ]
        n = sum(checks)
        if self.py_type is not None and n == 0:
            raise ValueError("'py_type' is a guard: give it beside a value check")
        if self.absent:
            if n or self.type is not None:
                raise ValueError("'absent' cannot be combined with a value check")
        elif n > 1 or (n == 0 and self.type is None):
            # ``type`` alone is a check; beside another one it is a guard checked first.
            raise ValueError(
                "give exactly one of exact, any_of, regex, approx, fields, items,"
                " alternatives (optionally with type), or type alone (or absent)"
            )
        if self.regex is not None:
            problem = compile_problem(self.regex)
            if problem is not None:
                raise ValueError(problem)
        return self


class ExpectedCall(BaseModel):
    """One call the model should make."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    arguments: dict[str, ArgMatcher] = Field(default_factory=dict)
    allow_extra_args: bool = False
    result: Any = None
    """Scripted tool result fed back in multi-turn scenarios (a string, or JSON-encoded)."""

    def result_text(self) -> str:
        import json

        if self.result is None:
            return "ok"
        # ensure_ascii=False: the model must see "Zürich", not "Z\\u00fcrich".
        return (
            self.result
            if isinstance(self.result, str)
            else json.dumps(self.result, ensure_ascii=False)
        )


class Round(BaseModel):
    """One tool round of a multi-turn scenario."""

    model_config = ConfigDict(extra="forbid")

    calls: list[ExpectedCall] = Field(min_length=1)
    order: Literal["sequence", "any"] = "sequence"


class AnswerCheck(BaseModel):
    """Checks on the final text answer."""

    model_config = ConfigDict(extra="forbid")

    contains: list[str] = Field(default_factory=list)
    regex: str | None = None
    ignore_case: bool = True

    @field_validator("regex")
    @classmethod
    def _compiles(cls, v: str | None) -> str | None:
        if v is not None:
            problem = compile_problem(v)
            if problem is not None:
                raise ValueError(problem)
        return v


class Expect(BaseModel):
    """What the model should do; exactly one of ``calls``, ``no_call``, ``rounds``."""

    model_config = ConfigDict(extra="forbid")

    calls: list[ExpectedCall] | None = None
    order: Literal["sequence", "any"] = "sequence"
    no_call: bool = False
    rounds: Annotated[list[Round], Field(min_length=1)] | None = None
    """At least one: ``rounds: []`` ran and passed every trial, testing nothing."""
    max_turns: int = Field(default=4, ge=1, le=20)
    final_answer: AnswerCheck | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Expect:
        kinds = [self.calls is not None, self.no_call, self.rounds is not None]
        if sum(kinds) != 1:
            raise ValueError("give exactly one of 'calls', 'no_call: true' or 'rounds'")
        if self.calls is not None and not self.calls:
            raise ValueError("'calls' must list at least one call (use 'no_call: true')")
        if self.rounds is not None and self.max_turns < len(self.rounds) + 1:
            raise ValueError("'max_turns' must leave a turn for the final answer")
        return self

    @property
    def kind(self) -> Literal["calls", "no_call", "multi_turn"]:
        if self.no_call:
            return "no_call"
        return "multi_turn" if self.rounds is not None else "calls"

    def expected_rounds(self) -> list[Round]:
        """Every kind as a list of rounds (``calls`` is one round, ``no_call`` none)."""
        if self.rounds is not None:
            return self.rounds
        if self.calls is not None:
            return [Round(calls=self.calls, order=self.order)]
        return []


class ChatMessage(BaseModel):
    """A message of the scenario's conversation so far."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "user", "assistant"]
    content: str


class ToolRef(BaseModel):
    """A reference to a shared tool set in ``scenarios/tools/<ref>.yaml``."""

    model_config = ConfigDict(extra="forbid")

    ref: str = Field(min_length=1, max_length=200)
    """A name relative to ``tools/`` without ``.yaml``; sub-folders allowed, ``..`` not."""
    only: list[str] | None = None

    @field_validator("ref")
    @classmethod
    def _inside_tools(cls, v: str) -> str:
        if not re.fullmatch(REF_PATTERN, v):
            raise ValueError(
                f"'{v}' must name a tool set inside tools/ (letters, digits, '_', '.', '-',"
                " and '/' between folder names; no '..', no absolute path)"
            )
        return v


class Scenario(BaseModel):
    """One task. ``tools`` here are already resolved (references expanded)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=ID_PATTERN, max_length=MAX_ID_LENGTH)
    """Safe as a file name on every platform: it names the scenario's cassette files."""
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    tools: list[ToolDef] = Field(default_factory=list)
    messages: list[ChatMessage] = Field(min_length=1)
    expect: Expect
    source: str | None = Field(default=None, exclude=True)
    """The file this scenario came from (not part of the schema)."""

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        if self.messages[-1].role != "user":
            raise ValueError("messages must end with a user message")
        if any(m.role == "system" for m in self.messages[1:]):
            raise ValueError("only the first message may be a system message")
        names = [t.name for t in self.tools]
        if len(names) != len(set(names)):
            raise ValueError("tool names must be unique")
        known = set(names)
        for rnd in self.expect.expected_rounds():
            for call in rnd.calls:
                if call.name not in known:
                    raise ValueError(f"expected call '{call.name}' is not among the tools")
        return self

    def tool(self, name: str) -> ToolDef | None:
        return next((t for t in self.tools if t.name == name), None)
