"""Complete run records (issue 9): run.json holds what resume, replay and rescore need.

End to end against the fake OpenAI-compatible server: per-model parameters reach the
request and are recorded (secrets redacted everywhere), a recording replays against
another port or no server at all, ``--resume --out DIR`` alone completes a run and
refuses a changed matrix, and ``rescore RUN`` reads the scenario files the run read.
"""

from __future__ import annotations

import hashlib
import json
import socket
from pathlib import Path

import pytest

from tests.runner.conftest import GOOD_CALL, run_fake
from tests.support.fake_openai import FakeOpenAI
from tests.support.secrets import forget_registered_secrets
from toolbench.cassettes import API_HOST
from toolbench.cli.app import run_cli
from toolbench.results import RESULTS_SCHEMA_VERSION
from toolbench.store import load_results

SECRET = "sk-test-header-secret-0123456789"
HEADERS = json.dumps({"Authorization": f"Bearer {SECRET}", "X-Team": "evals"})


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")
    monkeypatch.chdir(tmp_path)  # no toolbench.toml unless a test writes one
    forget_registered_secrets()


def _run(fake: FakeOpenAI, tmp: Path, scen: Path, *extra: str, base: str | None = None) -> int:
    return run_fake(fake, tmp, scen, "--concurrency", "1", *extra, api_base=base)


def _info(tmp: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((tmp / "run" / "run.json").read_text())
    return data


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_run_json_holds_the_matrix_files_params_and_api_base(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path
) -> None:
    fake.enqueue(GOOD_CALL, "A joke.")
    rc = _run(
        fake, tmp_path, scenario_file,
        "--model-param", "openai/fake:max_tokens=64",
        "--model-param", f"openai/fake:extra_headers={HEADERS}",
    )  # fmt: skip
    assert rc == 0
    info = _info(tmp_path)
    assert info["schema_version"] == RESULTS_SCHEMA_VERSION and "scenario_hashes" not in info
    assert info["cells"] == {"openai/fake": ["prompt-json"]}
    assert info["format_options"] == {
        "prompt-json": {
            "shots": 0, "doc": "text", "markup": "plain", "style": "own", "tag": "off",
            "constrained": False,
        }
    }  # fmt: skip
    digest = hashlib.sha256(scenario_file.read_bytes()).hexdigest()
    assert info["scenario_files"] == [
        {"path": str(scenario_file.resolve()), "sha256": digest, "ids": ["weather", "chat"]}
    ]
    assert info["model_params"] == {
        "openai/fake": {
            "max_tokens": 64,
            "extra_headers": {"Authorization": "<redacted>", "X-Team": "evals"},
        }
    }
    assert info["api_base"] == fake.base_url
    assert info["cassette_api_base"] == f"http://{API_HOST}/v1"
    assert info["cassette_dir"] == str(tmp_path / "cas")
    env = info["environment"]
    assert isinstance(env, dict) and env["litellm"][0].isdigit()
    # The parameters reached the server and the trial's record of what was asked and sent.
    assert [r.body["max_tokens"] for r in fake.received] == [64, 64]
    assert {r.headers["X-Team"] for r in fake.received} == {"evals"}
    assert {r.headers["Authorization"] for r in fake.received} == {f"Bearer {SECRET}"}
    (weather,) = [t for t in load_results(tmp_path / "run") if t.scenario_id == "weather"]
    assert weather.params is not None and weather.params.asked["max_tokens"] == 64
    assert {"max_tokens", "extra_headers"} <= set(weather.params.sent)
    # The header's secret reached no byte toolbench wrote.
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p != scenario_file]
    assert {p.suffix for p in written} >= {".json", ".jsonl"}
    assert [p for p in written if SECRET in p.read_text(errors="replace")] == []


def test_toml_parameters_apply_and_the_command_line_wins(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path
) -> None:
    (tmp_path / "toolbench.toml").write_text(
        '[models."openai/fake"]\ntemperature = 1\ntop_p = 0.5\n'
        '[models."openai/other"]\ntemperature = 0.3\n'
    )
    assert _run(fake, tmp_path, scenario_file, "--model-param", "openai/fake:top_p=0.9") == 0
    assert {(r.body["temperature"], r.body["top_p"]) for r in fake.received} == {(1, 0.9)}
    assert _info(tmp_path)["model_params"] == {"openai/fake": {"temperature": 1, "top_p": 0.9}}


def test_replay_finds_the_cassettes_on_another_port_without_a_server(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path
) -> None:
    fake.enqueue(GOOD_CALL, "A joke.")
    assert _run(fake, tmp_path, scenario_file) == 0
    first = {t.scenario_id: t.scores for t in load_results(tmp_path / "run")}
    cassette = (tmp_path / "cas" / "openai_fake" / "prompt-json" / "weather.json").read_text()
    assert f"http://{API_HOST}/v1/chat/completions" in cassette
    assert fake.base_url.split("//")[1].split("/")[0] not in cassette
    nobody = f"http://localhost:{_free_port()}/v1"  # nothing listens there
    rc = run_cli([
        "run", "--models", "openai/fake", "--formats", "prompt-json",
        "--scenarios", str(scenario_file), "--api-base", nobody, "--record", "none",
        "--out", str(tmp_path / "replay"), "--cassettes", str(tmp_path / "cas"),
        "--quiet", "--no-report",
    ])  # fmt: skip
    assert rc == 0
    again = load_results(tmp_path / "replay")
    assert {t.status for t in again} == {"ok"}
    assert {t.scenario_id: t.scores for t in again} == first
    assert len(fake.received) == 2


def _cut_to_first_trial(run_dir: Path) -> None:
    res = run_dir / "results.jsonl"
    res.write_text(res.read_text().splitlines()[0] + "\n")


def test_resume_needs_only_out(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.enqueue(GOOD_CALL, "A joke.")
    assert _run(fake, tmp_path, scenario_file, "--model-param", "openai/fake:top_p=0.5") == 0
    _cut_to_first_trial(tmp_path / "run")
    fake.received.clear()
    out = str(tmp_path / "run")
    # No --models, --formats, --scenarios, --api-base or --cassettes: all from run.json
    # (the missing trial replays from the run's cassette directory).
    assert run_cli(["run", "--resume", "--out", out, "--quiet", "--no-report"]) == 0
    results = load_results(tmp_path / "run")
    assert sorted(t.scenario_id for t in results) == ["chat", "weather"]
    assert {t.model for t in results} == {"openai/fake"} and fake.received == []
    # Resuming with the same options still works.
    _cut_to_first_trial(tmp_path / "run")
    assert _run(fake, tmp_path, scenario_file, "--resume", "--model-param",
                "openai/fake:top_p=0.5") == 0  # fmt: skip
    assert len(load_results(tmp_path / "run")) == 2
    assert capsys.readouterr().err == ""


def _other_scenarios(tmp: Path) -> Path:
    path = tmp / "other.yaml"
    path.write_text("id: other\nmessages: [{role: user, content: hi}]\nexpect: {no_call: true}\n")
    return path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--formats", "xml"], "--formats differs from the run in {info} "
         "(run: openai/fake: prompt-json; given: openai/fake: xml)"),
        (["--models", "openai/other"], "--models differs from the run in {info} "
         "(run: openai/fake; given: openai/other)"),
        (["--samples", "2"], "--samples differs from the run in {info} (run: 1; given: 2)"),
        (["--scenarios", "{other}"], "--scenarios differs from the run in {info} "
         "(adds other)"),
        (["--model-param", "openai/fake:top_p=0.9"], "--model-param differs from the run in "
         "{info} (run: openai/fake: top_p=0.5; given: openai/fake:top_p=0.9)"),
        (["--model-param", "openai/fake:seed=7"], "--model-param differs from the run in "
         "{info} (run: openai/fake: no seed; given: openai/fake:seed=7)"),
    ],
)  # fmt: skip
def test_resume_refuses_a_changed_matrix(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path,
    capsys: pytest.CaptureFixture[str], args: list[str], message: str,
) -> None:  # fmt: skip
    assert _run(fake, tmp_path, scenario_file, "--model-param", "openai/fake:top_p=0.5") == 0
    _cut_to_first_trial(tmp_path / "run")
    other = _other_scenarios(tmp_path)
    capsys.readouterr()
    argv = [a.format(other=other) for a in args]
    rc = run_cli(["run", "--resume", "--out", str(tmp_path / "run"), "--quiet", *argv])
    assert rc == 2
    info = tmp_path / "run" / "run.json"
    assert capsys.readouterr().err == f"error: --resume: {message.format(info=info)}\n"
    assert len(load_results(tmp_path / "run")) == 1


def test_resume_and_rescore_refuse_a_changed_or_missing_scenario_file(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(fake, tmp_path, scenario_file) == 0
    _cut_to_first_trial(tmp_path / "run")
    old = hashlib.sha256(scenario_file.read_bytes()).hexdigest()
    scenario_file.write_text(scenario_file.read_text().replace("Paris?", "Lyon?"))
    new = hashlib.sha256(scenario_file.read_bytes()).hexdigest()
    capsys.readouterr()
    path = scenario_file.resolve()
    changed = (
        f"scenario file {path} changed since the run (sha256 {new[:12]}, the run read {old[:12]})"
    )
    assert run_cli(["run", "--resume", "--out", str(tmp_path / "run"), "--quiet"]) == 2
    assert capsys.readouterr().err == f"error: --resume: {changed}\n"
    assert run_cli(["rescore", str(tmp_path / "run"), "-o", str(tmp_path / "r")]) == 2
    assert capsys.readouterr().err == f"error: rescore: {changed}\n"
    scenario_file.unlink()
    assert run_cli(["rescore", str(tmp_path / "run"), "-o", str(tmp_path / "r")]) == 2
    assert capsys.readouterr().err == (
        f"error: rescore: scenario file {path} is missing (the run read it)\n"
    )
    assert not (tmp_path / "r" / "results.jsonl").exists()


def test_rescore_reads_the_runs_own_scenario_files(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.enqueue(GOOD_CALL, "A joke.")
    assert _run(fake, tmp_path, scenario_file) == 0
    capsys.readouterr()
    # No --scenarios: these ids are not in the bundled suite, yet every trial is rescored.
    assert run_cli(["rescore", str(tmp_path / "run"), "-o", str(tmp_path / "r")]) == 0
    assert capsys.readouterr().out.startswith(f"rescored 2 of 2 trials into {tmp_path / 'r'}")
    old = {t.key: t.scores for t in load_results(tmp_path / "run")}
    assert {t.key: t.scores for t in load_results(tmp_path / "r")} == old


def test_a_changed_tool_set_is_a_changed_scenario(
    fake: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scen = tmp_path / "scen"
    (scen / "tools").mkdir(parents=True)
    tools = scen / "tools" / "weather.yaml"
    tools.write_text("- name: get_weather\n  parameters: {type: object, properties: {}}\n")
    (scen / "s.yaml").write_text(
        "id: ref\ntools: [{ref: weather}]\nmessages: [{role: user, content: hi}]\n"
        "expect: {no_call: true}\n"
    )
    assert _run(fake, tmp_path, scen / "s.yaml") == 0
    files = _info(tmp_path)["scenario_files"]
    assert isinstance(files, list)
    assert [(f["path"], f["ids"]) for f in files] == [
        (str((scen / "s.yaml").resolve()), ["ref"]),
        (str(tools.resolve()), []),
    ]
    tools.write_text(tools.read_text().replace("{}", "{x: {type: string}}"))
    capsys.readouterr()
    assert run_cli(["rescore", str(tmp_path / "run"), "-o", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: rescore: tool set {tools.resolve()} changed since the run")


def test_resume_gets_a_redacted_header_back_or_refuses(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    param = f"openai/fake:extra_headers={HEADERS}"
    assert _run(fake, tmp_path, scenario_file, "--model-param", param) == 0
    _cut_to_first_trial(tmp_path / "run")
    forget_registered_secrets()  # a new process: the secret is nowhere but run.json, redacted
    capsys.readouterr()
    out = ["run", "--resume", "--out", str(tmp_path / "run"), "--quiet", "--no-report"]
    assert run_cli(out) == 2
    assert capsys.readouterr().err == (
        "error: --resume: openai/fake: extra_headers holds a secret run.json stores "
        "redacted; give it again with --model-param\n"
    )
    # From toolbench.toml (the file that held it), the secret comes back and is sent.
    (tmp_path / "toolbench.toml").write_text(
        f'[models."openai/fake".extra_headers]\nAuthorization = "Bearer {SECRET}"\n'
        'X-Team = "evals"\n'
    )
    cassettes = tmp_path / "cas" / "openai_fake" / "prompt-json"
    for cassette in cassettes.glob("*.json"):
        cassette.unlink()  # the trial left must reach the server
    fake.received.clear()
    assert run_cli(out) == 0
    assert [r.headers["Authorization"] for r in fake.received] == [f"Bearer {SECRET}"]
    assert len(load_results(tmp_path / "run")) == 2
    assert [p for p in cassettes.glob("*.json") if SECRET in p.read_text()] == []


@pytest.mark.parametrize(
    ("text", "refs"),
    [
        ("- id: a\n  tools:\n    - ref: weather\n", ["weather"]),
        ("- {id: a, tools: [{ref: weather, only: [x]}, {ref: maps}]}\n", ["maps", "weather"]),
        ('scenarios:\n  - id: a\n    tools:\n      - "ref": weather\n', ["weather"]),
        ("- id: a\n  tools:\n    - name: prefer\n      description: 'my_ref: x'\n", []),
        ("- id: a\n  prompt: no tool sets here\n", []),
    ],
)
def test_the_tool_sets_a_scenario_file_references(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, refs: list[str]
) -> None:
    """Found in the parsed file; a file whose text holds no ``ref`` key is not parsed."""
    from toolbench.runner import records

    path = tmp_path / "s.yaml"
    path.write_text(text)
    parsed: list[Path] = []
    real = records.read_yaml
    monkeypatch.setattr(records, "read_yaml", lambda p: parsed.append(p) or real(p))
    assert records._tool_set_paths(path) == [tmp_path / "tools" / f"{r}.yaml" for r in refs]
    assert bool(parsed) == bool(refs)
