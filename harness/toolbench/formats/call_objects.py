"""Turning decoded JSON into :class:`ToolCall` objects and a :class:`ParseResult`.

Every format ends the same way: some candidate call objects, some issues, visible text.
:class:`CallCollector` keeps the strict/repaired/failed bookkeeping in one place so the
formats cannot drift apart on what counts as strict: a call read through repair or a
lenient reading is ``repaired``, and so is a reply in which another attempted call was
dropped (an issue whose code is in :data:`DROPPING`), since not all it tried decoded.

Arguments sent as JSON ``null`` or as the JSON string ``"null"`` (some providers send it
for tools without parameters) are both read as ``{}`` and noted on the call
(``ToolCall.notes``, code ``args.null``): a convention of the sender, not a model error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolbench import codes
from toolbench.formats.base import ParseIssue, ParseResult, ToolCall
from toolbench.formats.jsonscan import Decoded, decode
from toolbench.tools import ToolDef

ARG_KEYS = ("arguments", "parameters", "args")
_IDS = frozenset({"id", "type", "call_id", "tool_call_id", "index"})
"""Keys a call object may carry beside its name and arguments."""

DROPPING = frozenset(
    {
        codes.JSON_DECODE_FAILED,
        codes.CALL_TRUNCATED,
        codes.CALL_MISSING_NAME,
        codes.CALL_BAD_SHAPE,
        codes.ARGS_NOT_OBJECT,
        codes.CALL_IN_CONTENT,
        codes.CALL_STRAY_TAG,
        codes.ARGS_NOT_LITERAL,
        codes.CALL_TOO_DEEP,
    }
)
"""Issue codes that mean an attempted call yielded no call (a pythonic list refused for a
non-literal argument or its depth is one such call, beside another list of the reply)."""


@dataclass
class CallCollector:
    """Accumulates calls, issues and the "tried to call" flag while a reply is parsed."""

    calls: list[ToolCall] = field(default_factory=list)
    errors: list[ParseIssue] = field(default_factory=list)
    stop_signals: list[str] = field(default_factory=list)
    attempted: bool = False
    dropped: bool = False
    """An attempted call was dropped: the reply cannot be a strict parse."""
    flat: list[tuple[ToolCall, str]] = field(default_factory=list)
    """Calls whose arguments were written beside the name (``{"name": "f", "city": "x"}``),
    with where they were read: kept only if :meth:`check_tools` finds every key a
    parameter of that tool (see :meth:`add_object`)."""

    def issue(self, code: str, message: str) -> None:
        self.errors.append(ParseIssue(code=code, message=message))
        if code in DROPPING:
            self.dropped = True

    def signal(self, code: str) -> None:
        if code not in self.stop_signals:
            self.stop_signals.append(code)

    def fail(self, code: str, message: str) -> None:
        """The reply tried to call and this attempt yields no call (an issue says why)."""
        self.attempted = True
        self.issue(code, message)

    def check_text_after(self, tail: str) -> None:
        """Signal ``stop.text_after_call`` if ``tail`` (after the calls) is more than fences."""
        if tail.replace("```", "").strip():
            self.signal(codes.STOP_TEXT_AFTER_CALL)

    def add_json(
        self, raw: str, *, name_keys: Sequence[str], where: str, lenient: bool = False
    ) -> None:
        """Decode one call's JSON text (strict, then repair) and add the call(s) it holds."""
        self.add_decoded(decode(raw), name_keys=name_keys, where=where, lenient=lenient)

    def add_decoded(
        self, got: Decoded, *, name_keys: Sequence[str], where: str, lenient: bool = False
    ) -> None:
        """Add the call(s) held by a decoded value; a failed decode is an issue.

        ``lenient``: the value was only found by a lenient reading, so its calls count as
        repaired (the caller reports why, once, with ``call.lenient``).
        """
        self.attempted = True
        if not got.ok:
            self.issue(codes.JSON_DECODE_FAILED, f"{where}: invalid JSON that repair could not fix")
            return
        values = got.value if isinstance(got.value, list) else [got.value]
        if got.repaired:
            # Repair always returns *something*; it only counts if it yields a call.
            probe = CallCollector()
            for value in values:
                probe.add_object(value, name_keys=name_keys, where=where, repaired=True)
            if not probe.calls:
                self.issue(codes.JSON_DECODE_FAILED, f"{where}: invalid JSON, repair found no call")
                return
            self.issue(codes.JSON_REPAIRED, f"{where}: invalid JSON, decoded only after repair")
            self.calls.extend(probe.calls)
            self.errors.extend(probe.errors)
            self.flat.extend(probe.flat)
            self.dropped = self.dropped or probe.dropped
            return
        if not values:
            self.issue(codes.CALL_BAD_SHAPE, f"{where}: empty list, no call")
        for value in values:
            self.add_object(value, name_keys=name_keys, where=where, repaired=lenient)

    def add_object(
        self,
        value: Any,
        *,
        name_keys: Sequence[str],
        where: str,
        repaired: bool = False,
        call_id: str | None = None,
    ) -> None:
        """Add a call from an already decoded object (``{"name": ..., "arguments": ...}``)."""
        self.attempted = True
        if not isinstance(value, dict):
            self.issue(codes.CALL_BAD_SHAPE, f"{where}: a call must be a JSON object")
            return
        name = next((value[k] for k in name_keys if k in value), None)
        if not isinstance(name, str) or not name.strip():
            self.issue(codes.CALL_MISSING_NAME, f"{where}: the call has no tool name")
            return
        has_args = any(k in value for k in ARG_KEYS)
        extra = [k for k in value if k not in name_keys and k not in ARG_KEYS and k not in _IDS]
        # an echoed tool definition: {"name", "description", "parameters"}, no "arguments"
        if "description" in extra and "parameters" in value and "arguments" not in value:
            self.issue(
                codes.CALL_BAD_SHAPE, f"{where}: '{name.strip()}' is a tool definition, not a call"
            )
            return
        if not has_args and extra:
            beside = {k: value[k] for k in extra}
            call = ToolCall(name=name.strip(), arguments=beside, repaired=True)
            self.calls.append(call)
            self.flat.append((call, where))
            return
        args_raw: Any = next((value[k] for k in ARG_KEYS if k in value), {})
        args, args_repaired, notes = self._arguments(args_raw, name, where)
        if args is None:
            return
        self.calls.append(
            ToolCall(
                name=name.strip(),
                arguments=args,
                id=call_id if call_id is not None else _str_or_none(value.get("id")),
                repaired=repaired or args_repaired,
                notes=notes,
            )
        )

    def _arguments(
        self, raw: Any, name: str, where: str
    ) -> tuple[dict[str, Any] | None, bool, list[str]]:
        """``(arguments, repaired, notes)``; arguments None: not an object (an issue)."""
        if raw is None:
            return {}, False, [codes.ARGS_NULL]
        repaired = False
        if isinstance(raw, str):  # arguments given as a JSON string (OpenAI style)
            if not raw.strip():
                return {}, False, []
            got = decode(raw)
            if got.ok and got.value is None and not got.repaired:  # the string "null"
                return {}, False, [codes.ARGS_NULL]
            if got.ok and got.repaired:
                self.issue(codes.JSON_REPAIRED, f"{where}: arguments of '{name}' needed repair")
                repaired = True
            raw = got.value if got.ok else raw
        if not isinstance(raw, dict):
            self.issue(codes.ARGS_NOT_OBJECT, f"{where}: arguments of '{name}' are not an object")
            return None, False, []
        return raw, repaired, []

    def check_tools(self, tools: Sequence[ToolDef] | None) -> None:
        self._settle_flat(tools)
        if tools is None:
            return
        known = {t.name for t in tools}
        for call in self.calls:
            if call.name not in known:
                self.issue(codes.CALL_UNKNOWN_TOOL, f"unknown tool '{call.name}'")

    def _settle_flat(self, tools: Sequence[ToolDef] | None) -> None:
        """An object with a name and other keys but no ``arguments`` is a call only when
        those keys are parameters of the tool it names (then ``repaired``, code
        ``call.lenient``); otherwise (a tool result ``{"name": "_error", "message": ..}``,
        a made-up record, or no tools to check against) it is not a call."""
        for call, where in self.flat:
            tool = next((t for t in tools or () if t.name == call.name), None)
            props = tool.parameters.get("properties") if tool is not None else None
            if isinstance(props, dict) and set(call.arguments) <= set(props):
                self.issue(
                    codes.CALL_LENIENT,
                    f"{where}: arguments of '{call.name}' written beside the name, not in "
                    "'arguments'",
                )
                continue
            self.calls = [c for c in self.calls if c is not call]
            self.issue(
                codes.CALL_BAD_SHAPE,
                f"{where}: an object with a name and other keys ({', '.join(call.arguments)}) "
                "is not a call",
            )
        self.flat.clear()

    def result(
        self,
        *,
        content: str,
        raw_content: str,
        reasoning: str | None,
        final_answer: str | None = None,
        final_from_content: bool = True,
    ) -> ParseResult:
        self._settle_flat(None)
        if self.calls:
            lenient = self.dropped or any(c.repaired for c in self.calls)
            status = "repaired" if lenient else "strict"
        else:
            status = "failed" if self.attempted else "no_call"
        if final_answer is None and final_from_content and not self.calls:
            final_answer = content if (content or not self.attempted) else None
        return ParseResult(
            calls=self.calls,
            content=content,
            raw_content=raw_content,
            reasoning=reasoning,
            errors=self.errors,
            status=status,
            attempted=self.attempted or bool(self.calls),
            stop_signals=self.stop_signals,
            final_answer=final_answer,
        )


def _str_or_none(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def failed_result(text: str, exc: BaseException) -> ParseResult:
    """Last-resort result if a parser bug raises: parsing must never raise to callers."""
    return ParseResult(
        content=text,
        raw_content=text,
        errors=[ParseIssue(code=codes.CALL_BAD_SHAPE, message=f"parser error: {exc!r}")],
        status="failed",
    )
