"""The scenario file schema (pydantic, unknown keys rejected).

A scenario is a task: tools offered, a conversation so far, and what the model should do.
``expect`` takes exactly one of four shapes:

* ``calls`` (+ ``order``): one reply should make these calls;
* ``no_call: true``: the model should answer in text and call nothing;
* ``rounds`` (+ ``max_turns``, ``final_answer``): multi-turn, each round's calls get
  scripted results fed back, then a final answer is checked;
* ``turns`` (a loop): one entry per user turn (the scenario's ``messages`` are the
  first, its ``turns`` the later ones), each with the ground-truth calls that turn needs;
  the calls run against the scenario's ``environment`` and are judged by the state they
  leave (:mod:`toolbench.scoring.loop`). ``max_turns`` is the steps that call one user
  turn may take (one more that still calls ends it at the limit, as in BFCL).

``environment`` names a registered environment (or several) and gives its initial
state as data: with it, a call's result comes from running the call; without it, from
the script. Nothing in a scenario file is imported or executed.
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


class ChatMessage(BaseModel):
    """A message of the scenario's conversation so far."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "user", "assistant"]
    content: str


class GroundCall(BaseModel):
    """One call of a loop scenario's ground truth: concrete arguments, run as given."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)


class TurnExpect(BaseModel):
    """What one user turn of a loop needs: the ground-truth calls, in order (none: the
    model should not act, e.g. ask for what is missing)."""

    model_config = ConfigDict(extra="forbid")

    calls: list[GroundCall] = Field(default_factory=list)
    ask: bool = False
    """The turn lacks a parameter or a function: the model should ask (or say it cannot)
    rather than call (BFCL's ``miss_param`` and ``miss_func``)."""


class UserTurn(BaseModel):
    """A later user turn of a loop scenario: its messages, and functions held out until it."""

    model_config = ConfigDict(extra="forbid")

    messages: list[ChatMessage] = Field(default_factory=list)
    tools: list[ToolDef] = Field(default_factory=list)
    """Functions offered from this turn on (held out before it)."""

    @model_validator(mode="after")
    def _something(self) -> UserTurn:
        if not self.messages:
            raise ValueError("a user turn needs at least one message")
        if any(m.role != "user" for m in self.messages):
            raise ValueError("a later turn's messages are the user's")
        return self


class EnvironmentUse(BaseModel):
    """A registered environment a scenario runs its calls against, and its initial state."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    state: dict[str, Any] = Field(default_factory=dict)


class Expect(BaseModel):
    """What the model should do; exactly one of ``calls``, ``no_call``, ``rounds``,
    ``turns``."""

    model_config = ConfigDict(extra="forbid")

    calls: list[ExpectedCall] | None = None
    order: Literal["sequence", "any"] = "sequence"
    no_call: bool = False
    rounds: Annotated[list[Round], Field(min_length=1)] | None = None
    """At least one: ``rounds: []`` ran and passed every trial, testing nothing."""
    turns: Annotated[list[TurnExpect], Field(min_length=1)] | None = None
    """A loop: per user turn, the ground truth (needs an ``environment``)."""
    max_turns: int = Field(default=4, ge=1, le=20)
    final_answer: AnswerCheck | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Expect:
        kinds = [self.calls is not None, self.no_call, self.rounds is not None,
                 self.turns is not None]  # fmt: skip
        if sum(kinds) != 1:
            raise ValueError("give exactly one of 'calls', 'no_call: true', 'rounds' or 'turns'")
        if self.calls is not None and not self.calls:
            raise ValueError("'calls' must list at least one call (use 'no_call: true')")
        if self.rounds is not None and self.max_turns < len(self.rounds) + 1:
            raise ValueError("'max_turns' must leave a turn for the final answer")
        return self

    @property
    def kind(self) -> Literal["calls", "no_call", "multi_turn", "loop"]:
        if self.no_call:
            return "no_call"
        if self.turns is not None:
            return "loop"
        return "multi_turn" if self.rounds is not None else "calls"

    def expected_rounds(self) -> list[Round]:
        """Every kind as a list of rounds (``calls`` is one round, ``no_call`` and a loop
        none: a loop's ground truth is :attr:`turns`)."""
        if self.rounds is not None:
            return self.rounds
        if self.calls is not None:
            return [Round(calls=self.calls, order=self.order)]
        return []


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
    environment: list[EnvironmentUse] = Field(default_factory=list)
    """The environments calls run against (a mapping is one); empty: scripted results."""
    turns: list[UserTurn] = Field(default_factory=list)
    """A loop's later user turns (``messages`` is the first)."""
    source: str | None = Field(default=None, exclude=True)
    """The file this scenario came from (not part of the schema)."""

    @field_validator("environment", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, dict) else v

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        if self.messages[-1].role != "user":
            raise ValueError("messages must end with a user message")
        if any(m.role == "system" for m in self.messages[1:]):
            raise ValueError("only the first message may be a system message")
        names = [t.name for t in self.all_tools()]
        if len(names) != len(set(names)):
            raise ValueError("tool names must be unique")
        known = set(names)
        if not self.tools and self.environment:  # an MCP server's tools/list (mcp_tools)
            known |= {c.name for r in self.expect.expected_rounds() for c in r.calls}
            known |= {c.name for t in self.expect.turns or [] for c in t.calls}
        for rnd in self.expect.expected_rounds():
            for call in rnd.calls:
                if call.name not in known:
                    raise ValueError(f"expected call '{call.name}' is not among the tools")
        self._loop_consistent(known)
        return self

    def _loop_consistent(self, known: set[str]) -> None:
        turns = self.expect.turns
        if turns is None:
            if self.turns:
                raise ValueError("'turns' (later user turns) needs 'expect.turns'")
            return
        if not self.environment:
            raise ValueError("'expect.turns' needs an 'environment' to run the calls")
        if len(turns) != len(self.turns) + 1:
            raise ValueError(f"'expect.turns' needs {len(self.turns) + 1} entries, one a turn")
        unknown = [(n, c.name) for n, t in enumerate(turns) for c in t.calls if c.name not in known]
        if unknown:
            n, name = unknown[0]
            raise ValueError(f"expect.turns[{n}]: call '{name}' is not among the tools")

    def all_tools(self) -> list[ToolDef]:
        """Every tool the scenario ever offers: its own, then each later turn's."""
        return [*self.tools, *(t for turn in self.turns for t in turn.tools)]

    def tools_at(self, user_turn: int) -> list[ToolDef]:
        """The tools offered in user turn ``user_turn`` (0-based): held-out ones join at
        the turn that adds them."""
        return [*self.tools, *(t for turn in self.turns[:user_turn] for t in turn.tools)]

    def tool(self, name: str) -> ToolDef | None:
        return next((t for t in self.all_tools() if t.name == name), None)
