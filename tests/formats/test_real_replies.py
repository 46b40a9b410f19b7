"""``pythonic`` on real prompt-mode replies reads what an independent strict reader reads.

The replies are real model outputs copied from public BFCL result files (provenance in
tests/data/real_replies/README.md); the strict reader and the comparison are those of
``benchmarks/bench_real_replies.py`` (its docstring states the reader's one rule), so the
test and the benchmark measure the same thing.
"""

from __future__ import annotations

from benchmarks.bench_real_replies import Row, read_all

ROWS: list[Row] = read_all()


def _show(rows: list[Row]) -> list[tuple[str, str, str, str]]:
    return [(r.rec["model"], r.rec["id"], r.status, r.rec["reply"][:120]) for r in rows[:10]]


def test_the_whole_corpus_is_read() -> None:
    # every committed line is a reply of a known model with the tools it was offered
    assert len(ROWS) >= 850
    assert len({r.rec["model"] for r in ROWS}) >= 10
    assert all(r.rec["tools"] for r in ROWS)
    # the corpus holds what the rule is about: strict lists with dotted callee names
    assert sum(1 for r in ROWS if r.strict and any("." in name for name, _ in r.strict)) >= 100


def test_pythonic_agrees_with_the_strict_reader_on_995_per_mille() -> None:
    disagree = [r for r in ROWS if not r.agree]
    assert (len(ROWS) - len(disagree)) / len(ROWS) >= 0.995, _show(disagree)


def test_no_reply_that_calls_is_read_as_no_call() -> None:
    missed = [r for r in ROWS if r.strict and r.status == "no_call"]
    assert not missed, _show(missed)
    assert not [r for r in ROWS if r.silent_miss]
