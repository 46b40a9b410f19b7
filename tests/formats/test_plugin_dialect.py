"""The design test of the format registry (issue 23): a dialect that is only a module, a
test table and one entry point is picked up by every list that used to be kept by hand:
``formats list``, ``formats detect``, native dialect leakage, the conformance run, the
docs table, and the shared tests that iterate the formats' declared test cases (the
contract test, the stream corpus and its split-invariance check). The entry point is
added with the registry's ``installing``, as an installed plugin distribution would add
it."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import EntryPoint

import pytest
import test_conformance
import test_format_contract
import toy_dialect
from declared import contract, declaring
from stream_corpus import declared_replies, misplaced, split_at, stream, trace
from typer.testing import CliRunner

from toolbench.cli.app import app
from toolbench.formats import format_registry as registry
from toolbench.formats import formats_doc as table
from toolbench.formats.format_registry import ENTRY_POINT_GROUP, get_format
from toolbench.formats.native import dialect_in


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with registry.FORMATS.installing(EntryPoint("toy", "toy_dialect:Toy", ENTRY_POINT_GROUP)):
        yield


@pytest.mark.parametrize(("reply", "calls", "content"), [c[1:] for c in toy_dialect.CASES])
def test_its_table(toy: None, reply: str, calls: list[object], content: str) -> None:
    got = get_format("toy").parse(reply)
    assert ([(c.name, c.arguments) for c in got.calls], got.content) == (calls, content)


def test_formats_list(toy: None) -> None:
    out = CliRunner().invoke(app, ["formats", "list"]).output
    # the name column is as wide as the longest name: reason-then-call's
    assert "\ntoy               A test-only dialect: <<CALL>>name {json}<<END>>.\n" in out


def test_formats_detect(toy: None) -> None:
    out = CliRunner().invoke(app, ["formats", "detect", "acme/Toy-7B"]).output
    assert out == "acme/Toy-7B  toy  (name matches 'Toy': Toy models write <<CALL>> blocks)\n"


def test_native_dialect_leakage(toy: None) -> None:
    found = dialect_in('Sure. <<CALL>>search {"q": "x"}<<END>>')
    assert found is not None and (found[0].name, found[1]) == ("toy", "<<CALL>>")


def test_conformance_run(toy: None) -> None:
    assert ("toy", "toy") in test_conformance._families()
    agree, report = test_conformance._report("toy", toy_dialect.VECTORS, "toy")
    assert agree == len(toy_dialect.VECTORS), report


def test_docs_table(toy: None) -> None:
    rows = [r for r in table.render().splitlines() if r.startswith("| `toy` |")]
    assert rows == [
        "| `toy` | A test-only dialect: &lt;&lt;CALL>>name {json}&lt;&lt;END>>. | `toy` "
        "| `<<CALL>>` | `toy` | yes |"
    ]


def test_gone_with_its_entry_point() -> None:
    """Without the entry point nothing of it is left (the fixture's undo reloads)."""
    assert "toy" not in registry.format_names()
    assert dialect_in("<<CALL>>search {}<<END>>") is None


def test_the_contract_test(toy: None) -> None:
    assert contract("toy") == toy_dialect.CONTRACT
    test_format_contract.check_contract("toy")


def test_the_stream_corpus_and_its_split_invariance(toy: None) -> None:
    """Its declared table joins the corpus the stream tests read, and each reply read at
    every split (one character at a time, and every two-piece cut) ends where a whole
    parse does, showing the same text on the way."""
    assert "toy" in declaring()
    mine = [r for r in declared_replies() if r.fmt == "toy"]
    assert [r.source for r in mine] == [
        f"toy_dialect.CASES:{c[0]}" for c in toy_dialect.CASES
    ]  # fmt: skip
    fmt = get_format("toy")
    for reply in mine:
        whole = stream(fmt, reply.text, [reply.text])
        for chunks in [list(reply.text)] + [
            split_at(reply.text, [i]) for i in range(len(reply.text) + 1)
        ]:
            events = stream(fmt, reply.text, chunks)
            assert events[-1].kind == "final" and events[-1].result == fmt.parse(reply.text)
            assert trace(events) == trace(whole), (reply.source, chunks)
            assert misplaced(events, reply.text) == []
