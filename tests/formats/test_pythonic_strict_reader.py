"""``pythonic``: ``strict`` exactly where an independent strict reader reads the same calls.

The reader below is written from the format alone (Llama 3.2's template: "you MUST put it
in the format of [func_name1(params_name1=params_value1, ...), func_name2(params)]";
Llama 4's ``<|python_start|>...<|python_end|>``; Olmo 3's ``<function_calls>`` with one
call per line) and shares no code with ``toolbench.formats.pythonic``: it walks Python's
own tokenizer. A reply is strict when it is the call list alone (whitespace,
``<|python_tag|>`` before it and an end-of-turn token after it allowed) or holds one
wrapper (text around the tags allowed: they mark the call), each call is a Python name
or a dotted chain of names (``math.gcd``: Python reads an attribute chain) with keyword
arguments named by Python identifiers, whose values ``ast.literal_eval`` reads as
JSON-able Python literals, and no second call list follows a wrapper.

Both ways are held, over the tables, the conformance vectors and generated replies: every
reply ``pythonic`` calls strict is read the same by this reader, and every reply this
reader reads is ``strict`` in ``pythonic`` with the same calls (issue 34's measure: the
calls of real prompt-mode replies, dotted names included, equal to a strict reader's).
"""

from __future__ import annotations

import ast
import io
import json
import keyword
import re
import tokenize
import warnings
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from stream_corpus import corpus

from toolbench.formats.pythonic import Pythonic

F = Pythonic()
Call = tuple[str, Any]
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_ANOTHER = re.compile(r"\[\s*[A-Za-z_'\"\[]|<\|python_start\|>|<function_calls>")
_END = re.compile(r"\s*(?:<\|eot_id\|>|<\|eom_id\|>|<\|eot\|>|<\|eom\|>)?\s*")


def strict_calls(reply: str) -> list[Call] | None:
    """The calls of a strictly well-formed pythonic reply, or None when it is not one."""
    text = _THINK.sub("", reply).strip()
    if "<|python_start|>" in text:
        body = text.split("<|python_start|>", 1)[1]
        inner, _, after = body.partition("<|python_end|>")
        got = _list(inner.strip())
        return None if got is None or got[1].strip() or _ANOTHER.search(after) else got[0]
    if "<function_calls>" in text:
        inner, _, after = text.split("<function_calls>", 1)[1].partition("</function_calls>")
        lines = [line.strip() for line in inner.strip().splitlines() if line.strip()]
        calls: list[Call] = []
        for line in lines:
            got = _list(f"[{line}]")
            if got is None or got[1].strip():
                return None
            calls.extend(got[0])
        return calls if calls and not _ANOTHER.search(after) else None
    text = text.removeprefix("<|python_tag|>").lstrip()
    if not text.startswith("["):
        return None
    got = _list(text)
    return None if got is None or not _END.fullmatch(got[1]) else got[0]


def _list(text: str) -> tuple[list[Call], str] | None:
    """The calls of the list ``text`` opens with, and the text after it."""
    try:
        toks = [
            t
            for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT)
        ]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return _list_prefix(text)
    return _walk(text, toks)


def _list_prefix(text: str) -> tuple[list[Call], str] | None:
    """Text after the list may not tokenize (prose with an apostrophe): cut where the
    list's brackets balance, counted over the tokens of growing prefixes, then walk."""
    depth = 0
    for i, c in enumerate(text):
        depth += c in "([{"
        depth -= c in ")]}"
        if depth == 0:
            try:
                toks = list(tokenize.generate_tokens(io.StringIO(text[: i + 1]).readline))
            except (tokenize.TokenError, SyntaxError, IndentationError):
                continue
            got = _walk(text[: i + 1], [t for t in toks if t.type == tokenize.OP or t.string])
            return None if got is None else (got[0], text[i + 1 :])
    return None


def _walk(text: str, toks: list[tokenize.TokenInfo]) -> tuple[list[Call], str] | None:
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(pos: tuple[int, int]) -> int:
        return starts[pos[0] - 1] + pos[1]

    toks = [t for t in toks if t.type != tokenize.ENDMARKER and t.string]
    i = 0

    def op(s: str) -> bool:
        return i < len(toks) and toks[i].type == tokenize.OP and toks[i].string == s

    if not op("["):
        return None
    i += 1
    calls: list[Call] = []
    while True:
        if not _name(toks, i):
            return None
        name = toks[i].string
        i += 1
        while op(".") and _name(toks, i + 1):
            name += "." + toks[i + 1].string
            i += 2
        if not op("("):
            return None
        i += 1
        args: dict[str, Any] = {}
        while not op(")"):
            if not _name(toks, i):
                return None
            key = toks[i].string
            i += 1
            if not op("=") or key in args:
                return None
            i += 1
            first, depth = i, 0
            while i < len(toks) and not (depth == 0 and toks[i].string in (",", ")")):
                depth += toks[i].string in ("(", "[", "{")
                depth -= toks[i].string in (")", "]", "}")
                i += 1
            if i >= len(toks) or first == i:
                return None
            source = text[offset(toks[first].start) : offset(toks[i - 1].end)]
            try:
                with warnings.catch_warnings():  # '\_' is read as Python reads it, quietly
                    warnings.simplefilter("ignore", DeprecationWarning)
                    value = _json_able(ast.literal_eval(source))
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                return None
            args[key] = value
            if op(","):
                i += 1
        i += 1
        calls.append((name, args))
        if op(","):
            i += 1
            continue
        if op("]"):
            after = text[offset(toks[i].end) :]
            return calls, after
        return None


def _name(toks: list[tokenize.TokenInfo], i: int) -> bool:
    """Whether token ``i`` is a Python name (an identifier that is not a keyword)."""
    return i < len(toks) and toks[i].type == tokenize.NAME and not keyword.iskeyword(toks[i].string)


def _json_able(value: Any) -> Any:
    """The value as JSON would hold it (tuples as lists); anything else is not a literal
    of this format (a set, bytes, a complex number, a non-string key)."""
    if isinstance(value, tuple | list):
        return [_json_able(v) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("keys")
        return {k: _json_able(v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(type(value).__name__)


def _agrees(reply: str) -> None:
    got = F.parse(reply)
    mine = [(c.name, c.arguments) for c in got.calls]
    theirs = strict_calls(reply)
    if got.status == "strict":
        assert theirs == mine, (reply, got.codes())
    if theirs:
        assert got.status == "strict" and mine == theirs, (reply, got.status, got.codes())


def test_every_known_reply() -> None:
    replies = [r.text for r in corpus() if r.fmt == "pythonic"]
    assert len(replies) > 100
    strict = 0
    for reply in replies:
        _agrees(reply)
        strict += strict_calls(reply) is not None
    assert strict > 40


def test_the_reader_reads_what_the_format_asks_for_and_nothing_else() -> None:
    assert strict_calls("[math.gcd(num1=36, num2=48)]") == [("math.gcd", {"num1": 36, "num2": 48})]
    assert strict_calls("[math.gcd(num1=1)]<|eot_id|>") == [("math.gcd", {"num1": 1})]
    for reply in (
        "[fs/read_file(path='a')]",
        "[weather-forecast(city='a')]",
        "[f(from='a')]",
        "[f(a=1)] ok",
        "Sure: [f(a=1)]",
        "[f(a=true)]",
        "[[f(a=1)]]",
        "[get\\_weather(a=1)]",
        "[f(a='it's')]",
        "[f(a=1)] [g(b=2)]",
        "f(a=1)",
        "[f(1)]",
        "[f(a=x)]",
        "[f(a={1, 2})]",
    ):
        assert strict_calls(reply) is None, reply


NAMES = st.sampled_from(
    ["get_weather", "math.gcd", "fs/read_file", "calendar:add_event", "weather-forecast",
     "triangle_properties.get", "a.b.c", "github.create_issue", "x"]
)  # fmt: skip
KEYS = st.sampled_from(["city", "num1", "from", "max-results", "path", "q", "class"])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
CALLS = st.lists(
    st.tuples(NAMES, st.dictionaries(KEYS, VALUES, max_size=3)), min_size=1, max_size=3
)
SPACE = st.sampled_from(["", " ", "  ", "\n"])


def _write(calls: list[tuple[str, dict[str, Any]]], gap: str) -> str:
    items = [f"{name}({gap}" + f",{gap}".join(f"{k}={v!r}" for k, v in args.items()) + ")"
             for name, args in calls]  # fmt: skip
    return "[" + f",{gap}".join(items) + "]"


MUTATIONS = [
    lambda s: s,
    lambda s: "Sure, here you go: " + s,
    lambda s: "```python\n" + s + "\n```",
    lambda s: "[" + s + "]",
    lambda s: s.replace("True", "true").replace("None", "null"),
    lambda s: s.replace("_", "\\_"),
    lambda s: s + "\n" + s,
    lambda s: s[1:-1],
    lambda s: s[:-1],
    lambda s: "<|python_start|>" + s + "<|python_end|>",
    lambda s: s + " Let me know if you need more.",
]


@settings(max_examples=400, deadline=None)
@given(calls=CALLS, gap=SPACE, mutate=st.sampled_from(range(len(MUTATIONS))))
def test_generated_replies(calls: list[tuple[str, dict[str, Any]]], gap: str, mutate: int) -> None:
    reply = MUTATIONS[mutate](_write(calls, gap))
    _agrees(reply)
    if mutate == 0:  # written as asked: read exactly; strict where Python reads the names
        expected = [(n, json.loads(json.dumps(a))) for n, a in calls]
        got = F.parse(reply)
        assert [(c.name, c.arguments) for c in got.calls] == expected
        python = all(_python(n) and all(_python(k) for k in a) for n, a in calls)
        assert strict_calls(reply) == (expected if python else None)
        assert got.status == ("strict" if python else "repaired")


def _python(name: str) -> bool:
    return all(p.isidentifier() and not keyword.iskeyword(p) for p in name.split("."))
