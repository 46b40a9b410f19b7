"""The bundled suite's themes (issue 12): each theme has its scenarios, each tag means
what it says, and every expectation can be met by some reply (no contradictions)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from tests.scenarios.suite_samples import regex_sample, sample_call, sample_round

from toolbench.environments.mcp_tools import recorded_server_tools
from toolbench.scenarios.loader import bundled_dir, load_scenarios, tag_counts
from toolbench.scenarios.model import ArgMatcher, Scenario
from toolbench.scenarios.script import tool_results
from toolbench.scoring.call_match import match_round
from toolbench.scoring.matchers import may_be_missing

ROOT = Path(__file__).resolve().parents[2]
with contextlib.chdir(ROOT):  # its toolbench.toml names the MCP servers (mcp.yaml)
    SUITE = recorded_server_tools(load_scenarios([bundled_dir()]), ROOT / "cassettes")
EXPECTED_REPLAY = ROOT / "tests" / "data" / "expected_replay.json"


def _args(sc: Scenario) -> list[dict[str, Any]]:
    return [sample_call(sc, c).arguments for r in sc.expect.expected_rounds() for c in r.calls]


def _values(sc: Scenario) -> list[Any]:
    return [v for args in _args(sc) for v in args.values()]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


def _matchers(sc: Scenario) -> list[ArgMatcher]:
    return [m for r in sc.expect.expected_rounds() for c in r.calls for m in c.arguments.values()]


def _is_error_round(sc: Scenario) -> bool:
    rounds = sc.expect.rounds or []
    errors = [
        i for i, r in enumerate(rounds)
        for c in r.calls if isinstance(c.result, dict) and "error" in c.result
    ]  # fmt: skip
    return bool(errors) and sc.expect.final_answer is not None


def _several_right(m: ArgMatcher) -> bool:
    given = [v for v in m.any_of or [] if v != ""]
    return len(given) >= 2 or m.regex is not None or m.alternatives is not None


def _large(sc: Scenario) -> bool:
    size = len(json.dumps(_args(sc), ensure_ascii=False))
    longest_list = max((len(v) for v in _values(sc) if isinstance(v, list)), default=0)
    most_calls = max((len(r.calls) for r in sc.expect.expected_rounds()), default=0)
    return size >= 1000 or longest_list >= 10 or most_calls >= 10


def _optional(sc: Scenario) -> bool:
    for r in sc.expect.expected_rounds():
        for c in r.calls:
            tool = sc.tool(c.name)
            required = set(tool.parameters.get("required", [])) if tool else set()
            if any(may_be_missing(m) or n not in required for n, m in c.arguments.items()):
                return True
    return False


Check = Callable[[Scenario], bool]
THEMES: dict[str, tuple[int, Check | None]] = {
    # tag: (at least this many scenarios, what every scenario with the tag must show)
    "reasoning": (8, None),  # test_perfect_model: the same score after a <think> block
    "tool-error": (8, _is_error_round),
    "long-conversation": (8, lambda sc: len(sc.messages) + 2 * len(sc.expect.rounds or []) >= 6),
    "nested": (8, lambda sc: any(isinstance(v, dict | list) for v in _values(sc))),
    "arrays": (8, lambda sc: any(isinstance(v, list) for v in _values(sc))),
    "unicode": (8, lambda sc: any(not s.isascii() for v in _values(sc) for s in _strings(v))
                or (sc.expect.kind == "no_call" and not sc.messages[-1].content.isascii())),
    "escaping": (5, lambda sc: any(
        ch in s for v in _values(sc) for s in _strings(v) for ch in "\"'\\\n\t<>{}")),
    "large-args": (4, _large),
    "tools-30plus": (8, lambda sc: len(sc.tools) >= 30),
    "ambiguous": (8, lambda sc: any(_several_right(m) for m in _matchers(sc))),
    "prose": (6, None),  # prose is what the model adds; the calls are judged as without it
    "irrelevance": (10, lambda sc: sc.expect.kind == "no_call"),
    "parallel": (10, lambda sc: any(len(r.calls) >= 2 for r in sc.expect.expected_rounds())),
    "optional": (15, _optional),
    "multi-turn": (12, lambda sc: sc.expect.kind == "multi_turn"),
}  # fmt: skip


def test_the_suite_holds_120_scenarios_90_of_them_new() -> None:
    assert len(SUITE) >= 120
    assert sum("recorded" not in sc.tags for sc in SUITE) >= 90
    assert all(sc.tags for sc in SUITE)


def test_ids_are_unique_across_the_whole_tree() -> None:
    everything = load_scenarios(
        [bundled_dir(), *(p for p in bundled_dir().iterdir() if p.is_dir() and p.name != "tools")]
    )
    ids = [sc.id for sc in everything]
    assert len(ids) == len(set(ids))
    assert "debug_turn" not in ids  # reserved for the h-readers regression scenario


@pytest.mark.parametrize("tag", sorted(THEMES))
def test_every_theme_has_its_scenarios(tag: str) -> None:
    assert tag_counts(SUITE).get(tag, 0) >= THEMES[tag][0]


@pytest.mark.parametrize(
    ("tag", "sc"),
    [(t, sc) for t, (_, check) in sorted(THEMES.items()) if check for sc in SUITE if t in sc.tags],
    ids=lambda x: x if isinstance(x, str) else x.id,
)
def test_a_theme_tag_means_what_it_says(tag: str, sc: Scenario) -> None:
    check = THEMES[tag][1]
    assert check is not None and check(sc)


@pytest.mark.parametrize("sc", SUITE, ids=lambda sc: sc.id)
def test_a_perfect_reply_scores_right_and_fits_the_schemas(sc: Scenario) -> None:
    """Each round's expectations, instantiated, pass the scorer and the tool's whole schema
    (so a required parameter the matchers leave out, or a value outside an enum, fails)."""
    for i, rnd in enumerate(sc.expect.expected_rounds()):
        calls = sample_round(sc, rnd)
        assert match_round(rnd, calls) == [], f"round {i}: {calls}"
        for call in calls:
            tool = sc.tool(call.name)
            assert tool is not None
            errors = list(Draft202012Validator(tool.parameters).iter_errors(call.arguments))
            assert not errors, f"{call.name}{call.arguments}: {errors[0].message}"
        if sc.expect.kind == "multi_turn":
            got = [text for _, text in tool_results(sc, i, calls)]
            assert got == [c.result_text() for c in rnd.calls]


def test_recorded_is_exactly_what_the_committed_cassettes_cover() -> None:
    """`recorded` selects the replayed scenarios (`run --record none --scenarios recorded`)."""
    recorded = {sc.id for sc in SUITE if "recorded" in sc.tags}
    replayed = {row["scenario"] for row in json.loads(EXPECTED_REPLAY.read_text("utf-8"))}
    assert recorded == replayed


def test_docs_name_every_theme_tag() -> None:
    page = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    missing = [t for t in [*THEMES, "recorded"] if f"`{t}`" not in page]
    assert missing == []


@pytest.mark.parametrize(
    ("pattern", "sample"),
    [(r"\s*pow\(\s*2\s*,\s*20\s*\)\s*", "pow(2,20)"), ("(?i).*pizza.*", "pizza"),
     ("a[0-9]{2}|b", "a00"), (r"\d+x?", "0"), ("(?i)(\\w+) (and|or) y", "a and y")],
)  # fmt: skip
def test_regex_samples(pattern: str, sample: str) -> None:
    assert regex_sample(pattern) == sample
