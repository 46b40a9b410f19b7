"""``run --shard K/N`` and ``merge`` of shards: a stable split of the trial matrix, shards
that merge into the whole run, and one line (exit 2) for every bad shard or merge input."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runner.conftest import run_fake
from tests.support.fake_openai import FakeOpenAI
from toolbench.cli.app import run_cli
from toolbench.errors import UserError
from toolbench.results import RESULTS_SCHEMA_VERSION, RunInfo, Shard
from toolbench.runner.options import RunOptions
from toolbench.runner.run import plan_run
from toolbench.store import iter_results, read_info
from toolbench.store.merge import merge_runs, scenario_contents
from toolbench.store.shards import file_sha256, parse_shard, shard_of

SCENARIOS = "\n".join(
    f"""\
- id: s{i}
  tools:
    - name: get_weather
      description: Get the weather for a city.
      parameters: {{type: object, properties: {{city: {{type: string}}}}, required: [city]}}
  messages:
    - {{role: user, content: "Weather in city {i}?"}}
  expect:
    calls:
      - name: get_weather
        arguments: {{city: Paris}}
"""
    for i in range(6)
)
FORMATS = "prompt-json,xml"


pytestmark = pytest.mark.usefixtures("openai_key")


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    path = tmp_path / "scen" / "six.yaml"
    path.parent.mkdir()
    path.write_text(SCENARIOS, encoding="utf-8")
    return path


def run(fake: FakeOpenAI, tmp: Path, suite: Path, out: str, *extra: str) -> int:
    return run_fake(fake, tmp, suite, "--samples", "2", *extra, out=out, formats=FORMATS)


def keys(run_dir: Path) -> set[tuple[str, str, str, int]]:
    return {t.key for t in iter_results(run_dir)}


# --------------------------------------------------------------------------- the split


def test_shard_of_is_a_stable_hash_of_the_key() -> None:
    """Pinned values: the split may never change between versions or machines."""
    assert shard_of("openai/gpt-4o", "xml", "weather", 0, 8) == 2
    assert shard_of("openai/gpt-4o", "xml", "weather", 1, 8) == 2
    assert shard_of("local/smollm2-135m", "prompt-json:shots=2", "nested-meeting", 0, 3) == 3
    digest = hashlib.sha256(b"openai/gpt-4o\0xml\0weather\x000").digest()
    assert (
        shard_of("openai/gpt-4o", "xml", "weather", 0, 97)
        == int.from_bytes(digest[:8], "big") % 97 + 1
    )
    # NUL-joined: the fields cannot run into each other.
    assert shard_of("a", "bc", "d", 0, 1000) != shard_of("ab", "c", "d", 0, 1000)


def test_every_trial_is_in_exactly_one_shard_and_shards_are_balanced() -> None:
    trials = [(f"m{m}", f"f{f}", f"s{s}", k) for m in range(3) for f in range(4)
              for s in range(50) for k in range(2)]  # fmt: skip
    counts = [0] * 8
    for t in trials:
        counts[shard_of(*t, 8) - 1] += 1
    assert sum(counts) == len(trials) == 1200
    assert min(counts) > 120 and max(counts) < 180  # 150 each, give or take


def test_plan_takes_the_same_trials_whatever_the_order(suite: Path, tmp_path: Path) -> None:
    def planned(formats: list[str], out: str) -> set[tuple[str, str, str, int]]:
        cfg = RunOptions(models=["openai/fake", "openai/other"], formats=formats,
                        scenarios=[str(suite)], samples=3, record="none",
                        out=tmp_path / out, shard=Shard(index=2, count=3))  # fmt: skip
        plan = plan_run(cfg)
        assert plan.lock is not None
        plan.lock.release()
        got = {(s.model, s.fmt.spec, s.scenario.id, s.sample) for s in plan.specs}
        assert plan.shard is not None and plan.shard.trials == len(got)
        return got

    a = planned(["xml", "prompt-json"], "a")
    b = planned(["prompt-json", "xml"], "b")
    assert a == b and 0 < len(a) < 2 * 2 * 6 * 3
    assert all(shard_of(*k, 3) == 2 for k in a)


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("3/2", "error: --shard: '3/2': K must be at most N (1 <= K <= N)"),
        ("0/4", "error: --shard: '0/4': K counts from 1 (1 <= K <= N)"),
        ("a/b", "error: --shard: 'a/b' is not K/N (two whole numbers, e.g. 1/4)"),
        ("1/0", "error: --shard: '1/0': N must be at least 1"),
        ("2", "error: --shard: '2' is not K/N (two whole numbers, e.g. 1/4)"),
        ("-1/4", "error: --shard: '-1/4' is not K/N (two whole numbers, e.g. 1/4)"),
        (" 1 / 2 ", "error: --shard: ' 1 / 2 ' is not K/N (two whole numbers, e.g. 1/4)"),
        ("1/2 ", "error: --shard: '1/2 ' is not K/N (two whole numbers, e.g. 1/4)"),
        (
            "\u0661/\u0662",
            "error: --shard: '\u0661/\u0662' is not K/N (two whole numbers, e.g. 1/4)",
        ),
    ],
)
def test_a_bad_shard_is_one_line_through_the_installed_cli(
    spec: str, error: str, tmp_path: Path
) -> None:
    exe = shutil.which("toolbench", path=str(Path(sys.executable).parent))
    assert exe is not None, "the toolbench console script is installed beside python"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "harness")}
    proc = subprocess.run(
        [exe, "run", "--record", "none", "--out", str(tmp_path / "r"), f"--shard={spec}"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", error + "\n")
    assert not (tmp_path / "r").exists()


def test_parse_shard_accepts_k_of_n() -> None:
    assert parse_shard("3/8") == Shard(index=3, count=8)
    assert parse_shard("1/1").label == "1/1"


# --------------------------------------------------------------------------- run + merge


def test_shards_run_and_merge_into_the_whole_run(
    fake: FakeOpenAI, tmp_path: Path, suite: Path
) -> None:
    assert run(fake, tmp_path, suite, "whole") == 0
    for k in (1, 2, 3):
        assert run(fake, tmp_path, suite, f"s{k}", "--shard", f"{k}/3", "--record", "none") == 0
    parts = [keys(tmp_path / f"s{k}") for k in (1, 2, 3)]
    assert all(parts) and sum(map(len, parts)) == len(keys(tmp_path / "whole")) == 24
    info = read_info(tmp_path / "s2")
    assert info is not None and info.shard == Shard(index=2, count=3, trials=len(parts[1]))
    assert scenario_contents(info) == {"six.yaml": file_sha256(suite)}

    rc = run_cli(["merge", *(str(tmp_path / f"s{k}") for k in (3, 1, 2)),
                  "-o", str(tmp_path / "merged")])  # fmt: skip
    assert rc == 0
    assert keys(tmp_path / "merged") == keys(tmp_path / "whole")
    merged = json.loads((tmp_path / "merged" / "run.json").read_text())
    assert "shard" not in merged and merged["merged_from"] == ["s3", "s1", "s2"]
    assert sorted(p.name for p in tmp_path.iterdir() if ".merging-" in p.name) == []


def test_resume_keeps_the_shard_of_the_run(fake: FakeOpenAI, tmp_path: Path, suite: Path) -> None:
    assert run(fake, tmp_path, suite, "s1", "--shard", "1/3") == 0
    assert run(fake, tmp_path, suite, "s1", "--resume") == 0  # nothing new to run
    info = read_info(tmp_path / "s1")
    assert info is not None and info.shard is not None and info.shard.label == "1/3"
    with pytest.raises(UserError, match=r"holds shard 1/3, not shard 2/3; resume it as it was"):
        plan_run(RunOptions(models=["openai/fake"], formats=FORMATS.split(","),
                           scenarios=[str(suite)], samples=2, record="none", resume=True,
                           out=tmp_path / "s1", shard=Shard(index=2, count=3)))  # fmt: skip


# --------------------------------------------------------------------------- refusals


@pytest.fixture
def shards(fake: FakeOpenAI, tmp_path: Path, suite: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for k in (1, 2, 3):
        assert run(fake, tmp_path, suite, f"s{k}", "--shard", f"{k}/3") == 0
    monkeypatch.chdir(tmp_path)
    return tmp_path


def edit_info(run_dir: Path, **changes: object) -> None:
    path = run_dir / "run.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}), encoding="utf-8")


def drop_last_line(run_dir: Path) -> None:
    path = run_dir / "results.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:-1]), encoding="utf-8")


def _partial(_: Path) -> None:
    drop_last_line(Path("s2"))


def _other_n(_: Path) -> None:
    edit_info(Path("s3"), shard={"index": 3, "count": 4, "trials": 1})


def _version(_: Path) -> None:
    edit_info(Path("s2"), toolbench_version="0.0.9")


def _scenarios(_: Path) -> None:
    info = json.loads((Path("s2") / "run.json").read_text())
    files = [{**f, "sha256": "0" * 64} for f in info["scenario_files"]]
    edit_info(Path("s2"), scenario_files=files)


def _stranger(_: Path) -> None:
    """s1 and s2 swap labels: s1's trials hash elsewhere than the shard it claims."""
    edit_info(Path("s1"), shard={"index": 2, "count": 3, "trials": 1})
    edit_info(Path("s2"), shard={"index": 1, "count": 3, "trials": 1})


def _matrix(_: Path) -> None:
    edit_info(Path("s3"), samples=3)


@pytest.mark.parametrize(
    ("argv", "setup", "error"),
    [
        (["s1", "s2", "s3"], _partial,
         "error: merge: s2: shard 2/3 is partial ({n} of {t} trials); "
         "complete it with toolbench run --resume --out s2"),
        (["s1", "s2"], None, "error: merge: shard(s) 3/3 missing; give every shard of the run"),
        (["s1", "s2", "s3"], _other_n,
         "error: merge: s3/run.json: shard 3/4 is not a part of the 3 shards of s1/run.json (1/3)"),
        (["s1", "s2", "s3"], _version,
         "error: merge: s2/run.json: toolbench_version (0.0.9) differs from s1/run.json ({v}); "
         "merge runs of one toolbench version"),
        (["s1", "s2", "s3"], _scenarios,
         "error: merge: s2/run.json: scenario_files differ from s1/run.json (first at "
         "six.yaml); merge runs of the same scenario files"),
        (["s1", "s2", "s3"], _matrix,
         "error: merge: s3/run.json: samples (3) differs from s1/run.json (2); "
         "only runs of one matrix merge"),
        (["s1", "s2", "s3"], _stranger, "error: merge: s1/results.jsonl: trial {first} "
         "is not in shard 2/3 its run.json names"),
    ],
)  # fmt: skip
def test_merge_of_shards_refuses_with_one_line(
    shards: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    setup: object,
    error: str,
) -> None:
    from toolbench import __version__

    if callable(setup):
        setup(shards)
    held = len(keys(Path("s2")))
    info = RunInfo.model_validate_json(Path("s2/run.json").read_bytes())
    first = next(iter_results(Path("s1")))
    want = error.format(
        n=held, t=info.shard.trials if info.shard else None, v=__version__,
        first=f"{first.model} / {first.format} / {first.scenario_id} #{first.sample}",
    )  # fmt: skip
    capsys.readouterr()
    code = run_cli(["merge", *argv, "-o", "m"])
    out, err = capsys.readouterr()
    assert (code, out, err) == (2, "", want + "\n")
    assert not Path("m").exists()
    assert [p.name for p in shards.iterdir() if ".merging-" in p.name] == []


def test_a_merge_into_a_non_empty_directory_is_refused(shards: Path) -> None:
    Path("m").mkdir()
    (Path("m") / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match=r"^-o: m is not empty; choose a new directory$"):
        merge_runs(["s1", "s2", "s3"], "m")
    Path("empty").mkdir()
    assert merge_runs(["s1", "s2", "s3"], "empty").trials == 24


def test_a_shard_run_twice_is_merged_once(shards: Path) -> None:
    shutil.copytree("s2", "s2-again")
    summary = merge_runs(["s1", "s2", "s2-again", "s3"], "m")
    assert summary.trials == 24 and summary.duplicates == len(keys(Path("s2")))
    assert {t.run_id for t in iter_results("m") if t.key in keys(Path("s2"))} == {"s2"}


def test_a_schema_2_run_json_reads_as_a_whole_run_without_hashes(tmp_path: Path) -> None:
    (tmp_path / "results.jsonl").write_text("")
    (tmp_path / "run.json").write_text(json.dumps({
        "schema_version": 2, "run_id": "old", "toolbench_version": "0.1.0",
        "created_at": "2026-01-01", "models": ["m"], "formats": ["xml"], "scenarios": ["s"],
        "merged_from": [],
    }))  # fmt: skip
    info = read_info(tmp_path)
    assert info is not None and (info.shard, info.scenario_files) == (None, [])


# --------------------------------------------------------------------------- scenario files


def test_shards_from_different_checkouts_merge(
    fake: FakeOpenAI, tmp_path: Path, suite: Path
) -> None:
    """Scenario files are compared by their path relative to the run's scenario
    directory: the same files checked out at two places merge."""
    elsewhere = tmp_path / "checkout-2" / "scen" / "six.yaml"
    elsewhere.parent.mkdir(parents=True)
    shutil.copy(suite, elsewhere)
    assert run(fake, tmp_path, suite, "s1", "--shard", "1/2") == 0
    assert run(fake, tmp_path, elsewhere, "s2", "--shard", "2/2") == 0
    a, b = read_info(tmp_path / "s1"), read_info(tmp_path / "s2")
    assert a is not None and b is not None
    assert a.scenario_files[0].path != b.scenario_files[0].path
    assert merge_runs([tmp_path / "s1", tmp_path / "s2"], tmp_path / "m").trials == 24


def test_a_scenario_file_of_another_name_is_refused(shards: Path) -> None:
    info = json.loads(Path("s3/run.json").read_text())
    files = [
        {**f, "path": f["path"].replace("six.yaml", "seven.yaml")} for f in info["scenario_files"]
    ]
    edit_info(Path("s3"), scenario_files=files)
    with pytest.raises(
        UserError,
        match=r"^merge: s3/run.json: scenario_files differ from "
        r"s1/run.json \(first at seven.yaml\); merge runs of the same scenario files$",
    ):
        merge_runs(["s1", "s2", "s3"], "m")


def as_schema_3(run_dir: Path, hashes: dict[str, str] | None = None) -> None:
    """Rewrite a run as toolbench wrote it at schema 3: ``run.json`` with
    ``scenario_hashes`` beside ``scenario_files``, every trial line at version 3."""
    info = json.loads((run_dir / "run.json").read_text())
    if hashes is None:
        hashes = {f["path"]: f["sha256"] for f in info["scenario_files"] if f["ids"]}
    edit_info(run_dir, schema_version=3, scenario_hashes=hashes)
    lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    old = [json.dumps({**json.loads(line), "schema_version": 3}) + "\n" for line in lines]
    (run_dir / "results.jsonl").write_text("".join(old), encoding="utf-8")


def test_schema_3_shards_load_merge_resume_and_rescore(
    fake: FakeOpenAI, shards: Path, suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for k in (1, 2, 3):
        as_schema_3(Path(f"s{k}"))
    info = read_info(Path("s1"))
    assert info is not None and info.schema_version == RESULTS_SCHEMA_VERSION
    assert "scenario_hashes" not in info.model_dump()
    assert scenario_contents(info) == {"six.yaml": file_sha256(suite)}

    assert merge_runs(["s1", "s2", "s3"], "m").trials == 24
    merged = json.loads(Path("m/run.json").read_text())
    assert merged["schema_version"] == RESULTS_SCHEMA_VERSION and "scenario_hashes" not in merged

    drop_last_line(Path("s2"))  # a partial schema-3 shard, completed by --resume
    assert run(fake, shards, suite, "s2", "--resume", "--record", "none") == 0
    resumed = read_info(Path("s2"))  # resume leaves run.json as it was: read migrated
    assert resumed is not None and resumed.shard is not None
    assert len(keys(Path("s2"))) == resumed.shard.trials
    assert {t.schema_version for t in iter_results(Path("s2"))} == {RESULTS_SCHEMA_VERSION}

    capsys.readouterr()
    assert run_cli(["rescore", "s1", "-o", "s1-re"]) == 0
    assert keys(Path("s1-re")) == keys(Path("s1"))


def test_schema_3_shards_of_other_scenario_contents_are_still_refused(shards: Path) -> None:
    """The hashes a schema-3 run.json held twice are read from ``scenario_files``."""
    info = json.loads(Path("s2/run.json").read_text())
    files = [{**f, "sha256": "0" * 64} for f in info["scenario_files"]]
    edit_info(Path("s2"), scenario_files=files)
    for k in (1, 2, 3):
        as_schema_3(Path(f"s{k}"))
    with pytest.raises(
        UserError, match=r"scenario_files differ from s1/run.json \(first at six.yaml\)"
    ):
        merge_runs(["s1", "s2", "s3"], "m")
