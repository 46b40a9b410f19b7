"""Split invariance: however a reply is cut into chunks, every reader ends where a whole parse
does, and shows the same text and finds the same calls on the way.

Over the bundled replies (the format tests' parse tables), the committed cassettes' replies,
the conformance corpus (its ``streaming_chunks`` where given; skipped when absent) and
generated marker soup; bytes split inside multi-byte characters through :class:`ByteReader`.
"""

from __future__ import annotations

import itertools

import pytest
from fmt_helpers import TOOLS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stream_corpus import CONFORMANCE, corpus, misplaced, read_all, split_at, stream, trace
from test_properties import FRAGMENTS
from tests.support.byte_reader import ByteReader

from toolbench.formats.format_registry import builtin_format_names, get_format
from toolbench.formats.marker_reader import MarkerReader
from toolbench.formats.observe import DisplayPolicy, observe_stream
from toolbench.formats.reader_plan import holds_of
from toolbench.formats.scanning import Brackets
from toolbench.results import TimedText

SPECS = [*builtin_format_names(), "native|xml", "xml|prompt-json", "prompt-json|react"]
FORMATS = {spec: get_format(spec) for spec in SPECS}
REPLIES = corpus()
CUTS = st.lists(st.integers(min_value=0, max_value=100_000), max_size=24)
soup = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=4), max_size=40).map("".join)


def _check(spec: str, text: str, chunks: list[str]) -> None:
    fmt = FORMATS[spec]
    whole = fmt.parse(text, TOOLS)
    reader = fmt.reader(TOOLS)
    events = read_all(reader, chunks)
    assert reader.result == whole, (spec, chunks)
    assert trace(events) == trace(stream(fmt, text, [text], TOOLS)), (spec, chunks)
    assert events[-1].kind == "final" and events[-1].result == whole
    assert misplaced(events, text) == []


def test_the_corpus_is_there() -> None:
    sources = {r.source.split(":")[0].split(".")[0] for r in REPLIES}
    assert {"test_xml", "test_mistral", "test_harmony"} <= sources
    assert any(r.source.startswith("local_") for r in REPLIES), "no cassette replies read"


@pytest.mark.parametrize("spec", builtin_format_names())
def test_every_reply_fed_one_character_at_a_time_in_its_own_format(spec: str) -> None:
    mine = [r for r in REPLIES if r.fmt == spec]
    if not mine:
        pytest.skip(f"no replies written for {spec}")
    for reply in mine:
        _check(spec, reply.text, list(reply.text))


def test_the_conformance_vectors_own_splits() -> None:
    given_splits = [r for r in REPLIES if r.chunks is not None]
    if not given_splits:
        pytest.skip(f"no conformance corpus with streaming_chunks at {CONFORMANCE}")
    for reply in given_splits:
        assert reply.chunks is not None
        _check(reply.fmt, reply.text, list(reply.chunks))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(min_value=0), spec=st.sampled_from(SPECS), cuts=CUTS)
def test_any_split_of_any_reply_in_any_format(index: int, spec: str, cuts: list[int]) -> None:
    text = REPLIES[index % len(REPLIES)].text
    _check(spec, text, split_at(text, [c % (len(text) + 1) for c in cuts]))


@settings(max_examples=300, deadline=None)
@given(text=soup, spec=st.sampled_from(SPECS), cuts=CUTS)
def test_any_split_of_marker_soup(text: str, spec: str, cuts: list[int]) -> None:
    _check(spec, text, split_at(text, [c % (len(text) + 1) for c in cuts]))


@settings(max_examples=200, deadline=None)
@given(
    index=st.integers(min_value=0),
    extra=soup,
    spec=st.sampled_from(SPECS),
    cuts=CUTS,
)
def test_bytes_split_inside_characters(index: int, extra: str, spec: str, cuts: list[int]) -> None:
    text = REPLIES[index % len(REPLIES)].text + extra + "ü東🙂"
    data = text.encode("utf-8")
    pieces = [data[a:b] for a, b in _bounds(len(data), cuts)]
    fmt = FORMATS[spec]
    reader = ByteReader(fmt.reader(TOOLS))
    events = []
    for piece in pieces:
        events.extend(reader.feed(piece))
    events.extend(reader.close())
    assert reader.result == fmt.parse(text, TOOLS)
    assert trace(events) == trace(stream(fmt, text, [text], TOOLS))
    assert misplaced(events, text) == []


def _bounds(n: int, cuts: list[int]) -> list[tuple[int, int]]:
    points = sorted(c % (n + 1) for c in cuts)
    edges = [0, *points, n]
    return list(itertools.pairwise(edges))


def test_bytes_cut_in_the_middle_of_every_character() -> None:
    text = (
        'Je vérifie.\n<tool_call>{"name": "get_weather", "arguments": {"city": "東京"}}</tool_call>'
    )
    data = text.encode("utf-8")
    fmt = FORMATS["xml"]
    reader = ByteReader(fmt.reader(TOOLS))
    shown: list[str] = []
    for i in range(len(data)):
        shown.extend(e.text for e in reader.feed(data[i : i + 1]) if e.kind == "text")
    shown.extend(e.text for e in reader.close() if e.kind == "text")
    assert "".join(shown) == "Je vérifie.\n"
    assert reader.result.calls[0].arguments == {"city": "東京"}


def _shown_and_held(spec: str, chunks: list[str]) -> list[tuple[str, int]]:
    """After each chunk: the text shown so far and how much is held back."""
    reader = FORMATS[spec].reader(TOOLS)
    shown, out = "", []
    for chunk in chunks:
        shown += "".join(e.text for e in reader.feed(chunk) if e.kind == "text")
        out.append((shown, reader.held))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    index=st.integers(min_value=0),
    extra=soup,
    spec=st.sampled_from(SPECS),
    cuts=st.lists(st.integers(min_value=0, max_value=100_000), max_size=12),
)
def test_what_is_shown_and_held_after_a_prefix_does_not_depend_on_its_split(
    index: int, extra: str, spec: str, cuts: list[int]
) -> None:
    """The display at every point of a stream: after any chunk, a reader has shown and
    holds back exactly what a reader fed the same prefix as one chunk has (the fast
    paths and remembered holds change the work, never the hold-back)."""
    text = REPLIES[index % len(REPLIES)].text + extra
    chunks = split_at(text, [c % (len(text) + 1) for c in cuts])
    prefixes = list(itertools.accumulate(chunks))
    at_once = [_shown_and_held(spec, [p])[0] for p in prefixes]
    assert _shown_and_held(spec, chunks) == at_once, (spec, chunks)
    one_by_one = _shown_and_held(spec, list(text))
    ends = list(itertools.accumulate(map(len, chunks)))
    assert [one_by_one[n - 1] if n else ("", 0) for n in ends] == at_once, spec
    head = text[-240:]  # and at every character of a tail (each prefix fed at once),
    holds_of(FORMATS[spec].reader()._open)[0].clear()  # type: ignore[attr-defined]
    by_char = _shown_and_held(spec, list(head))  # with no held tail remembered yet
    assert by_char == [_shown_and_held(spec, [head[: i + 1]])[0] for i in range(len(head))]


def _brackets_by_character(chunks: list[str]) -> list[int]:
    """The bracket counter's contract, a character at a time (the reference)."""
    depth, quote, escape, out = 0, "", False, []
    for chunk in chunks:
        got = -1
        for i, c in enumerate(chunk):
            if escape:
                escape = False
            elif quote:
                if c == "\\":
                    escape = True
                elif c == quote:
                    quote = ""
            elif c in "\"'":
                quote = c
            elif c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth <= 0:
                    got = i + 1
                    break
        out.append(got)
        if got >= 0:
            break
    return out


@settings(max_examples=400, deadline=None)
@given(
    text=st.text(alphabet="[]{}()\"'\\ab ", max_size=60),
    cuts=st.lists(st.integers(min_value=0, max_value=60), max_size=8),
)
def test_the_bracket_counter_jumps_as_a_character_walk_would_go(text: str, cuts: list[int]) -> None:
    """Runs of brackets are taken in one step; where the count balances does not move."""
    chunks = split_at(text, cuts)
    counter = Brackets()
    got = []
    for chunk in chunks:
        got.append(counter.scan(chunk))
        if got[-1] >= 0:
            break
    assert got == _brackets_by_character(chunks), chunks


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    index=st.integers(min_value=0), spec=st.sampled_from(SPECS), cuts=CUTS,
    policy=st.sampled_from(["careful", "naive"]), soup_text=soup,
)  # fmt: skip
def test_runs_of_fast_chunks_are_observed_as_chunk_by_chunk(
    index: int, spec: str, cuts: list[int], policy: DisplayPolicy, soup_text: str
) -> None:
    """``observe_stream`` feeds runs of chunks that go by the reader's fast path in one
    call (:meth:`MarkerReader.feed_run`): what it reports (displayed text, leaks,
    holdback, call timings, result) is what feeding each chunk by itself reports."""
    reply = REPLIES[index % len(REPLIES)].text
    for pieces in (
        split_at(reply, [c % (len(reply) + 1) for c in cuts]),
        split_at(soup_text, [c % (len(soup_text) + 1) for c in cuts]),
        list(soup_text),  # a character a chunk: the one-character checks
    ):
        timed = [TimedText(1.5 * k, piece) for k, piece in enumerate(pieces)]
        fmt = FORMATS[spec]
        runs = observe_stream(fmt, timed, policy, TOOLS)
        with pytest.MonkeyPatch.context() as mp:
            mp.delattr(MarkerReader, "feed_run")
            one_by_one = observe_stream(fmt, timed, policy, TOOLS)
        assert runs == one_by_one, (spec, pieces)
