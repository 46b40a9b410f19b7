"""The fuzz corpus of issue 22 as tables, through the installed ``toolbench`` script.

Each table holds one class of hostile input, so the next case is one row: option
values (refused before any call), run-file lines (one verdict from every command that
reads a run), scenario files. Every row asserts the exact ``error:`` line and exit 2,
and that no traceback was printed.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.cli.test_usage_errors import toolbench

from toolbench.runner.options import MAX_TRIALS

RUN = ["run", "--models", "openai/x", "--record", "none", "--scenarios", "weather-paris",
       "--formats", "xml", "--quiet", "--no-report"]  # fmt: skip
"""A replay of one trial: nothing is called, so only the refusals are measured."""


def param(value: str) -> list[str]:
    return [*RUN, "--model-param", f"openai/x:{value}"]


def takes(what: str) -> str:
    return f"error: --model-param: openai/x: {what}"


# (argv, the exact stderr line)
OPTION_VALUES: dict[str, tuple[list[str], str]] = {
    "temperature-nan": (
        param("temperature=NaN"),
        takes("temperature takes a number from 0 to 2 (got NaN)"),
    ),
    "temperature-text": (
        param("temperature=abc"),
        takes('temperature takes a number from 0 to 2 (got "abc")'),
    ),
    "temperature-empty": (
        param("temperature="),
        takes('temperature takes a number from 0 to 2 (got "")'),
    ),
    "temperature-brace": (
        param("temperature={"),
        takes('temperature takes a number from 0 to 2 (got "{")'),
    ),
    "temperature-negative": (
        param("temperature=-1"),
        takes("temperature takes a number from 0 to 2 (got -1)"),
    ),
    "max-tokens-overflow": (
        param("max_tokens=1e999"),
        takes("max_tokens takes a whole number from 1 to 10000000 (got Infinity)"),
    ),
    "max-tokens-fraction": (
        param("max_tokens=1.5"),
        takes("max_tokens takes a whole number from 1 to 10000000 (got 1.5)"),
    ),
    "top-p-above-one": (param("top_p=2"), takes("top_p takes a number from 0 to 1 (got 2)")),
    "stop-number": (param("stop=5"), takes("stop takes a text or a list of texts (got 5)")),
    "extra-headers-list": (
        param("extra_headers=[1]"),
        takes("extra_headers takes a JSON object of header names to text values"),
    ),
    # the value is never shown: it may hold the credential the header carries
    "extra-headers-number-value": (
        param('extra_headers={"X-Pass":123456789}'),
        takes("extra_headers takes a JSON object of header names to text values"),
    ),
    "extra-body-number": (
        param("extra_body=5"),
        takes("extra_body takes a JSON object of request fields"),
    ),
    "secret-of-a-model-not-in-run": (
        [*RUN, "--model-param", 'openai/y:extra_headers={"x-api-key":"sk-planted-123456"}'],
        "error: --model-param: 'openai/y:extra_headers=<redacted>': model 'openai/y' is not"
        " in --models (openai/x)",
    ),
    "secret-without-model": (
        [*RUN, "--model-param", 'extra_body={"client_secret":"cs-planted-123456"}'],
        "error: --model-param: 'extra_body=<redacted>' has no ':' (write MODEL:key=value)",
    ),
    "samples-huge": (
        [*RUN, "--samples", "100000000"],
        f"error: --samples: 100000000 samples make 100000000 trials (1 model-format cell(s) x"
        f" 1 scenario(s) x 100000000); a run holds at most {MAX_TRIALS} trials",
    ),
    "api-base-query": (
        [*RUN, "--api-base", "http://h.test/v1?token=tok-planted-1234"],
        "error: --api-base: 'http://h.test/v1?token=<redacted>' has a query string or fragment"
        " (give the base URL alone; a key goes in the provider's environment variable)",
    ),
    "fallback-twice": (
        [*RUN[:-4], "--formats", "xml|xml"],
        "error: format 'xml|xml': 'xml' appears twice (a fallback parses what the formats"
        " before it find no call in; the same format finds none again)",
    ),
    "timeout-inf": (
        [*RUN, "--timeout", "inf"],
        "error: --timeout: must be a finite number of seconds (got inf)",
    ),
    "budget-inf": (
        [*RUN, "--budget", "inf"],
        "error: --budget: must be a finite number of seconds (got inf)",
    ),
    "model-without-name": (
        ["run", "--models", "openai/", "--record", "none"],
        "error: --models: 'openai/' has an empty part (write PROVIDER/MODEL, e.g. openai/gpt-4o)",
    ),
    "gate-rate-above-one": (
        ["gate", "base", "--min", "call_accuracy=2"],
        "error: --min 'call_accuracy=2': call_accuracy is a rate from 0 to 1 (got 2)",
    ),
    "gate-rate-below-zero": (
        ["gate", "base", "--max", "infra_error_rate=-0.5"],
        "error: --max 'infra_error_rate=-0.5': infra_error_rate is a rate from 0 to 1 (got -0.5)",
    ),
    "resume-without-run-json": (
        ["run", "--resume", "--out", "norun"],
        "error: --resume: norun/run.json does not exist (nothing to resume)",
    ),
    "resume-run-json-is-a-directory": (
        ["run", "--resume", "--out", "dirrun"],
        "error: --resume: dirrun/run.json is a directory, not a file (nothing to resume)",
    ),
}


def _with_first(change: Callable[[dict[str, object]], None]) -> Callable[[bytes], bytes]:
    """A results file whose first line is ``change``d (it stays one JSON line)."""

    def edit(data: bytes) -> bytes:
        first, rest = data.split(b"\n", 1)
        d = json.loads(first)
        change(d)
        return json.dumps(d, separators=(",", ":")).encode() + b"\n" + rest

    return edit


def _append(tail: bytes) -> Callable[[bytes], bytes]:
    return lambda data: data + tail


STATUSES = (
    "'ok', 'infra_error', 'unsupported', 'cassette_missing', 'cassette_unreadable' or"
    " 'harness_error'"
)
# (how the run's results file is changed, the error after "RUN/results.jsonl:")
RUN_FILE_LINES: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "unknown-status": (
        _with_first(lambda d: d.update(status="weird")),
        f"1: status: Input should be {STATUSES}",
    ),
    "unknown-field": (
        _with_first(lambda d: d.update(zzz=1)),
        "1: zzz: Extra inputs are not permitted",
    ),
    "bad-score": (
        _with_first(lambda d: d.update(scores={**SCORES, "values": {"parse": "weird"}})),
        "1: scores.values.parse: Input should be a valid dictionary or instance of ScoreValue",
    ),
    "deeply-nested-line": (
        _append(b"[" * 200_000 + b"\n"),
        "3: not a results file: nested too deeply to decode",
    ),
    "deeply-nested-object": (
        _append(b'{"schema_version":4,"x":' + b"[" * 200_000 + b"\n"),
        "3: not a results file: nested too deeply to decode",
    ),
    "binary-tail": (
        _append(b"\x00\x01\x02 binary"),
        "3: not a results file: an unterminated line of binary data",
    ),
    "not-an-object": (_append(b"[1, 2]\n"), "3: expected a JSON object"),
}
SCORES = {"values": {"parse": {"value": "strict"}}, "errors": [], "reasons": []}
READERS: dict[str, list[str]] = {
    "report": ["report", "{run}", "-o", "out/r.html"],
    "report-md": ["report", "{run}", "--to", "md", "-o", "out/r.md"],
    "gate": ["gate", "{run}", "--max", "infra_error_rate=1"],
    "rescore": ["rescore", "{run}", "-o", "out/rescored-{run}"],
    "compare": ["compare", "{run}", "base", "--json"],
    "export": ["export", "{run}", "--to", "csv", "-o", "out/t.csv"],
    "resume": ["run", "--resume", "--out", "{run}", "--record", "none", "--quiet", "--no-report"],
}
"""Every command that reads a run, each given the same hostile file."""


SCENARIO = """\
id: s
tools: [{name: f, parameters: {type: object, properties: {x: {type: number}}}}]
messages: [{role: user, content: hi}]
expect: {calls: [{name: f, arguments: {x: 3}}]}
"""
# (the file's text, or None for a directory of that name; the error after "error: ")
SCENARIO_FILES: dict[str, tuple[str | None, str]] = {
    "empty-scenarios.yaml": (
        "scenarios: []\n",
        "empty-scenarios.yaml: scenarios: an empty list (a file holds at least one)",
    ),
    "empty-list.yaml": (
        "[]\n",
        "empty-list.yaml: scenarios: an empty list (a file holds at least one)",
    ),
    "no-rounds.yaml": (
        SCENARIO.replace("{calls: [{name: f, arguments: {x: 3}}]}", "{rounds: []}"),
        "no-rounds.yaml: expect.rounds: list should have at least 1 item after validation, not 0",
    ),
    "approx-text.yaml": (
        SCENARIO.replace("{x: 3}", '{x: {approx: "3.0"}}'),
        "approx-text.yaml: expect.calls[0].arguments.x.approx: input should be a valid number",
    ),
    "tol-text.yaml": (
        SCENARIO.replace("{x: 3}", '{x: {approx: 3, tol: "0.1"}}'),
        "tol-text.yaml: expect.calls[0].arguments.x.tol: input should be a valid number",
    ),
    "s.yaml": (None, "s.yaml: a directory, not a scenario file"),
}
"""Each row is checked by ``scenarios list`` and by ``run --scenarios`` (same line)."""


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("hostile")
    # A real run of two trials (replayed without cassettes: recorded, not measured).
    made = toolbench(
        ["run", "--models", "openai/x", "--record", "none", "--scenarios",
         "weather-paris,stock-aapl", "--formats", "xml", "--out", "base", "--quiet",
         "--no-report"],
        d,
    )  # fmt: skip
    assert made.returncode == 3, made.stderr
    for name, (change, _) in RUN_FILE_LINES.items():
        shutil.copytree(d / "base", d / name)
        path = d / name / "results.jsonl"
        path.write_bytes(change(path.read_bytes()))
    shutil.copytree(d / "base", d / "deep-info")
    (d / "deep-info" / "run.json").write_bytes(b"[" * 200_000)
    (d / "norun").mkdir()
    (d / "dirrun" / "run.json").mkdir(parents=True)
    (d / "scen").mkdir()
    for name, (text, _) in SCENARIO_FILES.items():
        if text is None:
            (d / "scen" / name).mkdir()
        else:
            (d / "scen" / name).write_text(text)
    (d / "scen" / "approx-number.yaml").write_text(SCENARIO.replace("{x: 3}", "{x: {approx: 3}}"))
    return d


@pytest.mark.parametrize("case", sorted(OPTION_VALUES))
def test_option_value_is_refused_before_any_call(case: str, workdir: Path) -> None:
    argv, line = OPTION_VALUES[case]
    done = toolbench(argv, workdir)
    assert "Traceback" not in done.stderr + done.stdout
    assert done.stderr == line + "\n"
    assert done.returncode == 2


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize("case", sorted(RUN_FILE_LINES))
def test_every_reader_gives_one_verdict(case: str, reader: str, workdir: Path) -> None:
    argv = [a.format(run=case) for a in READERS[reader]]
    done = toolbench(argv, workdir)
    assert "Traceback" not in done.stderr + done.stdout
    assert done.stderr == f"error: {case}/results.jsonl:{RUN_FILE_LINES[case][1]}\n"
    assert done.returncode == 2


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_deeply_nested_run_json_is_one_line(reader: str, workdir: Path) -> None:
    done = toolbench([a.format(run="deep-info") for a in READERS[reader]], workdir)
    assert "Traceback" not in done.stderr + done.stdout
    assert (
        done.stderr
        == "error: deep-info/run.json: not a valid run.json: nested too deeply to decode\n"
    )
    assert done.returncode == 2


def test_the_base_run_is_read_by_every_reader(workdir: Path) -> None:
    """The rows above fail for their line, not for the run they were made from."""
    for reader, argv in READERS.items():
        if reader in ("rescore", "resume"):
            continue  # they write: covered by their own tests
        done = toolbench([a.format(run="base") for a in argv], workdir)
        assert "error:" not in done.stderr, (reader, done.stderr)


def test_parameter_secrets_reach_no_file(workdir: Path) -> None:
    """A header outside every word list and a credential-named body field are secrets:
    run.json records them redacted."""
    secrets = ("custom-pass-planted-1", "client-secret-planted-2")
    done = toolbench(
        [*RUN, "--out", "secret-run", "--model-param",
         f'openai/x:extra_headers={{"X-Custom-Pass":"{secrets[0]}"}}', "--model-param",
         f'openai/x:extra_body={{"client_secret":"{secrets[1]}","user":"team-blue"}}'],
        workdir,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    written = [p for p in (workdir / "secret-run").rglob("*") if p.is_file()]
    info = (workdir / "secret-run" / "run.json").read_text()
    assert '"X-Custom-Pass": "<redacted>"' in info and '"user": "team-blue"' in info
    for path in written:
        for secret in secrets:
            assert secret.encode() not in path.read_bytes(), (secret, path)


@pytest.mark.parametrize("command", ["list", "run"])
@pytest.mark.parametrize("case", sorted(SCENARIO_FILES))
def test_scenario_file_is_refused_naming_it(case: str, command: str, workdir: Path) -> None:
    argv = ["scenarios", "list", case] if command == "list" else [*RUN[:6], case]
    done = toolbench(argv, workdir / "scen")
    assert "Traceback" not in done.stderr + done.stdout
    assert done.stderr == f"error: {SCENARIO_FILES[case][1]}\n"
    assert done.returncode == 2


def test_a_number_written_as_one_is_taken(workdir: Path) -> None:
    done = toolbench(["scenarios", "list", "approx-number.yaml"], workdir / "scen")
    assert (done.returncode, done.stderr) == (0, "")


BFCL_LINES = {
    "good": (
        '{"id": "simple_python_0", "question": [[{"role": "user", "content": "hi"}]],'
        ' "function": [{"name": "f", "parameters": {"type": "dict", "properties": {}}}]}',
        '{"id": "simple_python_0", "ground_truth": [{"f": {}}]}',
    ),
    # one BFCL release lists a parameter of f as if it were a function
    "parameter-as-function": (
        '{"id": "simple_python_1", "question": [[{"role": "user", "content": "hi"}]],'
        ' "function": [{"name": "f", "parameters": {"type": "dict", "properties":'
        ' {"x": {"type": "integer"}}}}]}',
        '{"id": "simple_python_1", "ground_truth": [{"f": {"x": [1]}}, {"x": [1]}]}',
    ),
    "malformed": ('{"id": "simple_python_2", oops', '{"id": "simple_python_2"}'),
}


def test_import_bfcl_skip_bad_reports_each_bad_entry(workdir: Path) -> None:
    """Refused by default (tests/cli/test_usage_errors.py); with --skip-bad each bad
    entry is one line naming file, line and reason, and the summary counts them."""
    folder = workdir / "bfcl-mixed"
    (folder / "possible_answer").mkdir(parents=True)
    name = "BFCL_v4_simple_python.json"
    (folder / name).write_text("".join(q + "\n" for q, _ in BFCL_LINES.values()))
    (folder / "possible_answer" / name).write_text(
        "".join(a + "\n" for _, a in BFCL_LINES.values())
    )
    refused = toolbench(["import", "bfcl", "bfcl-mixed", "-o", "bfcl-refused"], workdir)
    assert refused.returncode == 2 and not (workdir / "bfcl-refused").exists()
    assert refused.stderr == (
        "error: bfcl-mixed/BFCL_v4_simple_python.json:3: malformed JSON line: Expecting"
        " property name enclosed in double quotes\n"
    )
    done = toolbench(["import", "bfcl", "bfcl-mixed", "-o", "bfcl-out", "--skip-bad"], workdir)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [
        "simple_python: 1 scenarios",
        "bad entry bfcl-mixed/BFCL_v4_simple_python.json:3: malformed JSON line: Expecting"
        " property name enclosed in double quotes",
        "bad entry bfcl-mixed/possible_answer/BFCL_v4_simple_python.json:2: possible answer"
        " of 'simple_python_1' names function 'x', which the question does not offer",
        "1 scenarios in 1 files; 0 entries skipped; 2 bad entries skipped",
    ]
    assert "simple_python_0" in (workdir / "bfcl-out" / "simple_python-001.yaml").read_text()
