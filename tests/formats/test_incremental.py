"""The incremental readers, format by format: what is held back, what is shown at once, the
events of a streamed reply, and what a careful and a naive application displayed.

The split invariance of every reader (any split ends where a whole parse does) is in
``test_incremental_properties.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, ClassVar

import pytest
from fmt_helpers import TOOLS
from stream_corpus import read_all

import toolbench.formats.reader_regions as reader_regions
from toolbench.formats.base import Format
from toolbench.formats.format_registry import builtin_format_names, get_format
from toolbench.formats.marker_reader import MarkerReader
from toolbench.formats.observe import TimedChunk, observe_stream
from toolbench.formats.reader_events import Event
from toolbench.formats.reader_plan import holds_of
from toolbench.formats.scanning import (
    Brackets,
    after_newline_firsts,
    context_free,
    context_width,
    first_chars,
    line_first_chars,
    line_start_firsts,
    overlap,
)
from toolbench.formats.stream_syntax import EMPTY, StreamSyntax
from toolbench.formats.xml import Xml
from toolbench.formats.xml import call_text as hermes_call
from toolbench.scenarios.loader import select_scenarios

# (format, text fed so far, text shown so far, characters held back)
HOLD = [
    ("xml", "Hi <tool_c", "Hi ", 7),
    ("prompt-json", 'Hi {"to', "Hi ", 4),
    ("prompt-json", "Hi { 'name'", "Hi ", 8),
    ("react", "Ok.\nAct", "Ok.\n", 3),
    ("react", "Ok.\n  Action Inp", "Ok.\n", 12),
    ("llama3-json", "Hi <|python_t", "Hi ", 10),
    ("llama3-json", 'Hi {"na', "Hi ", 4),
    ("pythonic", "Hi [get_w", "Hi ", 6),
    ("pythonic", "Hi <|python_st", "Hi ", 11),
    ("mistral", "Hi [TOOL_C", "Hi ", 7),
    ("qwen3-coder", "Hi <funct", "Hi ", 6),
    ("deepseek", "Hi <｜tool▁ca", "Hi ", 9),
    ("kimi-k2", "Hi <|tool_calls_sec", "Hi ", 16),
    ("harmony", "Hi <|chan", "Hi ", 6),
    ("claude-xml", "Hi <function_ca", "Hi ", 12),
    ("native", "Hi [TOOL_", "Hi ", 6),
    ("native|xml", "Hi <tool_", "Hi ", 6),
    ("xml|prompt-json", 'Hi {"tool', "Hi ", 6),
]

# (format, text): a near miss of an opener is shown as soon as it cannot become one
RELEASED = [
    ("xml", "a <tool_cat> b"),
    ("prompt-json", 'set {x} and {"tooling": 1} ok'),
    ("react", "Actions speak.\nAct now."),
    ("llama3-json", '{"names": 1} ok'),
    ("pythonic", "[see above] ok"),
    ("mistral", "[TOOL] ok"),
    ("qwen3-coder", "<funk> ok"),
    ("deepseek", "<｜tool▁cab ok"),
    ("harmony", "a <|cha b"),
    ("claude-xml", "<function_cal ok"),
]

CALL = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
PJ_CALL = '{"tool": "get_weather", "arguments": {"city": "Paris"}}'

DSML = (
    '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
    '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n'
    "</｜DSML｜invoke>\n</｜DSML｜function_calls>"
)
BARE_INVOKE = (
    '<｜DSML｜invoke name="get_weather">\n'
    '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>'
)

# (format, reply, events as (kind, text) with adjacent texts joined, names read per call)
EVENTS: list[tuple[str, str, list[tuple[str, str]], list[str]]] = [
    (
        "xml",
        f"Hi <tool_call>{CALL}</tool_call> bye",
        [
            ("text", "Hi "),
            ("call_started", "<tool_call>"),
            ("call_complete", f"<tool_call>{CALL}</tool_call>"),
            ("text", " bye"),
        ],
        ["get_weather"],
    ),
    (
        "prompt-json",
        f"Sure. {PJ_CALL} {{x}}",
        [
            ("text", "Sure. "),
            ("call_started", '{"tool":'),
            ("call_complete", PJ_CALL),
            ("text", " {x}"),
        ],
        ["get_weather"],
    ),
    (
        "pythonic",
        'x [get_weather(city="(Paris]")] y',
        [
            ("text", "x "),
            ("call_started", "[get_weather("),
            ("call_complete", '[get_weather(city="(Paris]")]'),
            ("text", " y"),
        ],
        ["get_weather"],
    ),
    (
        "mistral",
        'Ok [TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
        [
            ("text", "Ok "),
            ("call_started", "[TOOL_CALLS]"),
            ("call_complete", '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'),
        ],
        ["get_weather"],
    ),
    (
        "react",
        'Thought: go\nAction: get_weather\nAction Input: {"city": "Paris"}\nThought: done\n',
        [
            ("text", "Thought: go\n"),
            ("call_started", "Action:"),
            ("call_complete", 'Action: get_weather\nAction Input: {"city": "Paris"}\n'),
            ("text", "Thought: done\n"),
        ],
        ["get_weather"],
    ),
    (
        "harmony",
        "<|channel|>analysis<|message|>think<|end|>"
        '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json'
        '<|message|>{"city": "Paris"}<|call|>',
        [
            ("markup", "<|channel|>analysis<|message|>"),
            ("text", "think"),
            ("markup", "<|end|>"),
            ("call_started", "<|start|>assistant<|channel|>commentary to=functions.get_weather "
             "<|constrain|>json<|message|>"),
            ("call_complete", "<|start|>assistant<|channel|>commentary to=functions.get_weather "
             '<|constrain|>json<|message|>{"city": "Paris"}<|call|>'),
        ],
        [],
    ),
    (
        "llama3-json",
        'Hi <|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eom_id|>',
        [
            ("text", "Hi "),
            ("call_started", "<|python_tag|>"),
            (
                "call_complete",
                '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eom_id|>',
            ),
        ],
        ["get_weather"],
    ),
    (
        # the DSML opener holds the hidden token "｜DSML｜" inside it: the opener, which
        # begins first, must win however the text is split
        "deepseek",
        f"Ok {DSML}",
        [("text", "Ok "), ("call_started", "<｜DSML｜function_calls>"), ("call_complete", DSML)],
        ["get_weather"],
    ),
    (
        # DeepSeek V4's invoke without its block is a call while streaming too (issue 20)
        "deepseek",
        f"Ok {BARE_INVOKE}",
        [("text", "Ok "), ("call_started", "<｜DSML｜invoke"), ("call_complete", BARE_INVOKE)],
        ["get_weather"],
    ),
]  # fmt: skip


def _joined(events: list[Event]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for e in events:
        if e.kind == "final":
            continue
        if e.kind == "text" and out and out[-1][0] == "text":
            out[-1] = ("text", out[-1][1] + e.text)
        else:
            out.append((e.kind, e.text))
    return out


@pytest.mark.parametrize(
    ("spec", "fed", "shown", "held"), HOLD, ids=[f"{h[0]}:{h[1]}" for h in HOLD]
)
def test_a_tail_that_could_become_an_opener_is_held_back(
    spec: str, fed: str, shown: str, held: int
) -> None:
    reader = get_format(spec).reader(TOOLS)
    events = [e for ch in fed for e in reader.feed(ch)]
    assert "".join(e.text for e in events if e.kind == "text") == shown
    assert reader.held == held
    # at the end of the reply nothing is held any more: it was not an opener after all
    closing = reader.close()
    assert "".join(e.text for e in [*events, *closing] if e.kind == "text") == fed


@pytest.mark.parametrize(("spec", "text"), RELEASED, ids=[r[0] for r in RELEASED])
def test_a_near_miss_is_shown_as_soon_as_it_cannot_be_an_opener(spec: str, text: str) -> None:
    reader = get_format(spec).reader(TOOLS)
    events = [e for ch in text for e in reader.feed(ch)]
    assert "".join(e.text for e in events if e.kind == "text") == text[: len(text) - reader.held]
    assert reader.held <= 2  # only the last word's tail ("ok", "b") can still be pending
    assert not [e for e in events if e.kind != "text"]


@pytest.mark.parametrize("chunk", [1, 2, 5, 1000])
@pytest.mark.parametrize(("spec", "reply", "expected", "names"), EVENTS, ids=[e[0] for e in EVENTS])
def test_events_of_a_streamed_reply(
    spec: str, reply: str, expected: list[tuple[str, str]], names: list[str], chunk: int
) -> None:
    fmt = get_format(spec)
    reader = fmt.reader(TOOLS)
    events = read_all(reader, [reply[i : i + chunk] for i in range(0, len(reply), chunk)])
    assert _joined(events) == expected
    got = [c.name for e in events if e.kind == "call_complete" for c in e.calls]
    assert got == names or not names
    assert events[-1].kind == "final" and reader.result == fmt.parse(reply, TOOLS)
    assert [c.name for c in reader.result.calls] == ["get_weather"]


# -- the debug_turn regression -------------------------------------------------------------

TEXT_FORMATS = [n for n in builtin_format_names() if n != "native"] + ["native", "native|xml"]


def _debug_turn_reply(spec: str) -> str:
    """The reply of the bundled ``debug-turn`` scenario in ``spec``'s own syntax."""
    (scenario,) = select_scenarios(["streaming"])
    assert scenario.id == "debug-turn"
    (expected,) = scenario.expect.calls
    fmt = get_format(spec.split("|")[0])
    write: Any = getattr(fmt, "call_text", hermes_call)
    return f"I'll check.\n{write(expected.name, {'city': 'Paris'})}\nDone."


def _chunks(text: str, size: int) -> list[TimedChunk]:
    return [TimedChunk(10.0 * i, text[i : i + size]) for i in range(0, len(text), size)]


def _markers_in(fmt: Format, text: str) -> list[str]:
    """The format's raw markers in ``text`` that its visible markup does not cover."""
    allowed = type(fmt).visible_markup

    def covered(m: re.Match[str]) -> bool:
        return any((g := a.match(text, m.start())) and g.end() >= m.end() for a in allowed)

    return [m.group(0) for p in type(fmt).markers for m in p.finditer(text) if not covered(m)]


@pytest.mark.parametrize("size", [1, 2, 3, 7])
@pytest.mark.parametrize("spec", TEXT_FORMATS)
def test_debug_turn_careful_shows_no_marker_naive_does(spec: str, size: int) -> None:
    fmt = get_format(spec)
    reply = _debug_turn_reply(spec)
    careful = observe_stream(fmt, _chunks(reply, size), "careful", TOOLS)
    naive = observe_stream(fmt, _chunks(reply, size), "naive", TOOLS)
    assert careful.result == naive.result == fmt.parse(reply, TOOLS)
    assert careful.displayed.startswith("I'll check.\n")
    assert not careful.stream_leak and careful.leaked_chars == 0, careful.displayed
    assert _markers_in(fmt, careful.displayed) == []
    assert naive.stream_leak and naive.leaked_chars > 0
    opener = next(e.text for e in read_all(fmt.reader(TOOLS), [reply]) if e.kind == "call_started")
    assert opener in naive.displayed and opener not in careful.displayed
    if spec != "native":  # native's text path reads a call in content as a failed call
        assert [c.name for c in careful.result.calls] == ["get_weather"]
        assert careful.first_call_byte_ms is not None and careful.call_complete_ms is not None
        assert careful.first_call_byte_ms <= careful.call_complete_ms


# -- timings and policies ------------------------------------------------------------------

TIMED = [
    TimedChunk(0.0, "Hi "),
    TimedChunk(10.0, "<tool_"),
    TimedChunk(20.0, "call>" + CALL),
    TimedChunk(30.0, "</tool_call>"),
    TimedChunk(45.0, " bye"),
]


def test_careful_view_timings() -> None:
    view = observe_stream(get_format("xml"), TIMED, "careful", TOOLS)
    assert view.displayed == "Hi  bye"
    assert (view.stream_leak, view.leaked_chars) == (False, 0)
    assert view.holdback_ms == 10.0  # "<tool_" waited from 10 ms to 20 ms
    assert view.first_call_byte_ms == 10.0
    assert view.call_complete_ms == 30.0
    assert [c.name for c in view.result.calls] == ["get_weather"]


def test_naive_view_shows_what_arrived_before_the_call_was_recognised() -> None:
    view = observe_stream(get_format("xml"), TIMED, "naive", TOOLS)
    assert view.displayed == "Hi <tool_call>" + CALL + " bye"
    assert view.stream_leak
    assert view.leaked_chars == len("<tool_call>" + CALL)
    assert view.holdback_ms == 0.0
    assert (view.first_call_byte_ms, view.call_complete_ms) == (10.0, 30.0)


def test_a_reply_without_a_call_has_no_call_timings() -> None:
    view = observe_stream(get_format("xml"), [TimedChunk(5.0, "Hello"), TimedChunk(9.0, "!")])
    assert view.displayed == "Hello!"
    assert (view.first_call_byte_ms, view.call_complete_ms, view.stream_leak) == (None, None, False)
    assert view.result.status == "no_call"


def test_an_empty_stream() -> None:
    view = observe_stream(get_format("react"), [])
    assert (view.displayed, view.stream_leak, view.holdback_ms) == ("", False, 0.0)
    assert view.result == get_format("react").parse("")


class _Plain(Xml):
    """A format that declares no stream syntax (a plugin that has not caught up)."""

    stream: ClassVar[StreamSyntax] = EMPTY

    def stream_syntax(self) -> StreamSyntax:
        return EMPTY


def test_a_format_without_a_syntax_gets_the_generic_reader() -> None:
    fmt = _Plain()
    view = observe_stream(fmt, TIMED, "careful", TOOLS)
    assert view.displayed == "".join(c.text for c in TIMED)
    assert view.stream_leak  # it could not hold anything back: the call showed
    assert view.first_call_byte_ms == view.call_complete_ms == 45.0  # known at the end only
    assert view.result == fmt.parse(view.displayed, TOOLS)


def test_a_fallback_holds_back_both_parts_openers() -> None:
    syntax = get_format("native|xml").stream_syntax()
    assert set(get_format("native").stream.regions) <= set(syntax.regions)
    assert set(get_format("xml").stream.regions) <= set(syntax.regions)


def test_the_hold_back_is_bounded() -> None:
    fmt = get_format("prompt-json")
    reader = fmt.reader()
    text = "{" + " " * 5000 + "}"
    shown = []
    for ch in text:
        shown.extend(e.text for e in reader.feed(ch) if e.kind == "text")
        assert reader.held <= fmt.stream.max_hold
    shown.extend(e.text for e in reader.close() if e.kind == "text")
    assert "".join(shown) == text and reader.result.status == "no_call"


def test_early_calls_are_parsed_only_on_request() -> None:
    reply = f"Hi <tool_call>{CALL}</tool_call>"
    fmt = get_format("xml")
    (early,) = [e for e in read_all(fmt.reader(TOOLS), [reply]) if e.kind == "call_complete"]
    (late,) = [
        e
        for e in read_all(fmt.reader(TOOLS, early_calls=False), [reply])
        if e.kind == "call_complete"
    ]
    assert [c.name for c in early.calls] == ["get_weather"]
    assert late.calls == () and late.text == early.text


# (pattern, characters a match can begin with; None: too broad for a fast path)
FIRSTS = [
    ("<tool_call>", {"<"}),
    (r"\{\s{0,16}\"tool\"", {"{"}),
    (r"^[ \t]{0,16}Action:", {"\n"}),  # only at a line start: the newline sends it
    (r"(?=^[ \t]{0,16}Thought:)", {"\n"}),
    ("<｜tool▁sep｜>|x", {"<", "x"}),
    (r"\w+", None),
    (r"[^<]", None),
]


@pytest.mark.parametrize(("pattern", "chars"), FIRSTS, ids=[f[0] for f in FIRSTS])
def test_first_chars(pattern: str, chars: set[str] | None) -> None:
    got = first_chars(pattern)
    assert (None if got is None else set(got.chars)) == chars


def test_result_before_close_and_feed_after_close() -> None:
    reader = get_format("xml").reader()
    reader.feed("hi")
    with pytest.raises(RuntimeError, match="after close"):
        _ = reader.result
    reader.close()
    assert reader.feed("more") == [] and reader.close() == []
    assert reader.result.content == "hi"


class _CountingSearch:
    """An opener pattern that counts its searches (the reader's pattern engine calls)."""

    def __init__(self, compiled: Any) -> None:
        self.inner, self.searches = compiled, 0
        self.pattern = compiled.pattern

    def search(self, *args: Any, **kwargs: Any) -> Any:
        self.searches += 1
        return self.inner.search(*args, **kwargs)

    def match(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.match(*args, **kwargs)


def _counted_read(fmt: Any, chunks: Iterable[str]) -> tuple[int, list[Any], MarkerReader]:
    """Feed ``chunks`` to ``fmt``'s marker reader and close it, counting the opener's
    searches: (searches, every event, the reader)."""
    reader = MarkerReader(fmt, None, fmt.stream_syntax())
    counting = _CountingSearch(reader._open)
    reader._open = counting  # type: ignore[assignment]
    events = [e for c in chunks for e in reader.feed(c)] + reader.close()
    return counting.searches, events, reader


# (format, an opener that almost forms, repeated)
NEAR_OPENERS = [
    ("xml", "<tool_ca"),
    ("prompt-json", '{ "too'),
    ("react", "\nActio"),
    ("pythonic", "[abc "),
    ("harmony", "<|chan"),
]


@pytest.mark.parametrize(("spec", "unit"), NEAR_OPENERS, ids=[n[0] for n in NEAR_OPENERS])
def test_a_held_tail_seen_before_is_held_without_a_search(spec: str, unit: str) -> None:
    """One character at a time, an opener that almost forms again and again: once a
    (context, held tail) was searched, growing into it again takes no search (the hostile
    case of the 1 MB benchmark); what is shown and the result do not change."""
    fmt = get_format(spec)
    text = unit * 200
    searches, events, reader = _counted_read(fmt, text)
    assert searches <= len(text) // 2  # without remembered holds: one a character
    assert "".join(e.text for e in events if e.kind == "text") == text
    assert reader.result == fmt.parse(text)


@pytest.mark.parametrize(
    ("spec", "first", "then"),
    [
        ("react", "Ok.\nActio", "Ok. Actio"),  # the same tail, not at a line start
        ("xml", "a <tool_ca", "a <tool_call>"),
        ("prompt-json", 'x {"too', 'x {"tool":'),
    ],
)
def test_held_tails_remembered_by_one_reader_do_not_mislead_another(
    spec: str, first: str, then: str
) -> None:
    """The remembered holds are shared by the readers of a format and keyed by the held
    tail and its context: a second reply, fed one character at a time, gets exactly the
    events a reader with nothing remembered gives it."""
    fmt = get_format(spec)

    def events(text: str) -> list[Event]:
        reader = fmt.reader()
        return [e for ch in text for e in reader.feed(ch)] + reader.close()

    holds_of(fmt.reader()._open)[0].clear()  # type: ignore[attr-defined]
    fresh = events(then)
    events(first)
    events(first)
    assert events(then) == fresh


# (chunks fed to one bracket counter, what each scan returns)
BRACKETS = [
    (['{"a": [1, 2]}'], [13]),
    (['{"a": "}"', "}"], [-1, 1]),
    (['{"a\\', '"}"}'], [-1, 4]),  # an escape split across chunks
    (["{'a': \"'\"", "}"], [-1, 1]),  # the other quote kind inside a string
    (["f(x=')'", ", y=[1])"], [-1, 8]),
    (["{", '"\\\\"', "}"], [-1, -1, 1]),  # an escaped backslash ends before the quote
    (["{", "", "}"], [-1, -1, 1]),
    (["[[[[", "]]]", "]]"], [-1, -1, 1]),  # the balancing closer inside a run
    (["{[(", ")]}x}"], [-1, 3]),
    (["]]"], [1]),  # nothing open: the first closer ends it, as one at a time
    (["[[ ]]]]"], [5]),
    (["[[", "'a[[' ]", "]"], [-1, -1, 1]),
]


@pytest.mark.parametrize(("chunks", "returns"), BRACKETS, ids=[repr(b[0]) for b in BRACKETS])
def test_brackets_across_chunks(chunks: list[str], returns: list[int]) -> None:
    counter = Brackets()
    assert [counter.scan(c) for c in chunks] == returns


# (opener pattern, whether a match never depends on the text before it)
CONTEXT_FREE = [
    ("<tool_call>|<response>", True),
    (r"\{\s{0,16}[\"'](?:tool|name)[\"']\s{0,16}:", True),
    (r"(?P<r0>a(?=b))", True),
    (r"^[ \t]{0,16}Action:", False),
    (r"(?<=\n)Action:", False),
    (r"(?<!x)a", False),
    (r"\bAction", False),
    (r"(?w)Action", False),
    (r"[^<]x", False),  # a negated class: kept on the safe side
]


@pytest.mark.parametrize(("pattern", "free"), CONTEXT_FREE, ids=[c[0] for c in CONTEXT_FREE])
def test_context_free(pattern: str, free: bool) -> None:
    assert context_free(pattern) is free


def test_a_near_opener_in_changing_context_is_held_without_a_search() -> None:
    """xml's openers never look behind: a held tail seen before after other text is
    still known (one character at a time, ``<tool_ca`` after ever different words)."""
    fmt = get_format("xml")
    text = "".join(f"w{i}<tool_ca" for i in range(300))
    searches, events, _ = _counted_read(fmt, text)
    assert searches <= len(text) // 2
    assert "".join(e.text for e in events if e.kind == "text") == text


# (text, closer, length of the longest end of the text that begins the closer)
OVERLAPS = [
    ("abc </tool", "</tool_call>", 6),
    ("abc", "</tool_call>", 0),
    ("<", "</tool_call>", 1),
    ("x </tool_call", "</tool_call>", 11),
    ("aa", "aab", 2),
    ("aaa", "aab", 2),
    ("abab", "ababx", 4),
    ("", "</x>", 0),
]


@pytest.mark.parametrize(("text", "closer", "want"), OVERLAPS)
def test_overlap(text: str, closer: str, want: int) -> None:
    assert overlap(text, closer) == want


# (opener pattern, characters of context a match there can depend on)
CONTEXT_WIDTH = [
    ("<tool_call>|<response>", 0),
    (r"^[ \t]{0,16}Action(?: Input)?[ \t]{0,16}:", 1),
    (r"(?P<r0>^Action:)|(?P<r1><tool_call>)", 1),
    (r"[^<]x", 1),  # a negated class looks at its own character only
    (r"(?<=\n)Action:", 8),
    (r"^\bAction", 8),
    (r"(?w)^Action", 8),
]


@pytest.mark.parametrize(("pattern", "width"), CONTEXT_WIDTH, ids=[c[0] for c in CONTEXT_WIDTH])
def test_context_width(pattern: str, width: int) -> None:
    assert context_width(pattern, 8) == width


# (pattern, characters whose presence sends a chunk that begins a line to the engine)
LINE_FIRSTS: list[tuple[str, set[str] | None]] = [
    (r"^[ \t]{0,16}Action:", {"\n", " ", "\t", "A"}),
    (r"^Action:|<tool_call>", {"\n", "A", "<"}),
    (r"<tool_call>", {"<"}),
    (r"x*", None),  # matches the empty string anywhere: no fast path
]


@pytest.mark.parametrize(("pattern", "chars"), LINE_FIRSTS, ids=[c[0] for c in LINE_FIRSTS])
def test_line_first_chars(pattern: str, chars: set[str] | None) -> None:
    got = line_first_chars(pattern)
    assert (None if got is None else set(got.chars)) == chars


def test_a_line_that_cannot_begin_an_opener_is_shown_without_a_search() -> None:
    """react's opener is anchored at line starts: after a newline, a chunk with none of
    the characters that begin it there (``Thou``) is shown at once, as a search shows it."""
    fmt = get_format("react")
    text = "Thought: ab\n" * 60  # each newline ends a chunk
    chunks = [text[i : i + 4] for i in range(0, len(text), 4)]
    searches, events, _ = _counted_read(fmt, chunks)
    assert searches <= len(chunks) // 2  # without: every chunk after a newline
    assert [(e.kind, e.text) for e in events[:-1]] == [("text", c) for c in chunks]


def test_a_line_anchored_near_opener_after_changing_text_is_held_without_a_search() -> None:
    """react's opener looks behind only for a newline: a held ``Actio`` is remembered
    with that one character, so after ever different numbers it is still known (one
    character at a time)."""
    fmt = get_format("react")
    text = "".join(f"{i}\nActio" for i in range(300))
    searches, events, reader = _counted_read(fmt, text)
    assert searches <= len(text) // 2
    assert "".join(e.text for e in events if e.kind == "text") == text
    assert reader.result == fmt.parse(text)


def test_an_opener_that_never_looks_behind_reads_no_context() -> None:
    """xml's openers are context free: a search after chunks that went by the fast path
    does not read the text before them again."""
    fmt = get_format("xml")
    text = "Some prose, then <tool_ca and <b> more prose.\n" * 30
    reader = fmt.reader()
    reads = 0
    tail_before = reader._tail_before  # type: ignore[attr-defined]

    def counted(*args: Any) -> str:
        nonlocal reads
        reads += 1
        return str(tail_before(*args))

    reader._tail_before = counted  # type: ignore[attr-defined]
    events = [e for ch in text for e in reader.feed(ch)] + reader.close()
    assert reads == 0
    assert "".join(e.text for e in events if e.kind == "text") == text


def test_an_apostrophe_in_a_json_string_is_kept_without_the_bracket_counter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Inside a double-quoted string only ``"`` and a backslash can change the count: a
    chunk holding an apostrophe there goes by the fast path (one character at a time)."""
    fmt = get_format("prompt-json")
    text = 'Ok {"tool": "get_weather", "arguments": {"city": "it\'s Paris, isn\'t it"}} bye'
    scanned: list[str] = []
    scan = Brackets.scan

    def counted(self: Brackets, chunk: str) -> int:
        scanned.append(chunk)
        return scan(self, chunk)

    monkeypatch.setattr(Brackets, "scan", counted)
    reader = fmt.reader()
    events = [e for ch in text for e in reader.feed(ch)] + reader.close()
    assert "'" not in scanned and '"' in scanned
    assert [e.kind for e in events] == ["text"] * 3 + ["call_started", "call_complete"] + [
        "text"
    ] * 4 + ["final"]
    assert reader.result == fmt.parse(text)


def test_inside_a_react_call_a_line_that_cannot_end_it_is_kept_without_a_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """react's call ends before ``Thought:`` at a line start: after a newline, a chunk
    that cannot begin that there (``Obs:``) is kept in the call without the engine."""
    fmt = get_format("react")
    searches = 0
    closers = reader_regions.compiled

    class Counted:
        def __init__(self, pattern: str) -> None:
            self.inner = closers(pattern)

        def search(self, *args: Any, **kwargs: Any) -> Any:
            nonlocal searches
            searches += 1
            return self.inner.search(*args, **kwargs)

    monkeypatch.setattr(reader_regions, "compiled", Counted)
    text = "Action: get\n" + "Obs: abcdefghijklmnopqrstuvwxyz\n" * 40 + "Thought: ok\n"
    chunks = [text[i : i + 4] for i in range(0, len(text), 4)]
    reader = fmt.reader()
    events = [e for c in chunks for e in reader.feed(c)] + reader.close()
    assert searches <= len(chunks) * 3 // 16  # without: each newline's chunk and the next
    assert [e.kind for e in events if e.kind != "text"] == [
        "call_started",
        "call_complete",
        "final",
    ]
    assert events[1].text + events[2].text[len(events[1].text) :] == text[: -len("Thought: ok\n")]
    assert reader.result == fmt.parse(text)


# (react's opener or closer, a chunk that begins no line, whether it needs a search)
AFTER_NEWLINE = [
    ("opener", "ok\nThou", False),
    ("opener", "ok\nAct", True),
    ("opener", "ok\n Act", True),  # indented
    ("opener", "ok\n", True),  # the next chunk begins a line
    ("opener", "\n\nX", True),
    ("opener", "Action", False),  # not at a line start
    ("closer", "x\nObs", False),
    ("closer", "x\nThought", True),
    ("closer", "x\nFinal", True),
]


def _react_pattern(which: str) -> str:
    """react's region opener or closer, the patterns the line-start prefilters are built from."""
    region = get_format("react").stream_syntax().regions[0]
    return region.open if which == "opener" else region.close_pattern


@pytest.mark.parametrize(("which", "chunk", "search"), AFTER_NEWLINE)
def test_after_newline_firsts(which: str, chunk: str, search: bool) -> None:
    got = after_newline_firsts(_react_pattern(which))
    assert got is not None
    assert (got.pattern.search(chunk) is not None) is search


def test_a_newline_followed_by_what_cannot_begin_a_line_needs_no_search() -> None:
    """react, chunks of four: a chunk holding a newline goes to the engine only if the
    next character could begin ``Action`` at the line start (or the newline ends it)."""
    fmt = get_format("react")
    text = "Thought: abc\nThought: abc\nThought: abc\n" * 10  # newlines mid-chunk
    chunks = [text[i : i + 4] for i in range(0, len(text), 4)]
    searches, events, reader = _counted_read(fmt, chunks)
    assert searches <= len(chunks) // 8
    assert [(e.kind, e.text) for e in events[:-1]] == [("text", c) for c in chunks]
    assert reader.result == fmt.parse(text)


# (react's opener or closer, a chunk that begins a line, whether it needs a search)
LINE_START = [
    ("opener", "The ", False),  # a space further on begins no line
    ("opener", " Act", True),  # indentation before Action
    ("opener", "Act", True),
    ("opener", "Thou", False),
    ("opener", "ok\nA", True),
    ("closer", "Obs ", False),
    ("closer", "Thou", True),
    ("closer", "  Fi", True),
]


@pytest.mark.parametrize(("which", "chunk", "search"), LINE_START)
def test_line_start_firsts(which: str, chunk: str, search: bool) -> None:
    got = line_start_firsts(_react_pattern(which))
    assert got is not None
    assert (got.pattern.search(chunk) is not None) is search
