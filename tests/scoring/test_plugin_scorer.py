"""A new per-trial value and a metric over it are one plugin file: the toy plugin
(:mod:`tests.scoring.toy_scorer`), found through the ``toolbench.scorers`` and
``toolbench.metrics`` entry-point groups, gives every trial of a real run (the committed
cassettes, replayed) its named values, and they reach ``results.jsonl``, the HTML report,
``gate --min``, ``compare`` and ``export`` with no other module edited."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pandas as pd
import pytest

from toolbench.cli.app import run_cli
from toolbench.metrics import metric_registry as registry
from toolbench.scoring import scorer
from toolbench.store import load_results

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "tests.scoring.toy_scorer"
SCENARIOS = "calculate-product,choose-currency,weather-paris"
RUN = ["run", "--record", "none", "--quiet", "--no-report", "--models", "local/smollm2-135m",
       "--formats", "xml,react", "--scenarios", SCENARIOS]  # fmt: skip


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The toy plugin installed: each group's entry points are the real ones plus its own."""
    scorers = EntryPoint("terse", f"{PLUGIN}:SCORER", scorer.ENTRY_POINT_GROUP)
    metrics = EntryPoint("terse", f"{PLUGIN}:METRICS", registry.ENTRY_POINT_GROUP)
    with scorer.SCORERS.installing(scorers), registry.METRICS.installing(metrics):
        yield


@pytest.fixture
def run(plugin: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(ROOT)  # the committed cassettes
    out = tmp_path / "run"
    assert run_cli([*RUN, "--out", str(out)]) == 0
    monkeypatch.chdir(tmp_path)
    return out


def _expected(run: Path) -> dict[tuple[str, str], tuple[bool, int]]:
    """Each trial's values as the plugin defines them, from the stored replies."""
    out = {}
    for t in load_results(run):
        texts = [turn.reply.text for turn in t.turns if not turn.retry]
        out[(t.format, t.scenario_id)] = (max(map(len, texts)) <= 200, sum(map(len, texts)))
    return out


def test_values_are_stored_by_name_in_results_jsonl(run: Path) -> None:
    expected = _expected(run)
    lines = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    assert len(lines) == len(expected) == 6
    for d in lines:
        values = d["scores"]["values"]
        terse, chars = expected[(d["format"], d["scenario_id"])]
        assert values["terse"]["value"] is terse
        assert values["reply_chars"] == {"value": chars}
        assert ("reason" in values["terse"]) is (not terse)
    assert {t for t, _ in expected.values()} == {True, False}  # the data tells them apart


def _rate(run: Path, fmt: str | None = None) -> float:
    got = [t for (f, _), (t, _) in _expected(run).items() if fmt in (None, f)]
    return sum(got) / len(got)


def test_html_report(run: Path) -> None:
    assert run_cli(["report", str(run), "-o", "r.html"]) == 0
    page = Path("r.html").read_text(encoding="utf-8")
    assert (
        '<th title="share of trials whose every reply had at most 200 characters">terse_rate'
        in page
    )
    xml = f"{100 * _rate(run, 'xml'):.1f}%"
    assert f'title="terse_rate: n=3">{xml}' in page
    assert "reply_chars_mean" in page


def test_gate_min(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rate = _rate(run)
    assert run_cli(["gate", str(run), "--min", f"terse_rate={rate - 0.01:.3f}"]) == 0
    assert run_cli(["gate", str(run), "--min", f"terse_rate={rate + 0.01:.3f}"]) == 1
    assert "terse_rate" in capsys.readouterr().out


def test_compare(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert run_cli(["compare", str(run), "--formats", "xml,react", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    cell = next(c for c in data["cells"] if c["cell"] == "local/smollm2-135m")
    terse = cell["metrics"]["terse_rate"]
    assert (terse["a"], terse["b"]) == pytest.approx((_rate(run, "xml"), _rate(run, "react")))
    chars = {
        f: [c for (g, _), (_, c) in _expected(run).items() if g == f] for f in ("xml", "react")
    }
    assert cell["metrics"]["reply_chars_mean"]["a"] == pytest.approx(sum(chars["xml"]) / 3)
    assert any(t["metric"] == "terse_rate" for t in data["tests"])  # paired McNemar


def test_export(run: Path) -> None:
    assert run_cli(["export", str(run), "--to", "csv", "-o", "t.csv"]) == 0
    df = pd.read_csv("t.csv")
    expected = _expected(run)
    got = {
        (f, s): (bool(t), int(c))
        for f, s, t, c in zip(
            df["format"], df["scenario_id"], df["terse"], df["reply_chars"], strict=True
        )
    }
    assert got == expected
