"""Grid expansion of ``--formats`` (:mod:`toolbench.runner.format_grid`); a grid run
beside ``native`` on the same trials against the fake server; and a grid over the
embedded models replayed offline to what its live run measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runner.conftest import GOOD_CALL, run_fake
from tests.runner.replay_summary import summarize
from toolbench.cli.app import run_cli
from toolbench.errors import UserError
from toolbench.providers.fake import FakeServer, by_last_user
from toolbench.runner.format_grid import (
    MAX_CELLS_ENV,
    axes_of,
    base_of,
    expand_formats,
    expand_spec,
    read_grid,
    rejoin,
)
from toolbench.store import load_results

SIX = [
    "prompt-json:doc=python,tag=on",
    "prompt-json:doc=python",
    "prompt-json:doc=json,tag=on",
    "prompt-json:doc=json",
    "prompt-json:doc=xml,tag=on",
    "prompt-json:doc=xml",
]


def test_a_grid_is_the_cross_product_of_its_values_in_canonical_specs() -> None:
    assert expand_spec("prompt-json:doc=python|json|xml,tag=on|off") == SIX
    # Options written in any order give the same canonical cells; a default drops out.
    assert expand_spec("prompt-json:tag=off|on,shots=2,doc=text|xml") == [
        "prompt-json:shots=2",
        "prompt-json:doc=xml,shots=2",
        "prompt-json:shots=2,tag=on",
        "prompt-json:doc=xml,shots=2,tag=on",
    ]
    # Any option may be a grid's, not only an axis.
    assert expand_spec("pythonic:shots=0|2") == ["pythonic", "pythonic:shots=2"]
    assert expand_spec("prompt-json:doc=python|json,stream") == [
        "prompt-json:doc=python,stream",
        "prompt-json:doc=json,stream",
    ]


def test_a_spec_without_a_grid_is_left_as_written() -> None:
    for spec in ("native", "prompt-json:shots=2", "native|xml", "native:stream|xml"):
        assert read_grid(spec) is None
        assert expand_spec(spec) == [spec]


def test_a_bar_after_a_value_is_a_fallback_when_it_names_a_format_the_key_does_not_take() -> None:
    assert read_grid("prompt-json:doc=python|react") is None
    assert expand_spec("prompt-json:doc=python|react") == ["prompt-json:doc=python|react"]
    assert read_grid("prompt-json:shots=2|xml:shots=1") is None
    # xml is a value of doc: a grid, not a fallback; a fallback after it is one cell each.
    assert expand_spec("prompt-json:doc=python|xml") == [
        "prompt-json:doc=python",
        "prompt-json:doc=xml",
    ]
    assert expand_spec("prompt-json:doc=python|json,shots=0|react") == [
        "prompt-json:doc=python|react",
        "prompt-json:doc=json|react",
    ]


def test_the_command_lines_comma_split_is_joined_back() -> None:
    """``--formats`` is split at commas before the grid is read: ``tag=on|off`` names no
    format, so it belongs to the spec before it."""
    assert rejoin(["prompt-json:doc=python|json|xml", "tag=on|off", "native"]) == [
        "prompt-json:doc=python|json|xml,tag=on|off",
        "native",
    ]
    assert rejoin(["native", "xml|react"]) == ["native", "xml|react"]
    assert expand_formats(["native", "prompt-json:doc=python|json|xml", "tag=on|off"], 2) == [
        "native",
        *SIX,
    ]


@pytest.mark.parametrize(
    ("spec", "line"),
    [
        ("prompt-json:doc=python|yaml",
         "--formats: 'prompt-json:doc=python|yaml': doc takes text, json, python, xml"
         " (got 'yaml')"),
        ("prompt-json:doc=yaml",
         "--formats: 'prompt-json:doc=yaml': doc takes text, json, python, xml (got 'yaml')"),
        ("prompt-json:colour=red|blue",
         "--formats: 'prompt-json:colour=red|blue': format 'prompt-json' has no option 'colour'"
         " (its axes: doc, markup, style, tag)"),
        ("xml:tag=on|off",
         "--formats: 'xml:tag=on|off': format 'xml' has no axis 'tag' (its axes: none)"),
        ("prompt-json:tag=on|on", "--formats: 'prompt-json:tag=on|on': tag=on is listed twice"),
        ("pythonic:shots=1|99",
         "--formats: 'pythonic:shots=1|99': format 'pythonic:shots=99': option shots:"
         " Input should be less than or equal to 8"),
    ],
)  # fmt: skip
def test_bad_axes_and_values_name_formats_and_the_value(spec: str, line: str) -> None:
    with pytest.raises(UserError) as err:
        expand_formats([spec], 1)
    assert str(err.value) == line


def test_the_bound_counts_models_times_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    grid = (
        "prompt-json:doc=text|json|python|xml,markup=plain|markdown,"
        "style=own|classic|experimental,tag=on|off"
    )
    assert len(expand_formats([grid], 4)) == 48  # 192 cells: within 200
    with pytest.raises(UserError) as err:
        expand_formats([grid, "native"], 5)
    assert str(err.value) == (
        "--formats: the grid expands to 245 cells (5 model(s) x 49 format(s)), more than 200"
        f" (set ${MAX_CELLS_ENV} to raise it)"
    )
    monkeypatch.setenv(MAX_CELLS_ENV, "245")
    assert len(expand_formats([grid, "native"], 5)) == 49
    # Without a grid there is no bound here (a run's own size check still holds).
    monkeypatch.setenv(MAX_CELLS_ENV, "1")
    assert expand_formats(["native", "xml"], 3) == ["native", "xml"]
    monkeypatch.setenv(MAX_CELLS_ENV, "many")
    with pytest.raises(UserError, match=r"\$TOOLBENCH_MAX_CELLS: must be a whole number"):
        expand_formats([grid], 1)


def test_base_of_and_axes_of_group_the_cells_of_a_grid() -> None:
    assert {base_of(c) for c in SIX} == {"prompt-json"}
    assert base_of("prompt-json:doc=python,shots=2,tag=on") == "prompt-json:shots=2"
    assert base_of("native|xml") == "native|xml"
    assert axes_of("prompt-json:doc=python,tag=on") == {
        "doc": "python", "markup": "plain", "style": "own", "tag": "on"
    }  # fmt: skip
    assert axes_of("pythonic") == {"doc": "json", "markup": "plain", "style": "own", "tag": "off"}
    assert axes_of("native") == {}
    assert axes_of("not-installed:doc=xml,shots=1") == {"doc": "xml"}


pytestmark = pytest.mark.usefixtures("openai_key")


def test_a_grid_runs_beside_native_on_the_same_trials(tmp_path: Path, scenario_file: Path) -> None:
    """Every cell answers the same bare call: each tag=on cell reads it leniently, each
    tag=off cell strictly; every cell ran every scenario; the requests differ only as the
    axes say; a replay gives the same results without a request."""
    formats = "native,prompt-json:doc=python|json,tag=on|off"
    with FakeServer(by_last_user({"Weather in Paris?": GOOD_CALL}, "No call.")) as fake:
        assert run_fake(fake, tmp_path, scenario_file, formats=formats) == 0
        sent = len(fake.received)
        systems = {
            str(r.body["messages"][0]["content"])
            for r in fake.received
            if r.body.get("messages", [{}])[0].get("role") == "system"
        }
        assert (
            run_fake(
                fake, tmp_path, scenario_file, "--record", "none", formats=formats, out="again"
            )
            == 0
        )
        assert len(fake.received) == sent
    first = load_results(tmp_path / "run")
    cells = ["native", "prompt-json:doc=python,tag=on", "prompt-json:doc=python",
             "prompt-json:doc=json,tag=on", "prompt-json:doc=json"]  # fmt: skip
    assert sorted({r.format for r in first}) == sorted(cells)
    for cell in cells:
        assert sorted(r.scenario_id for r in first if r.format == cell) == ["chat", "weather"]
    weather = {r.format: r for r in first if r.scenario_id == "weather"}
    for cell in cells[1:]:
        parsed = weather[cell].turns[0].parsed
        assert parsed is not None and [c.name for c in parsed.calls] == ["get_weather"]
        assert parsed.status == ("repaired" if "tag=on" in cell else "strict")
    systems = {s for s in systems if "You can call tools." in s}
    assert len(systems) == 4  # one system prompt per prompted cell
    assert sum("# Function: get_weather" in s for s in systems) == 2
    assert sum("<TOOLCALL>" in s for s in systems) == 2
    again = load_results(tmp_path / "again")
    key = lambda r: (r.format, r.scenario_id)  # noqa: E731
    assert [(key(r), r.scores) for r in sorted(again, key=key)] == [
        (key(r), r.scores) for r in sorted(first, key=key)
    ]


GRID_CASSETTES = Path(__file__).resolve().parents[1] / "data" / "grid_cassettes"
GRID_EXPECTED = Path(__file__).resolve().parents[1] / "data" / "grid_replay.json"
GRID_RUN = [
    "--models", "local/smollm2-135m,local/gemma3-270m",
    "--formats", "native,prompt-json:doc=text|python,tag=off|on",
    "--scenarios", "weather-paris,stock-aapl,choose-translate,choose-currency,"
    "conv-no-call-after-chat",
]  # fmt: skip
"""A grid over the embedded models, recorded live on 2026-11-29 (llama-server, the
embedded default's settings) into ``tests/data/grid_cassettes``; its results, as the live
run scored them, are ``tests/data/grid_replay.json``."""


def test_a_grid_over_the_embedded_models_replays_offline_to_the_live_results(
    tmp_path: Path,
) -> None:
    rc = run_cli(["run", "--record", "none", "--quiet", "--no-report", *GRID_RUN,
                  "--cassettes", str(GRID_CASSETTES), "--out", str(tmp_path / "grid")])  # fmt: skip
    assert rc == 0
    got = summarize(load_results(tmp_path / "grid"))
    assert len(got) == 2 * 5 * 5  # models x cells x scenarios, every one answered
    assert all(row["error_code"] is None for row in got)
    assert got == json.loads(GRID_EXPECTED.read_text(encoding="utf-8"))
