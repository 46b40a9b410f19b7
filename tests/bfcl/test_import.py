"""``toolbench import bfcl`` on a small BFCL-shaped fixture (tests/data/bfcl/fixture).

The fixture has one or two entries per category (BFCL type names, a dotted function name,
a nested dict answer, a list of dicts, a system message, an irrelevance question without
functions, an answer naming a parameter the function lacks) plus a category that is
skipped; the bad inputs are built per test.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from toolbench.bfcl.convert import BadInput, json_schema, scenario_id
from toolbench.bfcl.importer import import_bfcl
from toolbench.bfcl.verdict import verdict
from toolbench.formats.base import ModelReply, ParseResult, ToolCall
from toolbench.formats.format_registry import get_format
from toolbench.results import TurnRecord
from toolbench.scenarios.loader import load_scenarios, validate_paths
from toolbench.scoring import score_trial

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "bfcl" / "fixture"


def test_imports_every_category_and_reports_skips(tmp_path: Path) -> None:
    report = import_bfcl(FIXTURE, tmp_path / "out")
    assert report.counts == {
        "irrelevance": 1,
        "live_irrelevance": 2,
        "live_multiple": 1,
        "live_parallel": 1,
        "live_parallel_multiple": 1,
        "live_simple": 1,
        "multiple": 1,
        "parallel": 1,
        "parallel_multiple": 1,
        "simple_python": 2,
    }
    text = report.render()
    assert "skipped category live_relevance (BFCL_v4_live_relevance.json):" in text
    assert "skipped category multi_turn_base (BFCL_v4_multi_turn_base.json):" in text
    assert (
        f"skipped simple_python_2 ({FIXTURE}/BFCL_v4_simple_python.json:3): answer names"
        " parameter 'zone' that 'get_weather' does not have"
    ) in text
    assert validate_paths([tmp_path / "out"]) == []
    by_id = {sc.id: sc for sc in load_scenarios([tmp_path / "out"])}
    assert by_id["simple_python_0"].tools[0].name == "geometry.area_circle"  # as BFCL names it
    assert by_id["parallel_0"].expect.order == "any"
    assert by_id["live_irrelevance_1-0-0"].expect.no_call
    assert by_id["live_simple_0-0-0"].messages[0].role == "system"
    assert "bfcl-live_multiple" in by_id["live_multiple_0-0-0"].tags


def test_same_input_gives_byte_identical_output(tmp_path: Path) -> None:
    import_bfcl(FIXTURE, tmp_path / "a")
    import_bfcl(FIXTURE, tmp_path / "b")
    a = {p.name: p.read_bytes() for p in sorted((tmp_path / "a").iterdir())}
    b = {p.name: p.read_bytes() for p in sorted((tmp_path / "b").iterdir())}
    assert a == b and len(a) == 10


def test_v3_layout(tmp_path: Path) -> None:
    src = tmp_path / "v3"
    (src / "possible_answer").mkdir(parents=True)
    shutil.copy(FIXTURE / "BFCL_v4_simple_python.json", src / "BFCL_v3_simple.json")
    shutil.copy(
        FIXTURE / "possible_answer" / "BFCL_v4_simple_python.json",
        src / "possible_answer" / "BFCL_v3_simple.json",
    )
    report = import_bfcl(src, tmp_path / "out")
    assert report.counts == {"simple": 2}


# (name, what the imported scenario should say about BFCL-shaped calls)
VERDICTS = [
    ("simple_python_0", [{"geometry.area_circle": {"radius": 5}}], True),  # int for float
    ("simple_python_0", [{"geometry.area_circle": {"radius": 5.0, "units": "M."}}], True),
    ("simple_python_0", [{"geometry.area_circle": {"radius": 5.0, "units": "km"}}], False),
    # the provider-safe spelling is native's to map back, not a name the scenario offers
    ("simple_python_0", [{"geometry_area_circle": {"radius": 5.0}}], False),
    ("simple_python_1", [{"plot.point": {"xy": [1, 2], "label": "a"}}], True),
    # integer items given as floats: BFCL's type_error:nested (bfcl-eval 2026.3.23 says so)
    ("simple_python_1", [{"plot.point": {"xy": [1.0, 2], "label": "a"}}], False),
    ("simple_python_1", [{"plot.point": {"xy": [1.0, 2.0], "label": "a"}}], False),
    ("simple_python_1", [{"plot.point": {"xy": [True, 2], "label": "a"}}], False),
    ("simple_python_1", [{"plot.point": {"xy": [1, 2], "label": 1}}], False),  # any = str
    ("simple_python_1", [{"plot.point": {"xy": [1, 2], "style": {"color": "Red"}}}], False),
    (
        "simple_python_1",
        [{"plot.point": {"xy": [1, 2], "label": "A", "style": {"color": "Red"}}}],
        True,
    ),
    (
        "simple_python_1",
        [{"plot.point": {"xy": [1, 2], "label": "A", "style": {"color": "red", "x": 1}}}],
        False,
    ),
    ("multiple_0", [{"get_weather": {"city": "rome"}}], True),
    ("multiple_0", [{"get_weather": {"city": "Rome", "days": 3.0}}], False),  # not an int
    ("parallel_0", [{"get_weather": {"city": "Oslo"}}, {"get_weather": {"city": "Rome"}}], True),
    ("live_multiple_0-0-0", [{"add_people": {"people": [{"name": "ann", "age": 30}]}}], True),
    ("live_multiple_0-0-0", [{"add_people": {"people": [{"name": "Ann"}]}}], False),
    ("live_irrelevance_0-0-0", [], True),
    ("live_irrelevance_0-0-0", [{"get_weather": {"city": "x"}}], False),
]


@pytest.mark.parametrize(("sid", "calls", "ok"), VERDICTS)
def test_imported_matchers_judge_like_bfcl(
    tmp_path_factory: pytest.TempPathFactory, sid: str, calls: list[dict[str, object]], ok: bool
) -> None:
    out = tmp_path_factory.getbasetemp() / "verdict-import"
    if not out.exists():
        import_bfcl(FIXTURE, out)
    sc = next(s for s in load_scenarios([out]) if s.id == sid)
    assert verdict(sc, calls) is ok


def test_bfcl_types_become_json_schema() -> None:
    raw = {
        "type": "dict",
        "properties": {
            "a": {"type": "float"},
            "b": {"type": "tuple", "items": {"type": "float"}},
            "c": {"type": "any", "description": "x"},
            "d": {"type": "dict", "properties": {"e": {"type": "float", "required": True}}},
        },
    }
    assert json_schema(raw) == {
        "type": "object",
        "properties": {
            "a": {"type": "number"},
            "b": {"type": "array", "items": {"type": "number"}},
            "c": {"description": "x"},
            "d": {"type": "object", "properties": {"e": {"type": "number"}}},
        },
    }


@pytest.mark.parametrize(
    ("raw", "want"),
    [("simple_0", "simple_0"), ("a b/c", "a_b_c"), ("_x", "bfcl__x"), ("x" * 200, "x" * 128)],
)
def test_scenario_ids_fit_the_id_rule(raw: str, want: str) -> None:
    assert scenario_id(raw) == want


def _layout(tmp_path: Path, question: str, answer: str | None) -> Path:
    src = tmp_path / "src"
    (src / "possible_answer").mkdir(parents=True)
    (src / "BFCL_v4_simple_python.json").write_text(question)
    if answer is not None:
        (src / "possible_answer" / "BFCL_v4_simple_python.json").write_text(answer)
    return src


GOOD_Q = json.dumps(
    {
        "id": "simple_python_0",
        "question": [[{"role": "user", "content": "hi"}]],
        "function": [{"name": "f", "parameters": {"type": "dict", "properties": {}}}],
    }
)
GOOD_A = json.dumps({"id": "simple_python_0", "ground_truth": [{"f": {}}]})

BAD = {
    "malformed-question": (
        GOOD_Q + "\n{not json\n",
        GOOD_A,
        "{src}/BFCL_v4_simple_python.json:2: malformed JSON line: Expecting property name"
        " enclosed in double quotes",
    ),
    "malformed-answer": (
        GOOD_Q,
        "[1]\n",
        "{src}/possible_answer/BFCL_v4_simple_python.json:1: expected a JSON object with a"
        " string 'id'",
    ),
    "unknown-function": (
        GOOD_Q,
        GOOD_A.replace('{"f"', '{"g"'),
        "{src}/possible_answer/BFCL_v4_simple_python.json:1: possible answer of"
        " 'simple_python_0' names function 'g', which the question does not offer",
    ),
    "no-functions": (
        GOOD_Q.replace(
            '"function": [{"name": "f", "parameters": {"type": "dict", "properties": {}}}]',
            '"function": []',
        ),
        GOOD_A,
        "{src}/BFCL_v4_simple_python.json:1: question 'simple_python_0' has no functions",
    ),
    "no-answer-file": (
        GOOD_Q,
        None,
        "{src}/BFCL_v4_simple_python.json: no possible_answer/BFCL_v4_simple_python.json beside it",
    ),
}


def test_hostile_shapes_are_skipped_not_crashes(tmp_path: Path) -> None:
    rows = [
        {"id": "simple_python_0", "question": "x", "function": [{"name": "f"}]},
        {"id": "simple_python_1", "question": [[{"role": "user", "content": 1}]],
         "function": [{"name": "f"}]},
        {"id": "simple_python_2", "question": [[{"role": "user", "content": "x"}]],
         "function": [{"name": "f", "parameters": [1]}]},
        {"id": "simple_python_3", "question": [[{"role": "tool", "content": "x"}]],
         "function": [{"name": "f"}]},
        {"id": "simple_python_4", "question": [[{"role": "user", "content": "x"}]],
         "function": [{"name": "f", "parameters": {"type": "dict", "properties": {
             "a": {"type": "weird"}}}}]},
    ]  # fmt: skip
    answers = [
        {"id": r["id"], "ground_truth": [{"f": {"a": [1]} if i in (2, 4) else {}}]}
        for i, r in enumerate(rows)
    ]
    src = _layout(
        tmp_path,
        "".join(json.dumps(r) + "\n" for r in rows),
        "".join(json.dumps(a) + "\n" for a in answers),
    )
    report = import_bfcl(src, tmp_path / "out")
    assert report.counts == {"simple_python": 0}
    reasons = [line.split("): ", 1)[1] for line in report.skipped]
    assert reasons == [
        "not a single-turn question",
        "a message without text content",
        "function 'f' has no parameter schema object",
        "Input should be 'system', 'user' or 'assistant'",
        "parameter 'a' has BFCL type 'weird', which the checker refuses",
    ]


def test_duplicate_ids_and_categories_and_oversized_entries_are_skipped(tmp_path: Path) -> None:
    q = json.loads(GOOD_Q)
    big = {
        **q,
        "id": "simple_python_big",
        "question": [[{"role": "user", "content": "x" * 1_100_000}]],
    }
    rows = [q, {**q, "id": "simple python 0"}, {**q, "id": "simple_python_0"}, big]
    answers = [{"id": r["id"], "ground_truth": [{"f": {}}]} for r in rows]
    src = _layout(
        tmp_path,
        "".join(json.dumps(r) + "\n" for r in rows),
        "".join(json.dumps(a) + "\n" for a in answers),
    )
    for folder in (src, src / "possible_answer"):
        shutil.copy(folder / "BFCL_v4_simple_python.json", folder / "BFCL_v3_simple_python.json")
    report = import_bfcl(src, tmp_path / "out")
    assert report.counts == {"simple_python": 1}
    text = report.render()
    assert "id 'simple_python_0' already used at" in text
    assert "simple_python_big: 1100" in text and "scenario-file limit" in text
    assert (
        "skipped category simple_python (BFCL_v4_simple_python.json): already imported from"
        " BFCL_v3_simple_python.json"
    ) in text
    assert validate_paths([tmp_path / "out"]) == []


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_line_and_writes_nothing(tmp_path: Path, case: str) -> None:
    question, answer, message = BAD[case]
    src = _layout(tmp_path, question, answer)
    with pytest.raises(BadInput) as exc:
        import_bfcl(src, tmp_path / "out")
    assert str(exc.value) == message.format(src=src)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


@pytest.mark.parametrize(
    ("calls", "attempted", "ok"),
    [([], False, True), ([], True, False), ([{"get_weather": {"city": "x"}}], True, False)],
    ids=["abstains", "failed-attempt", "calls"],
)
def test_irrelevance_verdict_is_the_trials_no_call_correct(
    tmp_path_factory: pytest.TempPathFactory,
    calls: list[dict[str, Any]],
    attempted: bool,
    ok: bool,
) -> None:
    """One definition: a reply that tried to call and did not decode fails an irrelevance
    entry in the verdict exactly as in ``score_trial`` (``nocall.decode_failure``)."""
    out = tmp_path_factory.getbasetemp() / "verdict-import"
    if not out.exists():
        import_bfcl(FIXTURE, out)
    sc = next(s for s in load_scenarios([out]) if s.id == "live_irrelevance_0-0-0")
    made = [ToolCall(name=n, arguments=a) for c in calls for n, a in c.items()]
    status = "strict" if made else ("failed" if attempted else "no_call")
    parsed = ParseResult(calls=made, attempted=attempted, status=status)
    record = TurnRecord(request={}, reply=ModelReply(text="x"), parsed=parsed)
    scores = score_trial(sc, get_format("xml"), [record])
    assert verdict(sc, calls, attempted=attempted) is ok
    assert scores.get("no_call_correct") is ok


SHARED_BFCL = Path(__file__).resolve().parents[3] / "shared" / "bfcl"


@pytest.mark.skipif(not SHARED_BFCL.is_dir(), reason="../shared/bfcl is not beside the checkout")
def test_the_whole_bfcl_import_loads(tmp_path: Path) -> None:
    """A file toolbench writes, toolbench reads: every file of the real import passes the
    scenario loader (answer alternatives sharing one object once came out as YAML aliases,
    which the loader refuses), and dotted names come through as BFCL writes them."""
    report = import_bfcl(SHARED_BFCL, tmp_path / "out")
    assert sum(report.counts.values()) > 3000
    assert validate_paths([tmp_path / "out"]) == []
    text = "".join(p.read_text() for p in (tmp_path / "out").iterdir())
    assert "*id0" not in text and "&id0" not in text
    names = {t.name for sc in load_scenarios([tmp_path / "out"]) for t in sc.tools}
    dotted = {n for n in names if "." in n}
    assert len(dotted) > 100 and "math.factorial" in names and "math_factorial" not in names


def test_shared_values_are_written_in_full_not_as_aliases(tmp_path: Path) -> None:
    from toolbench.bfcl.importer import _dump
    from toolbench.scenarios.yamlfile import read_yaml

    shared = ["a", "b"]
    data = [{"any_of": [shared, shared], "x": {"y": shared}}]
    text = _dump(data)
    assert "&" not in text and "*" not in text
    (tmp_path / "s.yaml").write_text(text)
    assert read_yaml(tmp_path / "s.yaml") == data  # the loader refuses aliases
