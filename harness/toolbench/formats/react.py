"""``react``: Thought / Action / Action Input / Observation / Final Answer.

The classic ReAct text protocol. One Action per turn: the model should stop before
``Observation:`` (the stop sequence ``\\nObservation:`` enforces it where the provider
honours stop sequences). The round trip keeps the assistant's raw reply as an assistant
message and feeds each result back as a *user* message ``Observation: <result>``: the
observation is not the model's own words, and a user turn keeps chat templates that
require alternating roles happy.

Labels are recognised at the start of a line (leading spaces allowed); ``Final Answer:``
also in mid-line (``... so the Final Answer: 42``), since models run it on after a
thought. ``Thought`` text stays in the content (labels removed); ``Final Answer`` text
is the final answer, and the content.

**The final answer** follows the last ``Final Answer:`` label outside the Action, as
LangChain's ReAct output parser reads it, and runs to the end of the reply or to a later
``Action:``/``Action Input:``/``Observation:`` label (a new step). A later ``Thought:``
does not end it: the Final Answer is the protocol's last step, so whatever the model
writes after it is what a user of this format is shown; its text stays in the answer
with the label removed. For stop compliance a later ``Thought:`` is no violation: this
format's stop rules are about what follows an Action (a second Action, an invented
Observation, text after the call), and its stop sequence is ``\nObservation:``; a turn
that answers has no call to stop after. A later Action or Observation is judged as such.

**Visible markup.** ``Thought:`` and ``Final Answer:`` labels belong in this format's
visible text (:attr:`React.visible_markup`): they are no raw leak. ``Action:``,
``Action Input:`` and ``Observation:`` left outside the call are.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolbench import codes
from toolbench.formats.base import ParseResult
from toolbench.formats.call_objects import CallCollector
from toolbench.formats.jsonscan import Decoded, decode, scan_objects
from toolbench.formats.prompt_axes import PromptParts, StyleOptions
from toolbench.formats.prompted import PromptedFormat
from toolbench.formats.pycalls import NAME, Refused, read_list
from toolbench.formats.stream_syntax import Region, StreamSyntax
from toolbench.formats.text import MARKER_ROUNDS, split_think, tidy
from toolbench.tools import ToolDef

_LABEL = re.compile(r"^[ \t]*+(Thought|Action Input|Action|Observation|Final Answer)[ \t]*+:", re.M)
STOP = "\nObservation:"


_NAMES = "Thought|Action Input|Action|Observation|Final Answer"
_LABEL_RUN = re.compile(rf"^[ \t]*+(?:(?:{_NAMES})[ \t]*+:[ \t]*+)++", re.M)


def _label(name: str) -> re.Pattern[str]:
    return re.compile(rf"^[ \t]*+{name}[ \t]*+:", re.M)


_ACTION = _label("Action")
_OBSERVATION = _label("Observation")
_THOUGHT = _label("Thought")
_FINAL_ANY = re.compile(r"^[ \t]*+Final Answer[ \t]*+:|Final Answer[ \t]*+:", re.M)
_FINAL_WORD = re.compile(r"Final Answer[ \t]*+:")
_FINAL_LABEL = re.compile(r"Final Answer[ \t]*+:[ \t]*+")
_STEP = re.compile(r"^[ \t]*+(?:Action Input|Action|Observation)[ \t]*+:", re.M)


@dataclass(frozen=True, slots=True)
class Section:
    """One labelled part of a reply."""

    label: str
    start: int  # where the label begins
    body: int  # where its text begins
    end: int  # where the next label begins (or the text ends)


def section_at(text: str, m: re.Match[str] | None) -> Section | None:
    """The section a label match opens: up to the next line-start label."""
    if m is None:
        return None
    nxt = _LABEL.search(text, m.end())
    label = m.group(1) if m.re is _LABEL else m.group(0).strip().rstrip(":").strip()
    return Section(label, m.start(), m.end(), nxt.start() if nxt else len(text))


def call_text(name: str, arguments: dict[str, Any]) -> str:
    args = json.dumps(arguments, ensure_ascii=False)
    return f"Thought: I should use {name}.\nAction: {name}\nAction Input: {args}"


def result_text(name: str, result: str) -> str:
    del name
    return f"Observation: {result}"


def answer_text(answer: str) -> str:
    return f"Thought: I now know the final answer.\nFinal Answer: {answer}"


_CALL_IN_ACTION = re.compile(NAME + r"[ \t]*+\(.*\)", re.S)
"""An Action line written as a Python call (``Action: get_weather(city="Paris")``)."""
_EMPTY_CALL = re.compile(NAME + r"[ \t]*+\([ \t]*+\)")


def _action_name(name: str, *, with_input: bool) -> tuple[str, list[str]]:
    """The tool name of an Action line, and why reading it was lenient.

    A Markdown-escaped underscore (``get\\_weather``) is read as ``_``: a tool name never
    holds a backslash. An empty call (``get_weather()``) above an Action Input is the
    name; with no Action Input, a call with arguments is read as one (see
    :func:`_add_python_call`)."""
    why: list[str] = []
    if "\\_" in name:
        name = name.replace("\\_", "_")
        why.append("Action: Markdown-escaped underscores read as _")
    if with_input and _EMPTY_CALL.fullmatch(name):
        name = name[: name.index("(")].rstrip()
        why.append("Action: the tool name written with '()'")
    elif not with_input and _CALL_IN_ACTION.fullmatch(name):
        why.append("Action: written as a Python call, its arguments read as literals")
    return name, why


def _add_python_call(col: CallCollector, text: str) -> None:
    """Add the call of an Action written as a Python call, read by the pythonic reader
    (never evaluated): a model that writes ``Action: f(a=1)`` called ``f``."""
    try:
        reading = read_list(f"[{text}]")
    except Refused as exc:
        col.issue(exc.code, f"Action: {exc}")
        return
    except Exception as exc:  # SyntaxError, RecursionError...: never raise
        col.issue(codes.CALL_BAD_SHAPE, f"Action: not a Python call ({type(exc).__name__})")
        return
    for name, args in reading.calls:
        col.add_object({"name": name, "arguments": args}, name_keys=("name",), where="Action")
    for why in reading.lenient:
        col.issue(codes.CALL_LENIENT, f"Action: {why}")


class React(PromptedFormat):
    name = "react"
    test_cases = "test_react"
    stream = StreamSyntax(
        (
            Region(
                open=r"^[ \t]{0,16}Action(?: Input)?[ \t]{0,16}:",
                close_pattern=r"(?=^[ \t]{0,16}(?:Thought|Final Answer)[ \t]{0,16}:)",
            ),
        )
    )
    description = "ReAct text: Thought / Action / Action Input / Observation / Final Answer."
    markers = (_LABEL,)
    visible_markup = (_THOUGHT, _FINAL_ANY)
    stop_sequences = (STOP,)
    call_text = staticmethod(call_text)
    result_text = staticmethod(result_text)
    answer_text = staticmethod(answer_text)

    Options = StyleOptions
    options: StyleOptions
    call_shape = (
        "Thought: <your reasoning>\nAction: <tool name>\n"
        "Action Input: <the tool's arguments as one JSON object>"
    )
    results_note = (
        "Write at most one Action per reply, then stop and wait for the Observation. "
        "If no tool is needed, reply with a Thought and a Final Answer."
    )

    def own_parts(self, tools: Sequence[ToolDef]) -> PromptParts:
        names = ", ".join(t.name for t in tools) or "(none)"
        return PromptParts(
            persona="",
            task="You have access to the following tools:",
            call_format="Use exactly this format:\n\n"
            "Thought: think about what to do next\n"
            f"Action: the tool to use, exactly one of [{names}]\n"
            "Action Input: the tool's arguments as one JSON object\n"
            "Observation: the tool's result (given to you; never write it yourself)\n"
            "... (Thought / Action / Action Input / Observation can repeat)\n"
            "Thought: I now know the final answer\n"
            "Final Answer: the answer for the user",
            behaviour=self.results_note,
            tools=self.listing(tools),
        )

    def instructions(self, tools: Sequence[ToolDef]) -> str:
        p = self.own_parts(tools)
        return f"{p.task}\n\n{p.tools}\n\n{p.call_format}\n\n{p.behaviour}"

    def _parse(self, text: str, tools: Sequence[ToolDef] | None) -> ParseResult:
        split = split_think(text)
        body = split.text
        col = CallCollector()
        cut: tuple[int, int] | None = None  # the first Action(+Input) region
        act = section_at(body, _ACTION.search(body))
        if act is not None:
            nxt = section_at(body, _LABEL.search(body, act.body))
            inp = nxt if nxt is not None and nxt.label == "Action Input" else None
            call_end = self._read_action(body, act, inp, col)
            cut = (act.start, (inp or act).end)
            if _ACTION.search(body, cut[1]):
                col.signal(codes.STOP_MULTIPLE_ACTIONS)
            if _OBSERVATION.search(body, act.start):
                col.signal(codes.STOP_HALLUCINATED_RESULT)
            col.check_text_after(body[call_end:])
        final_answer = self._final_answer(body, cut)
        raw = body if cut is None else body[: cut[0]] + body[cut[1] :]
        raw = tidy(raw)
        content = final_answer if final_answer is not None else self._clean(raw)
        col.check_tools(tools)
        return col.result(
            content=content,
            raw_content=raw,
            reasoning=split.reasoning,
            final_answer=final_answer,
            final_from_content=False,
        )

    def _read_action(self, body: str, act: Section, inp: Section | None, col: CallCollector) -> int:
        """Add the call of one Action; return where the call's text ends."""
        col.attempted = True
        line_end = body.find("\n", act.body, act.end)
        name_end = act.end if line_end < 0 else line_end
        name = body[act.body : name_end].strip().strip("`*'\"").strip()
        leftover = body[name_end : act.end] if inp is None else ""
        end = name_end if inp is None else inp.end
        if not name:
            col.issue(codes.CALL_MISSING_NAME, "Action has no tool name")
            return end
        name, lenient = _action_name(name, with_input=inp is not None)
        since = len(col.calls)
        end = self._read_call(body, name, name_end, leftover, end, inp, col)
        if lenient and len(col.calls) > since:
            for call in col.calls[since:]:
                call.repaired = True
            for why in lenient:
                col.issue(codes.CALL_LENIENT, why)
        return end

    def _read_call(
        self,
        body: str,
        name: str,
        name_end: int,
        leftover: str,
        end: int,
        inp: Section | None,
        col: CallCollector,
    ) -> int:
        """Add the call an Action names, with its input; return where its text ends."""
        if inp is None and _CALL_IN_ACTION.fullmatch(name):
            _add_python_call(col, name)
            return end if leftover.strip() else name_end
        if inp is None:
            col.add_object({"name": name, "arguments": {}}, name_keys=("name",), where="Action")
            return end if leftover.strip() else name_end
        scan = scan_objects(body, inp.body, inp.end)
        raw_input = body[inp.body : inp.end].strip()
        broken = scan.unclosed is not None and (
            not scan.spans or scan.unclosed < scan.spans[0].start
        )
        if scan.spans and not broken:
            span = scan.spans[0]
            self._add_args(col, name, decode(body[span.start : span.end]))
            return span.end
        if broken and inp.end == len(body):
            col.issue(codes.CALL_TRUNCATED, "the reply ended inside Action Input")
        elif not raw_input:
            col.add_object({"name": name, "arguments": {}}, name_keys=("name",), where="Action")
        elif raw_input.lower() in ("none", "null", '"null"'):  # {} and noted: args.null
            col.add_object({"name": name, "arguments": None}, name_keys=("name",), where="Action")
        elif broken or raw_input.startswith(("{", "```")):
            self._add_args(col, name, decode(raw_input.strip("`").removeprefix("json")))
        else:
            col.issue(codes.ARGS_NOT_OBJECT, "Action Input is not a JSON object")
        return inp.end

    def _final_answer(self, body: str, cut: tuple[int, int] | None) -> str | None:
        """The text after the last ``Final Answer:`` outside the Action (module docstring)."""
        last: re.Match[str] | None = None
        for m in _FINAL_WORD.finditer(body):  # a literal prefix: a fast search
            if cut is None or not cut[0] <= m.start() < cut[1]:
                last = m
        if last is None:
            return None
        step = _STEP.search(body, last.end())
        return self._clean(body[last.end() : step.start() if step else len(body)])

    @staticmethod
    def _add_args(col: CallCollector, name: str, got: Decoded) -> None:
        if not got.ok:
            col.issue(codes.JSON_DECODE_FAILED, "Action Input: invalid JSON")
            return
        if got.repaired:
            col.issue(codes.JSON_REPAIRED, "Action Input: invalid JSON, decoded after repair")
        col.add_object(
            {"name": name, "arguments": got.value},
            name_keys=("name",),
            where="Action Input",
            repaired=got.repaired,
        )

    def _clean(self, text: str) -> str:
        """Remove line-start labels (every consecutive one, so none can survive) and
        mid-line ``Final Answer:`` labels (repeated: removing one could splice another).

        Tidying comes first: removing an emptied fence afterwards could splice a label.
        """
        text = _LABEL_RUN.sub("", tidy(text))
        for _ in range(MARKER_ROUNDS):  # a mid-line Final Answer label is not left visible
            if not _FINAL_LABEL.search(text):
                break
            text = _LABEL_RUN.sub("", _FINAL_LABEL.sub("", text))
        return text.strip()
