"""``compare --by model|format|variant``: pairs across models (and so providers: the model string
names one) or formats, paired by the other dimension, scenario and sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synthetic_runs import make_trial, write_run

from toolbench.cli.app import run_cli
from toolbench.report.compare import compare_by
from toolbench.report.metrics import load_table

STRONG, WEAK = "fireworks_ai/llama-3.1-8b", "groq/llama-3.1-8b"


def trials(model: str, fmt: str, n_ok: int, run_id: str = "r") -> list:  # type: ignore[type-arg]
    """12 call scenarios, the first ``n_ok`` right."""
    return [make_trial(model, fmt, f"call_{i}", 0, ok=i < n_ok, run_id=run_id) for i in range(12)]


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One model on two providers: 12/12 vs 2/12 on xml, 6/12 each on react."""
    monkeypatch.chdir(tmp_path)
    ts = trials(STRONG, "xml", 12) + trials(WEAK, "xml", 2)
    ts += trials(STRONG, "react", 6) + trials(WEAK, "react", 6)
    return write_run(Path("runs/r"), ts)


def test_models_pair_per_format_and_pooled(run: Path) -> None:
    (cmp,) = compare_by(load_table(run), "model")
    assert (cmp.a_name, cmp.b_name) == (STRONG, WEAK)
    got = {(t.group, t.metric): t for t in cmp.tests}
    xml = got[("xml", "call_accuracy")]
    assert (xml.n_pairs, xml.only_a, xml.only_b) == (12, 10, 0) and xml.significant
    react = got[("react", "call_accuracy")]
    assert (react.n_pairs, react.only_a, react.only_b) == (12, 0, 0) and not react.significant
    pooled = got[("all formats", "call_accuracy")]
    assert (pooled.n_pairs, pooled.only_a, pooled.only_b) == (24, 10, 0)


def test_text_says_which_is_better_and_when_not_significant(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["compare", str(run), "--by", "model"]) == 0
    out = capsys.readouterr().out
    xml = next(line for line in out.splitlines() if line.startswith("xml          call_accuracy"))
    assert xml.endswith(f"{STRONG} better")
    react = next(line for line in out.splitlines() if line.startswith("react        call_acc"))
    assert react.endswith("no significant difference")
    assert "1 pair(s) of models" in out and "no correction for multiple comparisons" in out


def test_formats_every_pair(tmp_path: Path) -> None:
    ts = trials("m", "xml", 12) + trials("m", "react", 3) + trials("m", "native", 12)
    cmps = compare_by(load_table(write_run(tmp_path / "r", ts)), "format")
    assert [(c.a_name, c.b_name) for c in cmps] == [
        ("native", "react"), ("native", "xml"), ("react", "xml"),
    ]  # fmt: skip
    assert [c.cells[0][0] for c in cmps] == ["m", "m", "m"]


def test_two_runs_one_model_each_read_as_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write_run(Path("a"), trials(STRONG, "xml", 12, "a"))
    write_run(Path("b"), trials(WEAK, "xml", 2, "b"))
    assert run_cli(["compare", "a", "b", "--by", "model", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["command"], data["mode"], data["alpha"]) == ("compare", "models", 0.05)
    (pair,) = data["comparisons"]
    assert sorted(pair) == ["a", "b", "cells", "tests"]
    assert (pair["a"], pair["b"]) == (STRONG, WEAK)
    test = next(t for t in pair["tests"] if (t["group"], t["metric"]) == ("xml", "call_accuracy"))
    assert (test["pairs"], test["only_a"], test["only_b"], test["significant"]) == (12, 10, 0, True)


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["--by", "modle"],
         "error: unknown compare --by value 'modle'. Did you mean 'model'? "
         "Available: format, model, variant"),
        (["--by", "model", "--models", f"{STRONG},nope"],
         f"error: --models: model 'nope' is not in run 'r' (run has: {STRONG}, {WEAK})"),
        (["--by", "model", "--models", STRONG],
         "error: compare --by model: --models takes exactly two (got 1)"),
        (["--by", "format", "--models", f"{STRONG},{WEAK}"],
         "error: compare: --models picks models to compare; give --by model or variant with it"),
        (["--models", f"{STRONG},{WEAK}"],
         "error: compare: --models picks models to compare; give --by model or variant with it"),
        (["--by", "format", "--formats", "xml"],
         "error: compare --by format: --formats takes exactly two (got 1)"),
        (["runs/r", "--by", "model"],
         f"error: compare --by: runs 'r' and 'r' both hold trial {STRONG} / xml / call_0 #0; "
         "compare them without --by"),
        ([], "error: compare: give RUN_B, --formats X,Y with exactly two formats, "
             "or --by model|format|variant"),
    ],
)  # fmt: skip
def test_bad_compare_options_are_one_line(
    run: Path, capsys: pytest.CaptureFixture[str], argv: list[str], error: str
) -> None:
    assert run_cli(["compare", "runs/r", *argv]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", error + "\n")


def test_one_model_is_nothing_to_compare(tmp_path: Path) -> None:
    from toolbench.errors import UserError

    run = write_run(tmp_path / "one", trials("m", "xml", 3))
    with pytest.raises(UserError, match=r"^compare --by model: run 'one' has one model \(m\); "):
        compare_by(load_table(run), "model")


LOW, HIGH, OTHER = "openai/m@low", "openai/m@high", "openai/n@low"


@pytest.fixture
def variants(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two variants of openai/m (12/12 vs 2/12 on xml) and one of openai/n."""
    monkeypatch.chdir(tmp_path)
    ts = trials(LOW, "xml", 12) + trials(HIGH, "xml", 2) + trials(OTHER, "xml", 5)
    ts += trials("openai/m", "xml", 12)
    return write_run(Path("runs/v"), ts)


def test_variants_pair_only_within_one_model(variants: Path) -> None:
    cmps = compare_by(load_table(variants), "variant")
    assert [(c.a_name, c.b_name) for c in cmps] == [
        ("openai/m", "openai/m@high"), ("openai/m", "openai/m@low"),
        ("openai/m@high", "openai/m@low"),
    ]  # fmt: skip
    got = {(t.group, t.metric): t for t in cmps[2].tests}
    xml = got[("xml", "call_accuracy")]
    assert (xml.n_pairs, xml.only_a, xml.only_b) == (12, 0, 10) and xml.significant
    assert xml.detectable == pytest.approx(0.6678)
    assert got[("all formats", "call_accuracy")].n_pairs == 12


def test_variant_text_and_json(variants: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["compare", str(variants), "--by", "variant", "--models", f"{LOW},{HIGH}"]
    assert run_cli(argv) == 0
    out = capsys.readouterr().out
    xml = next(line for line in out.splitlines() if line.startswith("xml          call_accuracy"))
    assert " 66.8 pts " in xml and xml.endswith(f"{LOW} better")
    assert "1 pair(s) of variants" in out
    assert run_cli([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mode"] == "variants"
    (pair,) = data["comparisons"]
    test = next(t for t in pair["tests"] if (t["group"], t["metric"]) == ("xml", "call_accuracy"))
    assert test["detectable_difference"] == pytest.approx(0.6678)


@pytest.mark.parametrize(
    ("picks", "message"),
    [
        ([LOW, OTHER], "compare --by variant: openai/m@low and openai/n@low are not variants of"
         " one model (openai/m, openai/n)"),
        (None, "compare --by variant: run 'r' has no model under two variants (models:"
         " fireworks_ai/llama-3.1-8b, groq/llama-3.1-8b); name them MODEL@NAME in --models"),
    ],
)  # fmt: skip
def test_variant_refusals(variants: Path, run: Path, picks: list[str] | None, message: str) -> None:
    from toolbench.errors import UserError

    with pytest.raises(UserError) as err:
        compare_by(load_table(variants if picks else run), "variant", picks)
    assert str(err.value) == message
