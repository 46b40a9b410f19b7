"""The CLI edge catches the exceptions of both click copies typer may parse with.

typer 0.29 raises ``typer._click`` exceptions; earlier typers (and any command that
raises plain ``click`` errors itself) raise ``click`` ones. Each must become one line and
exit 2. The installed-CLI table in ``test_usage_errors.py`` covers the copy in use; this
covers the other one in-process.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import pytest
import typer

from toolbench.cli import app as app_module
from toolbench.cli.clicks import click_errors, usage_line

COPIES = ["typer._click.exceptions", "click.exceptions"]


def exceptions(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        pytest.skip(f"{name} is not installed")


@pytest.mark.parametrize("name", COPIES)
def test_every_installed_copy_is_caught(name: str) -> None:
    mod = exceptions(name)
    assert mod.ClickException in click_errors()


@pytest.fixture
def failing_command() -> Iterator[list[BaseException]]:
    """A hidden command that raises whatever the test puts in the list."""
    raised: list[BaseException] = []

    @app_module.app.command("_raise", hidden=True)
    def _raise() -> None:
        raise raised[0]

    yield raised
    app_module.app.registered_commands.pop()


@pytest.mark.parametrize("name", COPIES)
def test_bad_parameter_of_either_copy_is_one_line(
    name: str, failing_command: list[BaseException], capsys: pytest.CaptureFixture[str]
) -> None:
    mod = exceptions(name)
    failing_command.append(mod.BadParameter("must be positive", param_hint="'-n'"))
    assert app_module.run_cli(["_raise"]) == 2
    line = "Invalid value for '-n': must be positive"
    if name.startswith("typer."):  # typer's own copy attaches the command's context
        line = f"toolbench _raise: {line} (see 'toolbench _raise --help')"
    assert capsys.readouterr().err == f"error: {line}\n"


def test_usage_line_names_the_command_when_known(capsys: pytest.CaptureFixture[str]) -> None:
    assert app_module.run_cli(["scenarios", "list", "--nope"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "error: toolbench scenarios list: No such option: --nope"
        " (see 'toolbench scenarios list --help')\n"
    )


def test_abort_is_exit_130(
    failing_command: list[BaseException], capsys: pytest.CaptureFixture[str]
) -> None:
    failing_command.append(typer.Abort())
    assert app_module.run_cli(["_raise"]) == 130
    assert capsys.readouterr().err == "error: aborted\n"


def test_usage_line_flattens_newlines() -> None:
    mod = exceptions("typer._click.exceptions")
    assert usage_line(mod.UsageError("two\nlines")) == "two lines"
