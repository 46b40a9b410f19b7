"""Reading the text of one Python-style call list into calls, never evaluating it.

:mod:`toolbench.formats.pythonic` finds where a reply's calls are; this module reads
them. The text is read with Python's ``ast`` and never evaluated: only keyword arguments
whose values are literals (strings, numbers, ``True``/``False``/``None``, lists, tuples,
dicts with string keys, a sign on a number) are accepted. A lambda, a name, an attribute
access, a call inside the arguments or any other expression refuses the call with
``args.not_literal``.

``ast.parse`` recurses on nesting, so a 10,000-deep expression would raise
``RecursionError`` or ``MemoryError`` inside it; the text is first checked in one linear
pass (length, bracket depth, sign runs) and refused with ``call.too_deep`` before any
parsing. Callers catch anything ``ast`` still raises.

**Names.** A tool name is whatever the tool list offered, and models write it back as it
is: dotted (``math.gcd``, ``github.create_issue``), slashed (``fs/read_file``), hyphenated
(``weather-forecast``), with a colon (``calendar:add_event``). ``ast`` cannot take most of
these as a callee (``math.gcd`` would be an attribute access, ``fs/read_file`` a
division), so in one pass over the text outside strings every callee (a name right
before ``(`` where only list brackets enclose it) and every keyword-argument name that is
not a Python identifier is replaced by a stand-in identifier, mapped back after reading.
A dotted name inside the *arguments* is still an attribute access, refused.

A dotted chain of names is Python (an attribute chain, as BFCL's decoder reads it), so it
is ``strict``. A hyphen, a slash or a colon in a tool name, and a Python keyword or a
hyphen in an argument name (``from=``, ``max-results=``), is not: a Python parser (vLLM's
and SGLang's pythonic parsers, BFCL's decoder) refuses the reply. Such a name is read
exactly as written, and the reading is lenient (``repaired``): it tells the user that a
parser of the format's own grammar would have failed there.

**Lenient readings** (each one noted in :attr:`Reading.lenient`, so the caller marks the
calls ``repaired``, never ``strict``): JSON's ``true``/``false``/``null`` as values;
Markdown-escaped underscores in names (``get\\_weather``, then ``\\_`` in strings too);
an unescaped apostrophe between two letters inside a ``'...'`` string (``'Schindler's
List'``: a closing quote followed by a letter is never valid Python, so the reading is
unambiguous); a list nested in the call list (``[[f(x=1)]]``); calls written as strings
(``['f(x=1)']``).
"""

from __future__ import annotations

import ast
import keyword
import re
from dataclasses import dataclass, field
from typing import Any

from toolbench import codes

MAX_CHARS = 64_000
"""A call list longer than this is refused unread (``call.too_deep``)."""
MAX_DEPTH = 24
"""Deepest bracket nesting accepted in a call list (an argument nested 20 levels is plenty)."""

NAME = r"[^\W\d](?:[\w\-.:/]|\\_)*+"
"""A tool name as a callee: a letter or ``_``, then word characters, ``- . : /`` and
Markdown-escaped underscores (``\\_``). Possessive, so a search stays linear."""

# One token: a run of plain characters, a (possibly unclosed) Python string, or a bracket.
# In a '...' string, a quote between two word characters is an apostrophe (see the module).
TOKEN = re.compile(
    r"""[^'"()\[\]{}]++"""
    r"""|'(?:[^'\\\n]|\\.|(?<=\w)'(?=\w))*+'?"""
    r"""|"(?:[^"\\\n]|\\.)*+"?"""
    r"""|[()\[\]{}]"""
)
_KEYWORD = re.compile(r"\b(?:lambda|not|and|or|if|else|for|in|is|await|yield)\b")
_OPERATOR = re.compile(r"[^\w\s=,:.+\-]")
_ATTRIBUTE = re.compile(r"\.\s*+[A-Za-z_]")
_SIGN = re.compile(r"[+\-]")
_KWARG = re.compile(r"(^|,)(\s*+)([^\W\d][\w\-]*+)(\s*+=)(?!=)")
_ESCAPE = re.compile(r"\\(.)", re.S)
_BRACKET = re.compile(r"[()\[\]{}]")
_APOSTROPHE = re.compile(r"\\.|'", re.S)
_VALID_ESCAPES = frozenset("\n\\'\"abfnrtv01234567xNuU")
_JSON_NAMES: dict[str, Any] = {"true": True, "false": False, "null": None}

JSON_LITERALS = "JSON literals (true/false/null) read as Python's True/False/None"
MARKDOWN = "Markdown-escaped underscores (\\_) read as _"
APOSTROPHE = "an unescaped apostrophe inside a '...' string read as part of it"
NESTED = "a list nested in the call list read as its calls"
STRINGS = "calls written as strings read as calls"
NOT_PYTHON = (
    "a name that Python cannot parse (a Python keyword, a hyphen, a slash or a colon) "
    "read through a stand-in"
)


class Refused(Exception):
    """A call list that must not be read: carries the typed code and the reason."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(slots=True)
class Reading:
    """The calls of one call list and why the reading was lenient (empty: strict)."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    lenient: list[str] = field(default_factory=list)

    def note(self, why: str) -> None:
        if why not in self.lenient:
            self.lenient.append(why)


def read_list(src: str, *, strings: bool = True) -> Reading:
    """The calls of ``[f(a=1), g(b='x')]`` (raises :class:`Refused`, ``SyntaxError``...).

    ``strings``: items that are strings are read as calls themselves (one level only,
    so the work stays linear in the text).
    """
    if len(src) > MAX_CHARS:
        raise Refused(codes.CALL_TOO_DEEP, f"call list longer than {MAX_CHARS} characters")
    reading = Reading()
    prepared, names = _prepare(src, reading)
    check_shape(prepared)
    _collect(ast.parse(prepared, mode="eval").body, names, reading, strings)
    return reading


def _collect(node: ast.expr, names: dict[str, str], reading: Reading, strings: bool) -> None:
    if not isinstance(node, ast.List):
        raise Refused(codes.CALL_BAD_SHAPE, "a call list must be [f(...), ...]")
    for item in node.elts:
        if isinstance(item, ast.Call):
            reading.calls.append(_call(item, names, reading))
        elif isinstance(item, ast.List):
            reading.note(NESTED)
            _collect(item, names, reading, strings)
        elif strings and isinstance(item, ast.Constant) and isinstance(item.value, str):
            reading.note(STRINGS)
            inner = item.value.strip()
            sub = read_list(inner if inner.startswith("[") else f"[{inner}]", strings=False)
            reading.calls.extend(sub.calls)
            for why in sub.lenient:
                reading.note(why)
        else:
            raise Refused(codes.CALL_BAD_SHAPE, "each item must be a call of a tool name")


def _call(item: ast.Call, names: dict[str, str], reading: Reading) -> tuple[str, dict[str, Any]]:
    if not isinstance(item.func, ast.Name):
        raise Refused(codes.CALL_BAD_SHAPE, "each item must be a call of a tool name")
    name = names.get(item.func.id, item.func.id)
    if item.args:
        raise Refused(codes.CALL_BAD_SHAPE, f"'{name}' has positional arguments")
    args: dict[str, Any] = {}
    for kw in item.keywords:
        if kw.arg is None:
            raise Refused(codes.ARGS_NOT_LITERAL, "**kwargs is not a literal")
        args[names.get(kw.arg, kw.arg)] = literal(kw.value, 0, reading)
    return name, args


def _prepare(src: str, reading: Reading) -> tuple[str, dict[str, str]]:
    """The text ``ast`` can parse, and the stand-ins it holds for the names they stand for.

    One pass over the tokens: callees and keyword names that are not identifiers get
    stand-ins (see the module docstring), Markdown-escaped underscores and apostrophes are
    read (noted as lenient), and an escape Python does not know (``'C:\\data'``) has its
    backslash doubled, which is the value Python gives it, without its warning.
    """
    toks = [m.group() for m in TOKEN.finditer(src)]
    markdown = "\\_" in src and any(t[0] not in "'\"" and "\\_" in t for t in toks)
    if markdown:
        reading.note(MARKDOWN)
    names: dict[str, str] = {}
    tag = "_tb_"
    while tag in src:
        tag = "_" + tag
    stand_ins: dict[str, str] = {}

    def stand_in(name: str) -> str:
        if name.isidentifier() and not keyword.iskeyword(name):
            return name
        if not all(p.isidentifier() and not keyword.iskeyword(p) for p in name.split(".")):
            reading.note(NOT_PYTHON)  # a dotted chain of names is Python; the rest is not
        if name not in stand_ins:
            stand_ins[name] = f"{tag}{len(stand_ins)}"
            names[stand_ins[name]] = name
        return stand_ins[name]

    def kwarg(m: re.Match[str]) -> str:
        return m.group(1) + m.group(2) + stand_in(m.group(3)) + m.group(4)

    stack: list[str] = []
    others = 0  # brackets on the stack that are not "[": 0 means a callee's position
    out: list[str] = []
    for i, tok in enumerate(toks):
        c = tok[0]
        if tok in ("(", "[", "{"):
            stack.append(tok)
            others += tok != "["
        elif tok in (")", "]", "}"):
            if stack:
                others -= stack.pop() != "["
        elif c in "'\"":
            tok = _string(tok, markdown, reading)
        else:
            if markdown:
                tok = tok.replace("\\_", "_")
            nxt = toks[i + 1] if i + 1 < len(toks) else ""
            if stack and others == 0 and nxt == "(":
                start, end = _trailing_name(tok)
                if start < end:
                    tok = tok[:start] + stand_in(tok[start:end]) + tok[end:]
            elif others == 1 and stack[-1] == "(":
                tok = _KWARG.sub(kwarg, tok)
        out.append(tok)
    return "".join(out), names


def _string(tok: str, markdown: bool, reading: Reading) -> str:
    """A string token as ``ast`` should see it (apostrophes escaped, escapes settled)."""
    if tok[0] == "'" and any(m.group() == "'" for m in _APOSTROPHE.finditer(tok, 1, len(tok) - 1)):
        reading.note(APOSTROPHE)
        inner = _APOSTROPHE.sub(lambda m: "\\'" if m.group() == "'" else m.group(), tok[1:-1])
        tok = "'" + inner + tok[-1]
    if "\\" not in tok:
        return tok

    def escape(m: re.Match[str]) -> str:
        c = m.group(1)
        if c == "_" and markdown:
            return "_"
        return m.group(0) if c in _VALID_ESCAPES else "\\" + m.group(0)

    return _ESCAPE.sub(escape, tok)


def _trailing_name(text: str) -> tuple[int, int]:
    """Where the name that ends ``text`` (before trailing spaces) lies; walked back
    character by character, so a long token costs linear time (a ``$``-anchored search
    would retry from every position)."""
    end = len(text.rstrip())
    start = end
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_-.:/"):
        start -= 1
    while start < end and not (text[start].isalpha() or text[start] == "_"):
        start += 1
    return start, end


def check_shape(src: str) -> None:
    """Refuse, in one linear pass, anything but literals before ``ast.parse`` sees it.

    ``ast.parse`` recurses on nesting and on chains (``1+1+...``, ``f()()...``, ``not not
    ...``), so a 10,000-long one raises inside it. Literals need none of that: brackets up
    to :data:`MAX_DEPTH`, a sign only in front of a number, no operator, keyword,
    attribute or call inside the arguments (a call is allowed only where list brackets
    alone enclose it: that is a callee).
    """
    if len(src) > MAX_CHARS:
        raise Refused(codes.CALL_TOO_DEEP, f"call list longer than {MAX_CHARS} characters")
    stack: list[str] = []
    others = 0
    last = ""  # the last non-space character outside strings
    for m in TOKEN.finditer(src):
        c = m.group()
        if c in ("(", "[", "{"):
            if c == "(" and (
                last in (")", "]", "}") or (others and (last.isalnum() or last == "_"))
            ):
                raise Refused(codes.ARGS_NOT_LITERAL, "argument is a call, not a literal")
            stack.append(c)
            others += c != "["
            if len(stack) > MAX_DEPTH:
                raise Refused(codes.CALL_TOO_DEEP, f"call list nested deeper than {MAX_DEPTH}")
            last = c
        elif c in (")", "]", "}"):
            if stack:
                others -= stack.pop() != "["
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


def match_bracket(text: str, start: int, stop: int | None = None) -> int | None:
    """End (exclusive) of the bracket opened at or after ``start``, skipping Python strings.

    Looks at most :data:`MAX_CHARS` characters (and not past ``stop``), so a reply of a
    million unclosed brackets costs a bounded amount of work.
    """
    end = min(len(text) if stop is None else stop, start + MAX_CHARS)
    depth = 0
    for m in TOKEN.finditer(text, start, end):
        c = m.group()
        if c in ("(", "[", "{"):
            depth += 1
        elif c in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return m.end()
    return None


def blind_close(text: str, start: int) -> int | None:
    """Where the bracket opened at ``start`` closes when quotes are ignored (None: never,
    within :data:`MAX_CHARS`). A list that only closes this way was not cut off: a quote
    inside one of its strings broke the pairing."""
    depth = 0
    for m in _BRACKET.finditer(text, start, min(len(text), start + MAX_CHARS)):
        if m.group() in "([{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.end()
    return None


def python_literal(text: str) -> tuple[bool, Any]:
    """``(ok, value)`` of one Python literal written as text (``{'key': 'value'}``,
    ``[1, True, None]``): the same checks as a call's arguments (length, depth, no
    operator, name or call), read with ``ast`` and never evaluated; never raises."""
    src = text.strip()
    if not src or len(src) > MAX_CHARS:
        return False, None
    try:
        check_shape(src)
        return True, literal(ast.parse(src, mode="eval").body, 0, Reading())
    except Exception:  # Refused, SyntaxError, RecursionError...: not a literal
        return False, None


def literal(node: ast.expr, depth: int, reading: Reading) -> Any:
    """The value of a literal node; anything that would need evaluation is refused."""
    if depth > MAX_DEPTH:
        raise Refused(codes.CALL_TOO_DEEP, "argument nested too deeply")
    if isinstance(node, ast.Constant) and isinstance(
        node.value, (str, int, float, bool, type(None))
    ):
        return node.value
    if isinstance(node, ast.Name) and node.id in _JSON_NAMES:
        reading.note(JSON_LITERALS)
        return _JSON_NAMES[node.id]
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
        return [literal(e, depth + 1, reading) for e in node.elts]
    if isinstance(node, ast.Dict):
        out: dict[str, Any] = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                raise Refused(codes.ARGS_NOT_LITERAL, "dict keys must be strings")
            out[k.value] = literal(v, depth + 1, reading)
        return out
    what = {
        ast.Lambda: "a lambda",
        ast.Attribute: "an attribute access",
        ast.Call: "a call",
        ast.Name: "a variable name",
    }.get(type(node), type(node).__name__)
    raise Refused(codes.ARGS_NOT_LITERAL, f"argument is {what}, not a literal")
