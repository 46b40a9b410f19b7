"""The run store's rules: schema versions on read, the redacting writer, both reader
modes' handling of torn, duplicated and malformed lines, and merge."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from synthetic_runs import make_trial, standard_trials, write_run
from tests.support.secrets import forget_registered_secrets

from toolbench.cli.app import run_cli
from toolbench.errors import UserError
from toolbench.redaction import REDACTED, register_secret
from toolbench.report.metrics import aggregate, cell_map, load_table
from toolbench.results import RunInfo, TrialResult
from toolbench.store import (
    NewResults,
    iter_results,
    read_info,
    read_projected,
    result_line,
    write_info,
)
from toolbench.store.merge import merge_runs
from toolbench.store.schema import CURRENT, migration, upgrade

SECRET = "sk-store-test-0123456789abcdef"


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_run(Path("r1"), standard_trials("r1"))
    return tmp_path


@pytest.fixture
def secret() -> Iterator[str]:
    register_secret(SECRET)
    yield SECRET
    forget_registered_secrets()


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run_cli(argv)
    out, err = capsys.readouterr()
    return code, out, err


def set_line(path: Path, n: int, edit: dict[str, object]) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    d = json.loads(lines[n - 1])
    d.update(edit)
    lines[n - 1] = json.dumps(d) + "\n"
    path.write_text("".join(lines), encoding="utf-8")


# --------------------------------------------------------------------------- versions


@pytest.mark.parametrize("command", [["report"], ["rescore"], ["export", "--to", "csv"]])
def test_a_line_of_a_newer_schema_is_refused_in_one_line(
    runs: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    set_line(Path("r1/results.jsonl"), 3, {"schema_version": CURRENT + 1})
    code, out, err = cli([command[0], "r1", *command[1:]], capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"error: r1/results.jsonl:3: written by a newer toolbench (schema {CURRENT + 1}); "
        f"this one reads up to {CURRENT}\n"
    )


def test_a_newer_run_json_is_refused_in_one_line(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    info = json.loads(Path("r1/run.json").read_text())
    info["schema_version"] = CURRENT + 1
    Path("r1/run.json").write_text(json.dumps(info))
    code, _, err = cli(["report", "r1", "--to", "md"], capsys)
    assert (code, err) == (
        2,
        f"error: r1/run.json: written by a newer toolbench (schema {CURRENT + 1}); "
        f"this one reads up to {CURRENT}\n",
    )
    code, _, err = cli(["rescore", "r1", "-o", "r1b"], capsys)
    assert (code, err.splitlines()[0]) == (2, err.rstrip("\n"))
    assert f"r1/run.json: written by a newer toolbench (schema {CURRENT + 1})" in err
    assert not Path("r1b").exists()


def test_resume_of_a_run_written_by_a_newer_toolbench_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2])  # the committed cassettes
    out = tmp_path / "run"
    argv = ["run", "--record", "none", "--quiet", "--no-report", "--out", str(out),
            "--models", "local/smollm2-135m", "--formats", "xml",
            "--scenarios", "weather-paris"]  # fmt: skip
    assert run_cli(argv) == 0
    info = json.loads((out / "run.json").read_text())
    info["schema_version"] = CURRENT + 1
    (out / "run.json").write_text(json.dumps(info))
    capsys.readouterr()
    assert run_cli([*argv, "--resume"]) == 2
    assert capsys.readouterr().err == (
        f"error: {out / 'run.json'}: written by a newer toolbench (schema {CURRENT + 1}); "
        f"this one reads up to {CURRENT}\n"
    )


@pytest.mark.parametrize("value", ["2", 0, None, True])
def test_a_schema_version_that_is_not_one_is_named(runs: Path, value: object) -> None:
    set_line(Path("r1/results.jsonl"), 2, {"schema_version": value})
    with pytest.raises(UserError) as err:
        load_table("r1")
    assert str(err.value) == (
        f"r1/results.jsonl:2: schema_version: {value!r} is not a schema version"
    )


def test_old_lines_are_migrated_in_both_modes(runs: Path) -> None:
    set_line(Path("r1/results.jsonl"), 1, {"schema_version": 1})
    lines = Path("r1/results.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["schema_version"] == 1
    assert {t.schema_version for t in iter_results("r1")} == {CURRENT}
    read = read_projected("r1", lambda d: d["schema_version"])
    assert set(read.rows) == {CURRENT}


def test_a_migration_is_registered_once() -> None:
    with pytest.raises(ValueError, match="a trial migration from schema 1 is registered"):
        migration("trial", 1)(lambda d: d)


def test_upgrade_runs_the_registered_steps() -> None:
    d = upgrade("run", {"schema_version": 1, "run_id": "x"}, "here")
    assert d == {"schema_version": CURRENT, "run_id": "x", "merged_from": []}
    missing = upgrade("run", {"run_id": "x"}, "here")  # no version: the first schema
    assert missing["schema_version"] == CURRENT


# --------------------------------------------------------------------------- reader modes


def test_validated_mode_skips_a_torn_last_line(runs: Path) -> None:
    path = Path("r1/results.jsonl")
    path.write_text(path.read_text() + '{"schema_version":2,"run_id":"r1","mod')
    assert len(list(iter_results("r1"))) == 24


def test_validated_mode_counts_a_duplicate_once_with_the_same_warning(
    runs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = Path("r1/results.jsonl")
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join([*lines, lines[0], lines[5]]))
    assert len(list(iter_results("r1"))) == 24
    warning = "warning: r1/results.jsonl: 2 duplicated trial(s) counted once (line 25, 26)\n"
    assert capsys.readouterr().err == warning
    assert len(load_table("r1").df) == 24
    assert capsys.readouterr().err == warning


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("not json\n", "r1/results.jsonl:3: not a results file: not a JSON line "
         "(Expecting value: line 1 column 1 (char 0))"),
        ("[1, 2]\n", "r1/results.jsonl:3: expected a JSON object"),
        ('{"schema_version": 2, "run_id": "r1", "toolbench_version": "0"}\n',
         "r1/results.jsonl:3: model: field required"),
    ],
)  # fmt: skip
def test_both_modes_name_a_bad_line_the_same_way(runs: Path, line: str, error: str) -> None:
    path = Path("r1/results.jsonl")
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = line
    path.write_text("".join(lines))
    for read in (lambda: list(iter_results("r1")), lambda: load_table("r1")):
        with pytest.raises(UserError) as err:
            read()
        got = str(err.value)
        # pydantic says "Field required"; the projection says "field required"
        assert got.lower() == error.lower()


def test_a_line_split_at_a_unicode_line_separator_is_not_broken(runs: Path) -> None:
    """Only \\n ends a line: U+2028 and U+0085 inside a reply stay in the line."""
    path = Path("r1/results.jsonl")
    t = make_trial("m", "xml", "s", reply="a\u2028b\x85c\rd")
    with path.open("a", encoding="utf-8") as fh:
        fh.write(t.model_dump_json() + "\n")
    trials = list(iter_results("r1"))
    assert trials[-1].turns[0].reply.text == "a\u2028b\x85c\rd"
    assert len(load_table("r1").df) == 25


# --------------------------------------------------------------------------- writer


def test_result_line_is_at_the_current_schema_and_redacted(secret: str) -> None:
    t = make_trial("m", "xml", "s", reply=f"key {secret}").model_copy(update={"schema_version": 1})
    d = json.loads(result_line(t))
    assert d["schema_version"] == CURRENT
    assert secret not in json.dumps(d) and REDACTED in d["turns"][0]["reply"]["text"]


def test_run_json_is_written_redacted(tmp_path: Path, secret: str) -> None:
    info = RunInfo(
        run_id="r", toolbench_version="0", created_at="now", models=["m"], formats=["xml"],
        scenarios=["s"], params={"note": f"from {secret}"},
    )  # fmt: skip
    write_info(tmp_path, info)
    text = (tmp_path / "run.json").read_text()
    assert secret not in text and REDACTED in text
    back = read_info(tmp_path)
    assert back is not None and back.params["note"] == f"from {REDACTED}"


def test_new_results_refuses_an_existing_file(tmp_path: Path) -> None:
    (tmp_path / "results.jsonl").write_text("")
    with pytest.raises(UserError) as err, NewResults(tmp_path):
        pass
    assert str(err.value) == (
        f"-o: {tmp_path / 'results.jsonl'} already exists; choose a new directory"
    )


def test_rescore_writes_through_the_redacting_writer(tmp_path: Path, secret: str) -> None:
    """Rescore wrote its own lines; a results file from elsewhere keeps no secret."""
    from toolbench.runner.rescore import rescore_run

    leaky = make_trial("m", "xml", "unknown-scenario", reply=f"leaked {secret}")
    run = write_run(tmp_path / "old", [leaky])
    assert secret in (run / "results.jsonl").read_text()
    rescore_run(run, tmp_path / "new", [])
    assert secret not in (tmp_path / "new" / "results.jsonl").read_text()


# --------------------------------------------------------------------------- merge


def halves(root: Path) -> tuple[Path, Path, list[TrialResult]]:
    trials = standard_trials("r1")
    a = write_run(root / "a", trials[::2])
    b = write_run(root / "b", trials[1::2])
    for d in (a, b):  # both halves record the whole matrix, as a resumed run would
        info = json.loads((d / "run.json").read_text())
        info.update(
            models=["m-alpha", "m-beta"], formats=["prompt-json", "xml"],
            scenarios=["chitchat_nocall", "trip_multi", "weather_basic"], samples=2,
        )  # fmt: skip
        (d / "run.json").write_text(json.dumps(info))
    return a, b, trials


def test_merge_of_two_halves_equals_the_whole(tmp_path: Path) -> None:
    a, b, trials = halves(tmp_path)
    summary = merge_runs([a, b], tmp_path / "m")
    assert (summary.trials, summary.duplicates, summary.runs) == (24, 0, 2)
    whole = write_run(tmp_path / "whole", trials)
    got = cell_map(aggregate(load_table(tmp_path / "m").df))
    want = cell_map(aggregate(load_table(whole).df))
    assert {k: c.values for k, c in got.items()} == {k: c.values for k, c in want.items()}
    info = read_info(tmp_path / "m")
    assert info is not None and (info.run_id, info.merged_from) == ("m", ["a", "b"])


def test_merge_keeps_each_trial_once_and_an_ok_trial_wins(tmp_path: Path) -> None:
    a, b, trials = halves(tmp_path)
    infra = next(t for t in trials if t.status == "infra_error")
    fixed = make_trial(infra.model, infra.format, infra.scenario_id, infra.sample, run_id="c")
    c = write_run(tmp_path / "c", [fixed, trials[0]])
    (c / "run.json").write_text((a / "run.json").read_text())
    summary = merge_runs([a, b, c], tmp_path / "m")
    assert (summary.trials, summary.duplicates, summary.replaced) == (24, 2, 1)
    merged = {t.key: t for t in iter_results(tmp_path / "m")}
    assert merged[infra.key].status == "ok" and merged[infra.key].run_id == "c"
    assert merged[trials[0].key].run_id == "r1"  # the first run given keeps its trial


def test_merge_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b, _ = halves(tmp_path)
    code, out, err = cli(["merge", str(a), str(b), "-o", str(tmp_path / "m")], capsys)
    assert (code, err) == (0, "")
    assert out == (
        f"merged 24 trials from 2 runs into {tmp_path / 'm'}\n"
        "  0 trial(s) held by more than one run written once (0 non-ok replaced by an ok trial)\n"
    )


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["merge", "a", "b2", "-o", "m"],
         "error: merge: b2/run.json: formats (prompt-json) differs from a/run.json "
         "(prompt-json, xml); only runs of one matrix merge"),
        (["merge", "a", "b3", "-o", "m"],
         "error: merge: b3/run.json: params.temperature (0.7) differs from a/run.json "
         "(None); only runs of one matrix merge"),
        (["merge", "a", "-o", "m"], "error: merge: give at least two runs"),
        (["merge", "a", "./a", "-o", "m"], "error: merge: a is given twice (as a)"),
        (["merge", "a", "b", "-o", "a"],
         "error: -o: 'a' is one of the runs being merged; choose a new directory"),
        (["merge", "a", "nope", "-o", "m"],
         "error: nope/results.jsonl: no results file (is 'nope' a run directory?)"),
        (["merge", "a", "noinfo", "-o", "m"],
         "error: noinfo/run.json: no run.json (merge needs each run's matrix)"),
        (["merge", "a", "b", "-o", "done"],
         "error: -o: done/results.jsonl already exists; choose a new directory"),
        (["merge", "a", "b"],
         "error: toolbench merge: Missing option '-o' / '--out'. (see 'toolbench merge --help')"),
    ],
)  # fmt: skip
def test_merge_refuses_with_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    error: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    halves(tmp_path)
    b2 = write_run(Path("b2"), [t for t in standard_trials("b2") if t.format == "prompt-json"])
    info = json.loads((Path("a") / "run.json").read_text())
    (b2 / "run.json").write_text(json.dumps({**info, "formats": ["prompt-json"]}))
    b3 = write_run(Path("b3"), standard_trials("b3")[:1])
    (b3 / "run.json").write_text(json.dumps({**info, "params": {"temperature": 0.7}}))
    (write_run(Path("noinfo"), standard_trials("x")[:1]) / "run.json").unlink()
    write_run(Path("done"), [])
    code, out, err = cli(argv, capsys)
    assert (code, out, err) == (2, "", error + "\n")
    assert not Path("m").exists()


def test_a_failed_merge_leaves_no_results_file(tmp_path: Path) -> None:
    """The second pass validates what it writes; a bad kept line fails the merge whole."""
    a, b, _ = halves(tmp_path)
    set_line(b / "results.jsonl", 4, {"status": "exploded"})
    with pytest.raises(UserError) as err:
        merge_runs([a, b], tmp_path / "m")
    assert str(err.value).startswith(f"{b / 'results.jsonl'}:4: status: Input should be")
    assert not (tmp_path / "m").exists()  # built aside, never renamed into place


def test_new_results_appears_only_when_complete(tmp_path: Path) -> None:
    with NewResults(tmp_path) as sink:
        sink.write(make_trial("m", "xml", "s"))
        assert not (tmp_path / "results.jsonl").exists()
    assert len(list(iter_results(tmp_path))) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.jsonl"]


def test_a_last_line_torn_inside_a_character_is_skipped_by_both_modes(runs: Path) -> None:
    """A kill mid-write can cut a multi-byte character; that was a "not UTF-8" error, and
    resuming the run (which reads it before cutting the torn tail) failed."""
    path = Path("r1/results.jsonl")
    line = make_trial("m", "xml", "s", reply="café").model_dump_json().encode()
    path.write_bytes(path.read_bytes() + line[: line.index(b"\xc3") + 1])
    assert len(list(iter_results("r1"))) == 24
    assert len(load_table("r1").df) == 24
