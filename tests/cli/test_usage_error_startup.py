"""A usage error that click finds (a missing argument, an unknown option or command, an
extra argument) prints its one line without loading what only a run needs.

``benchmarks/bench_startup.py`` times it beside ``python -c pass``; here the facts behind
the time are held: no pydantic (typer's coercion of option values, see
:mod:`toolbench.cli.value_coercion`), no detect-secrets (its plugins see only a line that
can hold what they find, see ``secret_shapes.may_match_plugin``), no rich, no LiteLLM.
And the line is still redacted: a credential typed where click quotes it back is
replaced, through the installed console script, whether toolbench's own shapes or only
detect-secrets' plugins know it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).parent / "toolbench"
HEAVY = ("pydantic", "detect_secrets", "rich", "litellm")

PROBE = """
import contextlib, io, json, sys
from toolbench.cli.app import run_cli
err = io.StringIO()
with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
    code = run_cli(sys.argv[1:])
print(json.dumps([code, err.getvalue(), sorted(m for m in {heavy} if m in sys.modules)]))
"""

LIGHT_ERRORS = {
    "missing-argument": (
        ["gate"],
        "error: toolbench gate: Missing argument 'run'. (see 'toolbench gate --help')",
    ),
    "unknown-option": (
        ["report", "r", "--nope"],
        "error: toolbench report: No such option: --nope (Possible options: --to)"
        " (see 'toolbench report --help')",
    ),
    "unknown-command": (
        ["scenarios", "nosuch"],
        "error: toolbench scenarios: No such command 'nosuch'. (see 'toolbench scenarios --help')",
    ),
    "extra-argument": (
        ["report", "r", "extra"],
        "error: toolbench report: Got unexpected extra argument(s) (extra) "
        "(see 'toolbench report --help')",
    ),
}


@pytest.mark.parametrize("case", sorted(LIGHT_ERRORS))
def test_a_usage_error_loads_nothing_heavy(case: str, tmp_path: Path) -> None:
    argv, line = LIGHT_ERRORS[case]
    probe = PROBE.format(heavy=repr(set(HEAVY)))
    done = subprocess.run(
        [sys.executable, "-c", probe, *argv],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    )  # fmt: skip
    code, err, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert (code, err) == (2, line + "\n")
    assert loaded == []


PLANTED = {
    # toolbench's own shape
    "anthropic-key": "sk-ant-api03-plantedPLANTED0123456789",
    # only detect-secrets' plugins know these: the screen must let them through
    "aws-access-key": "AKIAPLANTED0EXAMPLE7",
    "slack-token": "xoxb-1234567-plantedtoken",
    "stripe-key": "sk_live_" + "Pl4n" * 6,
}


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_a_credential_click_quotes_back_is_redacted(name: str, tmp_path: Path) -> None:
    secret = PLANTED[name]
    done = subprocess.run(
        [str(SCRIPT), "report", "r", secret], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stderr == (
        "error: toolbench report: Got unexpected extra argument(s) (<redacted>) "
        "(see 'toolbench report --help')\n"
    )
