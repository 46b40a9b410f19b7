"""``pythonic``: Llama 3.2 / Llama 4 style call lists, ``[get_weather(city="Paris"), f()]``.

Calls are read with Python's ``ast`` and never evaluated: only keyword arguments whose
values are literals (strings, numbers, ``True``/``False``/``None`` and the JSON spellings
``true``/``false``/``null``, lists, tuples, dicts with string keys, a sign on a number) are
accepted. A lambda, a name, an attribute access, a call inside the arguments or any other
expression refuses the call with ``args.not_literal``.

``ast.parse`` recurses on nesting, so a 10,000-deep expression would raise
``RecursionError`` or ``MemoryError`` inside it; the region is first checked in one linear
pass (length, bracket depth, sign runs) and refused with ``call.too_deep`` before any
parsing, and anything ``ast`` still raises is caught.

Tool names with hyphens (MCP's ``weather-forecast``) and argument names that are Python
keywords (``from``, ``class``) are read too, through stand-in identifiers (see
:func:`_protect_names`).

Wrappers the reference parsers accept are read too: Llama 4's
``<|python_start|>...<|python_end|>`` and Olmo 3's ``<function_calls>...</function_calls>``
(one call per line).
"""

from __future__ import annotations

import ast
import json
import keyword
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolbench import codes
from toolbench.formats.base import NamePattern, ParseResult, ToolCall
from toolbench.formats.dialect import DialectCollector, DialectFormat
from toolbench.formats.streamsyntax import Region as StreamRegion
from toolbench.formats.streamsyntax import StreamSyntax, literal, tag, tokens
from toolbench.formats.text import Cutter, split_think, tidy
from toolbench.tools import ToolDef

PY_START = "<|python_start|>"
PY_END = "<|python_end|>"
OLMO_OPEN = "<function_calls>"
OLMO_CLOSE = "</function_calls>"
MAX_CHARS = 64_000
"""A call list longer than this is refused unread (``call.too_deep``)."""
MAX_DEPTH = 24
"""Deepest bracket nesting accepted in a call list (an argument nested 20 levels is plenty)."""
_LIST_START = re.compile(r"\[\s*+[A-Za-z_][\w\-]*+\s*+\(")
# A call list where a user would see it: at the start of a line or after a space or a tag
# (code such as ``d[f(x)]`` is not one), opening with a keyword argument: ``[f(a=``. An
# empty ``[f()]`` is too common in ordinary code to count as this format's syntax.
_LEAK = re.compile(r"(?<![^\s>])\[\s*+[A-Za-z_][\w\-]*+\(\s*+[A-Za-z_][\w\-]*+\s*+=")
_SPECIALS = (PY_START, PY_END, "<|python_tag|>", OLMO_OPEN, OLMO_CLOSE, "<|eom|>", "<|eot|>")
_JSON_NAMES = {"true": True, "false": False, "null": None, "True": True, "False": False}


class Refused(Exception):
    """A call list that must not be read: carries the typed code and the reason."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def call_text(name: str, arguments: dict[str, Any]) -> str:
    args = ", ".join(f"{k}={_py_literal(v)}" for k, v in arguments.items())
    return f"[{name}({args})]"


def _py_literal(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, (int, float, str)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_py_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{json.dumps(str(k))}: {_py_literal(v)}" for k, v in value.items())
            + "}"
        )
    return json.dumps(str(value))


def result_text(name: str, result: str) -> str:
    del name
    return result


class Pythonic(DialectFormat):
    name = "pythonic"
    test_cases = "test_pythonic"
    name_patterns = (
        NamePattern(30, "toolace", "ToolACE was trained on pythonic call lists"),
        NamePattern(
            100,
            "llama (?:4|3\\.2|3 2)|olmo 3",
            "Llama 3.2/4 and Olmo 3 were trained on pythonic call lists",
        ),
    )
    template_tokens = (("<|python_start|>",),)
    template_rank = 90
    conformance_family = "pythonic"
    leak_rank = 3
    stream = StreamSyntax(
        (
            tag(PY_START, PY_END),
            tag(OLMO_OPEN, OLMO_CLOSE),
            StreamRegion(open=literal("<|python_tag|>"), close_pattern=r"<\|eom\|>|<\|eot\|>"),
            StreamRegion(open=r"\[\s{0,8}[A-Za-z_][\w\-]{0,40}\s{0,8}\(", close="balanced"),
            tokens(*_SPECIALS),
        )
    )
    description = "Llama 3.2/4 style: [func(a=1), g(b='x')], read with ast, never evaluated."
    markers = (re.compile(re.escape(PY_START)), re.compile(re.escape(PY_END)), _LEAK)
    literal_markers = _SPECIALS
    call_openers = (PY_START, OLMO_OPEN)
    pattern_markers = (_LEAK,)
    call_text = staticmethod(call_text)
    result_text = staticmethod(result_text)

    def instructions(self, tools: Sequence[ToolDef]) -> str:
        listing = json.dumps([_flat(t) for t in tools], ensure_ascii=False, indent=4)
        return (
            "You are an expert in composing functions. You are given a question and a set of "
            "possible functions. Based on the question, you will need to make one or more "
            "function/tool calls to achieve the purpose. If none of the functions can be used, "
            "point it out. If the given question lacks the parameters required by the "
            "function, also point it out. You should only return the function call in tools "
            "call sections.\n\n"
            "If you decide to invoke any of the function(s), you MUST put it in the format of "
            "[func_name1(params_name1=params_value1, params_name2=params_value2...), "
            "func_name2(params)]\n"
            "You SHOULD NOT include any other text in the response.\n\n"
            "Here is a list of functions in JSON format that you can invoke.\n\n"
            f"{listing}\n\n"
            "Function results come back in the ipython role. When no function is needed, or "
            "once you have the results, answer in plain text."
        )

    def shot_result_text(self, name: str, result: str) -> str:
        return f"ipython: {result}"

    def result_messages(self, results: Sequence[tuple[ToolCall, str]]) -> list[dict[str, Any]]:
        return [{"role": "ipython", "content": res} for _, res in results]

    def _parse(self, text: str, tools: Sequence[ToolDef] | None) -> ParseResult:
        split = split_think(text, opened_in_prompt=False)
        body = split.text
        col = DialectCollector()
        cuts = Cutter(body)
        region = _find_region(body)
        if region is not None:
            _read_region(body, region, col)
            cuts.cut(region.cut_start, region.cut_end)
        raw = cuts.finish()
        if cuts.last_end is not None:
            col.check_text_after(body[cuts.last_end :])
        col.check_tools(tools)
        raw = tidy(raw)
        return col.result(content=self._clean(raw), raw_content=raw, reasoning=split.reasoning)


def _flat(tool: ToolDef) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "parameters": tool.parameters}


@dataclass(frozen=True, slots=True)
class Region:
    """Where the call list is: the text to read and the span to cut from the visible text."""

    start: int
    end: int
    cut_start: int
    cut_end: int
    lines: bool = False
    """Olmo 3: one call per line instead of a bracketed list."""
    closed: bool = True


def _find_region(body: str) -> Region | None:
    i = body.find(OLMO_OPEN)
    if i >= 0:
        start = i + len(OLMO_OPEN)
        j = body.find(OLMO_CLOSE, start)
        end = j if j >= 0 else len(body)
        cut_end = j + len(OLMO_CLOSE) if j >= 0 else len(body)
        bracketed = body[start:end].lstrip().startswith("[")
        return Region(start, end, i, cut_end, lines=not bracketed, closed=j >= 0 or bracketed)
    i = body.find(PY_START)
    if i >= 0:
        start = i + len(PY_START)
        j = body.find(PY_END, start)
        end = j if j >= 0 else len(body)
        return Region(start, end, i, j + len(PY_END) if j >= 0 else len(body))
    m = _LIST_START.search(body)
    if m is None:
        return None
    close = _match_bracket(body, m.start())
    if close is None:
        return Region(m.start(), len(body), m.start(), len(body), closed=False)
    return Region(m.start(), close, m.start(), close)


# One token: a run of plain characters, a (possibly unclosed) Python string, or a bracket.
_TOKEN = re.compile(r"""[^'"()\[\]{}]++|'(?:[^'\\\n]|\\.)*+'?|"(?:[^"\\\n]|\\.)*+"?|[()\[\]{}]""")
_KEYWORD = re.compile(r"\b(?:lambda|not|and|or|if|else|for|in|is|await|yield)\b")
_OPERATOR = re.compile(r"[^\w\s=,:.+\-]")
_ATTRIBUTE = re.compile(r"\.\s*+[A-Za-z_]")
_SIGN = re.compile(r"[+\-]")


def _match_bracket(text: str, start: int) -> int | None:
    """End (exclusive) of the bracket opened at ``start``, skipping Python strings.

    Looks at most :data:`MAX_CHARS` characters, so a reply of a million unclosed brackets
    costs a bounded amount of work (the list is then refused as too long or truncated).
    """
    depth = 0
    for m in _TOKEN.finditer(text, start, min(len(text), start + MAX_CHARS)):
        c = m.group()
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return m.end()
    return None


def _check_shape(src: str) -> None:
    """Refuse, in one linear pass, anything but literals before ``ast.parse`` sees it.

    ``ast.parse`` recurses on nesting and on chains (``1+1+...``, ``f()()...``, ``not not
    ...``), so a 10,000-long one raises inside it. Literals need none of that: brackets up
    to :data:`MAX_DEPTH`, a sign only in front of a number, no operator, keyword,
    attribute or call inside the arguments.
    """
    if len(src) > MAX_CHARS:
        raise Refused(codes.CALL_TOO_DEEP, f"call list longer than {MAX_CHARS} characters")
    depth = 0
    last = ""  # the last non-space character outside strings
    for m in _TOKEN.finditer(src):
        c = m.group()
        if c in "([{":
            if c == "(" and (last == ")" or (depth >= 2 and (last.isalnum() or last == "_"))):
                raise Refused(codes.ARGS_NOT_LITERAL, "argument is a call, not a literal")
            depth += 1
            if depth > MAX_DEPTH:
                raise Refused(codes.CALL_TOO_DEEP, f"call list nested deeper than {MAX_DEPTH}")
            last = c
        elif c in ")]}":
            depth -= 1
            last = c
        elif c[0] in "'\"":
            last = '"'
        else:
            _check_plain(c)
            last = c.rstrip()[-1:] or last


def _check_plain(code: str) -> None:
    """Code outside strings and brackets: only names, numbers, ``=``, ``,``, ``:`` and signs."""
    op = _OPERATOR.search(code)
    if op:
        raise Refused(codes.ARGS_NOT_LITERAL, f"operator {op.group()!r} is not part of a literal")
    if _ATTRIBUTE.search(code):
        raise Refused(codes.ARGS_NOT_LITERAL, "argument is an attribute access, not a literal")
    kw = _KEYWORD.search(code)
    if kw:
        raise Refused(codes.ARGS_NOT_LITERAL, f"'{kw.group()}' is not part of a literal")
    for sign in _SIGN.finditer(code):
        before, after = _neighbours(code, sign.start())
        if (before and before not in "=,:eE") or not (after.isdigit() or after == "."):
            raise Refused(codes.ARGS_NOT_LITERAL, "an operator is not part of a literal")


def _neighbours(code: str, i: int) -> tuple[str, str]:
    """The nearest non-space characters before and after ``code[i]`` ("" at either end).

    Each whitespace run is walked only from the signs on its two sides, so all the signs
    of a text together cost linear time (a regex with ``\\s*`` on both sides does not).
    """
    j = i - 1
    while j >= 0 and code[j].isspace():
        j -= 1
    k = i + 1
    while k < len(code) and code[k].isspace():
        k += 1
    return (code[j] if j >= 0 else ""), (code[k] if k < len(code) else "")


def _read_region(body: str, region: Region, col: DialectCollector) -> None:
    col.attempted = True
    if region.end - region.start > MAX_CHARS:
        col.fail(codes.CALL_TOO_DEEP, f"call list longer than {MAX_CHARS} characters, not read")
        return
    src = body[region.start : region.end].strip()
    if not src:
        col.fail(
            codes.CALL_TRUNCATED if not region.closed else codes.CALL_BAD_SHAPE, "empty call list"
        )
        return
    repaired = False
    if region.lines:
        src = "[" + ",".join(line for line in src.splitlines() if line.strip()) + "]"
    elif not region.closed or (src.startswith("[") and not src.endswith("]")):
        if _match_bracket(src, 0) is not None or not src.endswith(")"):
            col.fail(codes.CALL_TRUNCATED, "the reply ended inside the call list")
            return
        src += "]"  # every call complete, only the closing bracket is missing
        repaired = True
    elif not src.startswith("["):
        src = "[" + src + "]"
    try:
        src, names = _protect_names(src)
        _check_shape(src)
        calls = [
            (names.get(n, n), {names.get(k, k): v for k, v in a.items()})
            for n, a in _calls_from(src)
        ]
    except Refused as exc:
        col.fail(exc.code, str(exc))
        return
    except Exception as exc:  # SyntaxError, RecursionError, MemoryError...: never raise
        col.fail(codes.CALL_BAD_SHAPE, f"not a Python call list ({type(exc).__name__})")
        return
    if repaired:
        col.issue(codes.JSON_REPAIRED, "call list without its closing ']', read after repair")
    for name, args in calls:
        col.calls.append(ToolCall(name=name, arguments=args, repaired=repaired))


_CALLEE = re.compile(r"[A-Za-z_][\w\-]*+\s*+$")
_KEYWORD_NAME = re.compile(r"\b(?:" + "|".join(keyword.kwlist) + r")\s*+[=(]")
"""A Python keyword written as a callee or an argument name: only then are stand-ins needed
(besides hyphens)."""
_KWARG = re.compile(r"(^|,)(\s*+)([A-Za-z_][\w\-]*+)(\s*+=)(?!=)")


def _protect_names(src: str) -> tuple[str, dict[str, str]]:
    """Stand-ins for names that are not Python identifiers, and the names they stand for.

    Tool names may carry hyphens (MCP's ``weather-forecast``) and parameters may be
    Python keywords (``from``, ``class``); models write them as they are, and ``ast``
    cannot parse them. In one pass over the text outside strings, a callee right inside
    the list (before ``(``) and a keyword-argument name right inside a call (before ``=``)
    that is not an identifier is replaced by a stand-in identifier; the code is still
    parsed, never evaluated, and the stand-ins are mapped back after reading.
    """
    names: dict[str, str] = {}
    if "-" not in src and not _KEYWORD_NAME.search(src):
        return src, names  # every name is an identifier already (the common case)
    stand_ins: dict[str, str] = {}
    tag = "_tb_"
    while tag in src:
        tag = "_" + tag

    def stand_in(name: str) -> str:
        if name.isidentifier() and not keyword.iskeyword(name):
            return name
        if name not in stand_ins:
            stand_ins[name] = f"{tag}{len(stand_ins)}"
            names[stand_ins[name]] = name
        return stand_ins[name]

    def kwarg(m: re.Match[str]) -> str:
        return m.group(1) + m.group(2) + stand_in(m.group(3)) + m.group(4)

    out: list[str] = []
    stack: list[str] = []
    tokens = [m.group() for m in _TOKEN.finditer(src)]
    for i, c in enumerate(tokens):
        if c in "([{":
            stack.append(c)
        elif c in ")]}":
            if stack:
                stack.pop()
        elif c[0] not in "'\"":
            nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
            if stack == ["["] and nxt == "(" and (m := _CALLEE.search(c)):
                name = m.group().rstrip()
                c = c[: m.start()] + stand_in(name) + c[m.start() + len(name) :]
            elif stack == ["[", "("]:
                c = _KWARG.sub(kwarg, c)
        out.append(c)
    return "".join(out), names


def _calls_from(src: str) -> list[tuple[str, dict[str, Any]]]:
    tree = ast.parse(src, mode="eval")
    node = tree.body
    if not isinstance(node, ast.List):
        raise Refused(codes.CALL_BAD_SHAPE, "a call list must be [f(...), ...]")
    out: list[tuple[str, dict[str, Any]]] = []
    for item in node.elts:
        if not isinstance(item, ast.Call) or not isinstance(item.func, ast.Name):
            raise Refused(codes.CALL_BAD_SHAPE, "each item must be a call of a plain name")
        if item.args:
            raise Refused(codes.CALL_BAD_SHAPE, f"'{item.func.id}' has positional arguments")
        args: dict[str, Any] = {}
        for kw in item.keywords:
            if kw.arg is None:
                raise Refused(codes.ARGS_NOT_LITERAL, "**kwargs is not a literal")
            args[kw.arg] = _literal(kw.value, 0)
        out.append((item.func.id, args))
    return out


def python_literal(text: str) -> tuple[bool, Any]:
    """``(ok, value)`` of one Python literal written as text (``{'key': 'value'}``,
    ``[1, True, None]``): the same checks as a call's arguments (length, depth, no
    operator, name or call), read with ``ast`` and never evaluated; never raises."""
    src = text.strip()
    if not src or len(src) > MAX_CHARS:
        return False, None
    try:
        _check_shape(src)
        return True, _literal(ast.parse(src, mode="eval").body, 0)
    except Exception:  # Refused, SyntaxError, RecursionError...: not a literal
        return False, None


def _literal(node: ast.expr, depth: int) -> Any:
    """The value of a literal node; anything that would need evaluation is refused."""
    if depth > MAX_DEPTH:
        raise Refused(codes.CALL_TOO_DEEP, "argument nested too deeply")
    if isinstance(node, ast.Constant) and isinstance(
        node.value, (str, int, float, bool, type(None))
    ):
        return node.value
    if isinstance(node, ast.Name) and node.id in _JSON_NAMES:
        return _JSON_NAMES[node.id]
    if isinstance(node, ast.Name) and node.id == "None":  # pragma: no cover - a Constant
        return None
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, (int, float))
        and not isinstance(node.operand.value, bool)
    ):
        value = node.operand.value
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(e, depth + 1) for e in node.elts]
    if isinstance(node, ast.Dict):
        out: dict[str, Any] = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                raise Refused(codes.ARGS_NOT_LITERAL, "dict keys must be strings")
            out[k.value] = _literal(v, depth + 1)
        return out
    what = {
        ast.Lambda: "a lambda",
        ast.Attribute: "an attribute access",
        ast.Call: "a call",
        ast.Name: "a variable name",
    }.get(type(node), type(node).__name__)
    raise Refused(codes.ARGS_NOT_LITERAL, f"argument is {what}, not a literal")
