"""``toolbench scenarios list|validate`` through run_cli: output, exit codes, error lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolbench.cli.app import run_cli
from toolbench.scenarios.loader import bundled_dir, load_scenarios

TOOL_SET = """\
- name: f
  parameters: {type: object, properties: {x: {type: string}}}
"""
GOOD = """\
id: good
tags: [single, demo]
tools: [{ref: t}]
messages: [{role: user, content: hi}]
expect: {calls: [{name: f, arguments: {x: a}}]}
"""


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "t.yaml").write_text(TOOL_SET)
    (tmp_path / "good.yaml").write_text(GOOD)
    return tmp_path


BAD_FILES = {
    "missing-field": (
        """\
scenarios:
  - {id: a, tools: [{ref: t}], messages: [{role: user, content: hi}], expect: {no_call: true}}
  - id: b
    tools: [{ref: t}]
    messages: [{role: user, content: hi}]
    expect: {calls: [{arguments: {x: a}}]}
""",
        "scenarios[1].expect.calls[0].name: field required",
    ),
    "unknown-key": (
        GOOD + "colour: red\n",
        "colour: unknown key",
    ),
    "bad-yaml": (
        "id: a\nmessages: [ {role: user\n",
        "invalid YAML (line 3, column 1): did not find expected ',' or '}'",
    ),
    "bad-matcher-list": (
        GOOD.replace("{x: a}", "{x: [a, b]}"),
        "expect.calls[0].arguments.x: a list must be written as {exact: [...]} or {any_of: [...]}",
    ),
    "bad-matcher-two-checks": (
        GOOD.replace("{x: a}", "{x: {exact: a, regex: a}}"),
        "expect.calls[0].arguments.x: "
        "give exactly one of exact, any_of, regex, approx, fields, items, alternatives"
        " (optionally with type), or type alone (or absent)",
    ),
    "bad-matcher-regex": (
        GOOD.replace("{x: a}", "{x: {regex: '('}}"),
        "expect.calls[0].arguments.x: "
        "invalid regex: missing ), unterminated subpattern at position 0",
    ),
    "unknown-tool-in-only": (
        GOOD.replace("{ref: t}", "{ref: t, only: [g]}"),
        "tools[0].only: unknown tool 'g'. Available: f",
    ),
    "expected-call-not-offered": (
        GOOD.replace("name: f,", "name: g,"),
        "scenario: expected call 'g' is not among the tools",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_validate_reports_each_error(
    suite: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text, message = BAD_FILES[case]
    bad = suite / f"{case}.yaml"
    bad.write_text(text)
    assert run_cli(["scenarios", "validate", str(bad)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"error: {bad}: {message}\n"


def test_unknown_tool_set_ref(suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = suite / "ref.yaml"
    bad.write_text(GOOD.replace("{ref: t}", "{ref: nosuch}"))
    assert run_cli(["scenarios", "validate", str(bad)]) == 2
    expected_path = suite / "tools" / "nosuch.yaml"
    assert (
        capsys.readouterr().err
        == f"error: {bad}: tools[0].ref: no tool set 'nosuch' ({expected_path})\n"
    )


def test_nonexistent_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.yaml"
    assert run_cli(["scenarios", "validate", str(missing)]) == 2
    assert capsys.readouterr().err == f"error: {missing}: no such file or directory\n"
    assert run_cli(["scenarios", "list", str(missing)]) == 2
    assert capsys.readouterr().err == f"error: {missing}: no such file or directory\n"


def test_validate_directory_lists_every_broken_file(
    suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (suite / "a.yaml").write_text(GOOD.replace("id: good", "id: a") + "colour: red\n")
    (suite / "b.yaml").write_text("id: b\nmessages: [\n")
    assert run_cli(["scenarios", "validate", str(suite)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        f"error: {suite / 'a.yaml'}: colour: unknown key",
        f"error: {suite / 'b.yaml'}: invalid YAML (line 3, column 1):"
        " did not find expected node content",
    ]


def test_duplicate_ids(suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (suite / "copy.yaml").write_text(GOOD)
    assert run_cli(["scenarios", "validate", str(suite)]) == 2
    assert capsys.readouterr().err == (
        f"error: {suite / 'good.yaml'}: id: duplicate scenario id 'good'"
        f" (also in {suite / 'copy.yaml'})\n"
    )


def test_validate_ok(suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (suite / "two.yaml").write_text(
        "scenarios:\n"
        "  - {id: p, tools: [{ref: t}], messages: [{role: user, content: a}], "
        "expect: {no_call: true}}\n"
        "  - {id: q, messages: [{role: user, content: b}], expect: {no_call: true}}\n"
    )
    assert run_cli(["scenarios", "validate", str(suite)]) == 0
    assert capsys.readouterr().out == "ok: 3 scenarios in 2 files\n"


def test_validate_bundled_suite(capsys: pytest.CaptureFixture[str]) -> None:
    n = len(load_scenarios([bundled_dir()]))
    files = len(list(bundled_dir().glob("*.yaml")))
    assert run_cli(["scenarios", "validate"]) == 0
    assert capsys.readouterr().out == f"ok: {n} scenarios in {files} files\n"


def test_list(suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["scenarios", "list", str(suite / "good.yaml")]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "ID    KIND   TOOLS  TAGS",
        "good  calls  1      single,demo",
        "",
        "TAG     SCENARIOS",
        "demo    1",
        "single  1",
        "",
        "1 scenario",
    ]


def test_list_bundled_shows_every_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["scenarios", "list"]) == 0
    out = capsys.readouterr().out
    for sc in load_scenarios([bundled_dir()]):
        assert f"\n{sc.id} " in out
