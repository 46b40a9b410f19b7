"""The CLI keeps its own conventions (docs/cli.md, "Conventions"): real metavars, help
texts shown as written, one spelling per idea, and old spellings that still work."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest
import typer.main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from synthetic_runs import standard_trials, write_run

from toolbench.cli import run_cmd
from toolbench.cli.app import app, run_cli


def _commands() -> Iterator[tuple[list[str], Any]]:
    root = typer.main.get_command(app)
    ctx = root.context_class(root, info_name="toolbench")

    def walk(cmd: Any, path: list[str], ctx: Any) -> Iterator[tuple[list[str], Any]]:
        yield path, cmd
        for name in getattr(cmd, "commands", {}):
            sub = cmd.commands[name]
            yield from walk(sub, [*path, name], sub.context_class(sub, info_name=name, parent=ctx))

    yield from walk(root, [], ctx)


COMMANDS = {" ".join(path) or "(root)": (path, cmd) for path, cmd in _commands()}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_value_option_names_its_value(name: str) -> None:
    _, cmd = COMMANDS[name]
    for p in cmd.params:
        if p.param_type_name == "option" and not p.is_flag and not p.hidden:
            assert p.metavar, f"{name} {p.opts[0]}: declare a metavar (METRIC=VALUE, a|b, ...)"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_shows_no_type_placeholders_and_keeps_brackets(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.setenv("NO_COLOR", "1")
    path, cmd = COMMANDS[name]
    assert run_cli([*path, "--help"]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "<bool>" not in out and "<list[" not in out
    texts = [cmd.help or ""] + [getattr(p, "help", None) or "" for p in cmd.params]
    texts += [c.help or "" for c in getattr(cmd, "commands", {}).values()]
    for text in texts:
        for bracketed in re.findall(r"\[[^\]]*\]", text):
            assert bracketed in out, f"{name} --help lost {bracketed!r}"


def test_gate_help_names_its_table(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    assert run_cli(["gate", "--help"]) == 0
    assert "TOML file with a [gate] table" in capsys.readouterr().out


def test_choice_lists_match_the_library() -> None:
    from toolbench.cassettes import RecordOption

    assert get_args(RecordOption) == run_cmd.RECORD_MODES


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_run(Path("runs/r1"), standard_trials("r1"))
    return tmp_path


@pytest.mark.parametrize(
    ("old", "error"),
    [
        (["report", "runs/r1", "--format", "md"],
         "error: toolbench report: No such option: --format (Possible options: --out) "
         "(see 'toolbench report --help')\n"),
        (["recommend", "runs/r1", "--emit", "yaml"],
         "error: toolbench recommend: No such option: --emit (Possible options: --to, "
         "--weight) (see 'toolbench recommend --help')\n"),
    ],
)  # fmt: skip
def test_old_spellings_are_gone(
    runs: Path, capsys: pytest.CaptureFixture[str], old: list[str], error: str
) -> None:
    """The spellings of the unreleased 0.1.0 that ``--to`` replaced are usage errors."""
    assert run_cli(old) == 2
    assert capsys.readouterr().err == error


def test_old_spellings_are_not_in_help(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    assert run_cli(["report", "--help"]) == 0
    assert run_cli(["recommend", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--format" not in out and "--emit" not in out and "--to" in out


def test_parse_takes_short_f(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reply = tmp_path / "r.txt"
    reply.write_text('<tool_call>{"name": "f", "arguments": {}}</tool_call>')
    assert run_cli(["parse", "-f", "xml", str(reply)]) == 0
    assert '"status": "strict"' in capsys.readouterr().out
