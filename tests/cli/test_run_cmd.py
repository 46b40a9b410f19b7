"""``toolbench run``: every bad option is a one-line error with exit 2, before any call."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.runner.conftest import SCENARIO
from tests.support.fake_openai import FakeOpenAI

from toolbench.cassettes import LOCAL_HOST
from toolbench.cli.app import run_cli
from toolbench.store import load_results


@pytest.fixture
def scen(tmp_path: Path) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(SCENARIO)
    return p


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--formats", "xmll"],
            "error: unknown format 'xmll'. Did you mean 'xml'? "
            "Available: claude-xml, deepseek, harmony, kimi-k2, llama3-json, mistral, native, "
            "nl-tools, prompt-json, prompt-xml, pythonic, qwen3-coder, react, reason-then-call, "
            "xml",
        ),
        (["--formats", "prompt-json:shots=x"],
         "error: format 'prompt-json:shots=x': option shots: "
         "Input should be a valid integer, unable to parse string as an integer"),
        (["--record", "sometimes"],
         "error: --record: must be one of none, new, all (got 'sometimes')"),
        (["--resume"], "error: --resume: needs --out pointing at the run to complete"),
        (["--samples", "0"], "error: --samples: must be at least 1"),
        (["--models", "local/tinyllama"],
         "error: unknown local model 'local/tinyllama'. "
         "Available: local/gemma3-270m, local/smollm2-135m"),
    ],
)  # fmt: skip
def test_bad_options(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["run", "--quiet", *args]) == 2
    assert capsys.readouterr().err == message + "\n"


def test_unknown_scenario_did_you_mean(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["run", "--quiet", "--scenarios", "weather-pariss"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "error: unknown scenario or tag 'weather-pariss'. Did you mean 'weather-paris'?"
    )
    assert err.count("\n") == 1


def test_missing_api_key_is_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], scen: Path
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    rc = run_cli(["run", "--quiet", "--models", "anthropic/claude-3-5-haiku-latest",
                  "--scenarios", str(scen)])  # fmt: skip
    assert rc == 2
    assert capsys.readouterr().err == (
        "error: model anthropic/claude-3-5-haiku-latest "
        "needs ANTHROPIC_API_KEY in the environment\n"
    )


def test_replay_needs_no_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, scen: Path) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    rc = run_cli(["run", "--quiet", "--no-report", "--models", "anthropic/claude-3-5-haiku-latest",
                  "--scenarios", str(scen), "--record", "none", "--out", str(tmp_path / "r"),
                  "--cassettes", str(tmp_path / "none")])  # fmt: skip
    assert rc == 3  # nothing measured: every trial misses its cassette
    assert {r.status for r in load_results(tmp_path / "r")} == {"cassette_missing"}


def test_local_replay_starts_no_server(tmp_path: Path, scen: Path) -> None:
    """Replaying local models needs no llama-server: a gap is a missing cassette."""
    rc = run_cli(["run", "--quiet", "--no-report", "--models", "local/smollm2-135m",
                  "--formats", "xml", "--scenarios", str(scen), "--record", "none",
                  "--out", str(tmp_path / "r"), "--cassettes", str(tmp_path / "cas")])  # fmt: skip
    assert rc == 3
    results = load_results(tmp_path / "r")
    assert {r.status for r in results} == {"cassette_missing"}
    assert not (tmp_path / "r" / "logs").exists()  # no server log: no server


def test_unsupported_native_is_its_own_outcome(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, scen: Path
) -> None:
    from tests.support.fake_openai import Fault

    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")
    body = (
        b'{"error": {"message": "This model does not support tools.",'
        b' "type": "invalid_request_error"}}'
    )
    with FakeOpenAI() as fake:
        fake.enqueue(Fault(400, body=body), Fault(400, body=body))
        rc = run_cli(["run", "--quiet", "--no-report", "--models", "openai/fake",
                      "--formats", "native", "--scenarios", str(scen), "--api-base", fake.base_url,
                      "--out", str(tmp_path / "r"), "--cassettes", str(tmp_path / "cas"),
                      "--concurrency", "1"])  # fmt: skip
    assert rc == 3
    results = load_results(tmp_path / "r")
    assert {r.status for r in results} == {"unsupported"}
    assert all(r.scores is None for r in results)


def test_help_does_not_import_litellm() -> None:
    code = (
        "import sys, io, contextlib\n"
        "from toolbench.cli.app import run_cli\n"
        "with contextlib.redirect_stdout(io.StringIO()): rc = run_cli(['--help'])\n"
        "print(rc, 'litellm' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0", "False"]


def test_stop_list_is_cut_to_four_before_sending() -> None:
    from toolbench.formats.base import RenderedRequest
    from toolbench.providers.model_api import Endpoint
    from toolbench.providers.turn_request import build_request

    req, params = build_request(
        Endpoint("openai/x"),
        RenderedRequest(messages=[{"role": "user", "content": "hi"}], stop=list("abcdef")),
        seed=7,
    )
    assert req["stop"] == ["a", "b", "c", "d"]
    assert req["seed"] == 7 and req["temperature"] == 0
    assert params.asked["stop"] == list("abcdef")
    assert params.dropped == {"stop": "2 of 6 entries cut (limit 4)"}


def test_local_placeholder_is_not_a_real_host() -> None:
    assert LOCAL_HOST.endswith(".toolbench")


def test_repeated_models_and_formats_run_once(tmp_path: Path, scen: Path) -> None:
    twice = "local/smollm2-135m,local/smollm2-135m"
    rc = run_cli(["run", "--quiet", "--no-report", "--models", twice,
                  "--formats", "xml,xml,xml:shots=0", "--scenarios", str(scen), "--record", "none",
                  "--out", str(tmp_path / "r"), "--cassettes", str(tmp_path / "cas")])  # fmt: skip
    assert rc == 3  # replayed without cassettes: nothing measured
    keys = [r.key for r in load_results(tmp_path / "r")]
    assert sorted(keys) == [
        ("local/smollm2-135m", "xml", "chat", 0),
        ("local/smollm2-135m", "xml", "weather", 0),
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--formats", ""], "error: --formats: no format given in ''"),
        (["--formats", ",,,"], "error: --formats: no format given in ',,,'"),
        (["--formats", "native:"],
         "error: --formats: 'native:' has a ':' but no options (write 'native')"),
        (["--api-base", "not a url"],
         "error: --api-base: 'not a url' is not an http:// or https:// URL with a host"),
        (["--api-base", "ftp://models.example/v1"],
         "error: --api-base: 'ftp://models.example/v1' is not an http:// or https:// URL "
         "with a host"),
        (["--api-base", "http://[::1"],
         "error: --api-base: 'http://[::1' is not a valid URL: Invalid IPv6 URL"),
        (["--api-base", "http://localhost:99999/v1"],
         "error: --api-base: 'http://localhost:99999/v1' is not a valid URL: "
         "Port out of range 0-65535"),
        (["--timeout", "0"], "error: --timeout: must be more than 0 seconds"),
        (["--budget", "-5"], "error: --budget: must be more than 0 seconds"),
    ],
)  # fmt: skip
def test_bad_options_refused_up_front(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rc = run_cli(["run", "--quiet", "--out", str(tmp_path / "r"), *args])
    assert (rc, capsys.readouterr().err) == (2, message + "\n")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("option", "where", "message"),
    [
        ("--out", "file", "error: --out: {file} is a file, not a directory"),
        ("--out", "file/sub", "error: --out: {file}/sub is under a file ({file}), not a directory"),
        ("--cassettes", "file", "error: --cassettes: {file} is a file, not a directory"),
        ("--cassettes", "file/a/b",
         "error: --cassettes: {file}/a/b is under a file ({file}), not a directory"),
    ],
)  # fmt: skip
def test_unwritable_directories_are_refused(
    option: str, where: str, message: str, tmp_path: Path, scen: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    file = tmp_path / "file"
    file.write_text("not a directory")
    args = {"--out": str(tmp_path / "r"), "--cassettes": str(tmp_path / "cas")}
    args[option] = str(tmp_path / where)
    rc = run_cli(["run", "--quiet", "--no-report", "--models", "local/smollm2-135m",
                  "--formats", "xml", "--scenarios", str(scen),
                  *[x for kv in args.items() for x in kv]])  # fmt: skip
    assert (rc, capsys.readouterr().err) == (2, message.format(file=file) + "\n")


def test_resume_of_a_missing_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = run_cli(["run", "--quiet", "--resume", "--out", str(tmp_path / "nope")])
    assert rc == 2
    assert capsys.readouterr().err == (
        f"error: --resume: {tmp_path / 'nope'} does not exist (nothing to resume)\n"
    )
    assert not (tmp_path / "nope").exists()


def test_replay_may_name_a_cassette_dir_under_a_file_it_never_writes(
    tmp_path: Path, scen: Path
) -> None:
    """Only recording writes cassettes: --record none does not check --cassettes."""
    (tmp_path / "file").write_text("x")
    rc = run_cli(["run", "--quiet", "--no-report", "--models", "local/smollm2-135m",
                  "--formats", "xml", "--scenarios", str(scen), "--record", "none",
                  "--out", str(tmp_path / "r"),
                  "--cassettes", str(tmp_path / "file" / "c")])  # fmt: skip
    assert rc == 3
    assert {r.status for r in load_results(tmp_path / "r")} == {"cassette_missing"}
