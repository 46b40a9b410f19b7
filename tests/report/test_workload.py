"""``recommend --pairs``: (model, format) pairs ranked for a workload, cost and latency as
declared tie-breakers, and whether the suite can separate the top two (sign test, power)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synthetic_runs import make_trial, write_run

from toolbench.cli.app import run_cli
from toolbench.errors import UserError
from toolbench.report.metrics import load_table
from toolbench.report.paired_stats import detectable_difference
from toolbench.report.workload import Workload, parse_weights, rank_pairs, render, select_trials
from toolbench.results import ScenarioFile


def cell(model: str, fmt: str, n_ok: int, n: int = 40, **kw: object) -> list:  # type: ignore[type-arg]
    return [make_trial(model, fmt, f"call_{i}", 0, ok=i < n_ok, **kw) for i in range(n)]  # type: ignore[arg-type]


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    # Clear winner: 38/40 vs 20/40 (the next best).
    first = ScenarioFile(path=str(tmp_path / "suite" / "first.yaml"), sha256="0",
                         ids=[f"call_{i}" for i in range(10)])  # fmt: skip
    tags = {"call_0": ["pick"], "call_39": ["pick"], "gone": ["orphan"]}
    write_run(Path("clear"), cell("big", "xml", 38) + cell("big", "react", 20)
              + cell("small", "xml", 12), scenario_files=[first], scenario_tags=tags)  # fmt: skip
    # Too close to tell on 40 trials: 30/40 vs 28/40.
    write_run(Path("close"), cell("big", "xml", 30) + cell("small", "xml", 28))
    # A tie on the score, broken by latency (same cost).
    write_run(Path("tie"), cell("fast", "xml", 20, latency=0.2) + cell("slow", "xml", 20))
    return tmp_path


@pytest.mark.parametrize(
    ("n", "psi", "delta"),
    [
        (155, 0.2, 0.1),  # Connor 1987: 155 pairs detect 10 points at psi 0.2
        (34, 0.0, 0.2153),  # no discordant pair seen: psi = delta
        (340, 0.1, 0.0479),
        (4, 0.0, 0.998),  # 4 pairs: only a difference of about 100 points
        (3, 0.0, None),  # nothing detectable
        (0, 0.0, None),
    ],
)
def test_detectable_difference(n: int, psi: float, delta: float | None) -> None:
    got = detectable_difference(n, psi)
    assert got == (None if delta is None else pytest.approx(delta, abs=2e-4))


def test_detectable_difference_solves_connors_formula() -> None:
    from statistics import NormalDist

    za, zb = NormalDist().inv_cdf(0.975), NormalDist().inv_cdf(0.8)
    d = detectable_difference(200, 0.3)
    assert d is not None

    def need(x: float) -> float:
        p = max(0.3, x)
        return float((za * p**0.5 + zb * (p - x * x) ** 0.5) ** 2 / (x * x))

    assert need(d) <= 200 < need(d - 1e-4)


def test_clear_winner_is_significant(runs: Path) -> None:
    r = rank_pairs(load_table("clear"), Workload())
    assert [(x.cell.model, x.cell.format) for x in r.ranked] == [
        ("big", "xml"), ("big", "react"), ("small", "xml"),
    ]  # fmt: skip
    assert r.top is not None and (r.top.pairs, r.top.only_a, r.top.only_b) == (40, 18, 0)
    assert r.top.significant and r.decided_by == "workload score"
    text = render(r)
    assert "big / xml is better than big / react on this workload (p < 0.05)" in text
    assert "too small" not in text


def test_too_small_says_so_with_the_detectable_difference(runs: Path) -> None:
    r = rank_pairs(load_table("close"), Workload())
    assert r.top is not None and not r.top.significant
    d = detectable_difference(40, 2 / 40)
    assert d is not None and r.top.detectable == d
    assert (
        "warning: the suite is too small to separate big / xml and small / xml (observed 5.0 "
        f"points, p=0.5); at 40 paired trials it could detect a difference of {100 * d:.1f} "
        "points or more (alpha 0.05, power 0.8)"
    ) in render(r)


def test_tie_breakers_are_declared_and_used(runs: Path) -> None:
    r = rank_pairs(load_table("tie"), Workload())
    assert r.ranked[0].cell.model == "fast" and r.decided_by == "latency_p50"
    text = render(r)
    assert "then lowest cost per trial (cost_total / n_trials), then lowest latency_p50" in text
    assert "note: they tie on the workload score; latency_p50 decided" in text


def test_workload_selects_scenarios_and_weights(runs: Path) -> None:
    w = Workload(["call_0", "call_39"], parse_weights(["call_accuracy=2", "leak_rate=1"]))
    r = rank_pairs(load_table("clear"), w)
    assert r.trials == 6 and r.weights == {"call_accuracy": 2.0, "leak_rate": 1.0}
    # big/xml: call_0 right, call_39 wrong -> (2 * 0.5 + 1 * (1 - 0)) / 3
    top = next(x for x in r.ranked if (x.cell.model, x.cell.format) == ("big", "xml"))
    assert top.score == pytest.approx(2 / 3)


def test_pairs_json_and_yaml(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["recommend", "clear", "--pairs", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["command"], data["mode"], data["decided_by"]) == (
        "recommend", "pairs", "workload score",
    )  # fmt: skip
    assert data["rule"] == [
        "workload score", "cost per trial (cost_total / n_trials)", "latency_p50",
        "model and format name",
    ]  # fmt: skip
    assert data["ranking"][0]["model"] == "big" and data["ranking"][0]["score"] == 0.95
    top = data["top_two"]
    assert (top["pairs"], top["significant"], top["alpha"], top["power"]) == (40, True, 0.05, 0.8)
    assert run_cli(["recommend", "clear", "--pairs", "--to", "yaml"]) == 0
    assert capsys.readouterr().out == "models:\n  big:\n    tool_format: xml\nversion: 1\n"


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["--weight", "call_accuracy=1"],
         "error: recommend: --weight weighs the --pairs ranking; give --pairs with it"),
        (["--pairs", "--weight", "latency_p50=1"],
         "error: --weight: latency_p50 is not a rate with a better direction; weights apply "
         "to rates (cost and latency are the tie-breakers)"),
        (["--pairs", "--weight", "call_accuracy=0"],
         "error: --weight: call_accuracy: '0' is not a number above 0"),
        (["--pairs", "--weight", "call_accuracy"],
         "error: --weight: 'call_accuracy' is not METRIC=WEIGHT (e.g. call_accuracy=2)"),
        (["--pairs", "--weight", "final_answer_accuracy=1"],
         "error: --weight: none of final_answer_accuracy applies to a trial of the workload"),
        (["--pairs", "--scenarios", "./missing-but-a-path.yaml,call_1", "--scenarios", "x.yaml"],
         None),
    ],
)  # fmt: skip
def test_bad_workload_options_are_one_line(
    runs: Path, capsys: pytest.CaptureFixture[str], argv: list[str], error: str | None
) -> None:
    code = run_cli(["recommend", "clear", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    if error is not None:
        assert err == error + "\n"
    else:
        assert err.startswith("error: unknown scenario or tag") and err.count("\n") == 1


def test_a_workload_with_no_trial_of_the_run(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tag the run recorded whose scenarios have no trial here selects nothing; a name
    the run knows nothing of (a bundled scenario it did not run) is unknown to it."""
    assert run_cli(["recommend", "clear", "--pairs", "--scenarios", "orphan"]) == 2
    assert capsys.readouterr().err == (
        "error: --scenarios: no trial of run 'clear' is in the workload (orphan)\n"
    )
    assert run_cli(["recommend", "clear", "--pairs", "--scenarios", "weather-paris"]) == 2
    assert capsys.readouterr().err == (
        "error: unknown scenario or tag of run 'clear' 'weather-paris'. Tags of the run: "
        "orphan, pick; or a scenario id, file or folder of the run\n"
    )


@pytest.mark.parametrize(
    ("selector", "ids"),
    [
        ("pick", {"call_0", "call_39"}),  # a tag, as the run recorded it
        ("suite/first.yaml", {f"call_{i}" for i in range(10)}),  # a file the run read
        ("suite", {f"call_{i}" for i in range(10)}),  # its folder, by path or name
        ("all", {f"call_{i}" for i in range(40)}),
    ],
)
def test_a_workload_is_selected_from_what_the_run_recorded(
    runs: Path, selector: str, ids: set[str]
) -> None:
    """No scenario file is read: ``suite/first.yaml`` does not even exist any more."""
    picked = select_trials(load_table("clear"), [selector])
    assert set(picked.df["scenario_id"]) == ids


def test_a_run_without_tags_says_so(runs: Path) -> None:
    with pytest.raises(UserError, match="The run recorded no tags: give a scenario id"):
        select_trials(load_table("close"), ["pick"])


def test_per_model_recommend_takes_the_workload_too(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On call_20..call_39 big/react gets none right and big/xml 18: xml; on call_0 alone
    both are right and the tie goes to the format name (react)."""
    assert run_cli(["recommend", "clear", "--json", "--scenarios", "call_0"]) == 0
    big = next(m for m in json.loads(capsys.readouterr().out)["models"] if m["model"] == "big")
    assert big["format"] == "react" and big["ranking"][0]["metrics"]["call_accuracy"] == 1.0
    ids = ",".join(f"call_{i}" for i in range(20, 40))
    assert run_cli(["recommend", "clear", "--json", "--scenarios", ids]) == 0
    big = next(m for m in json.loads(capsys.readouterr().out)["models"] if m["model"] == "big")
    assert big["format"] == "xml" and big["test"]["pairs"] == 20
