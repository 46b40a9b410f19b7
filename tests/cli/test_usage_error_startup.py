"""A usage error that click finds (a missing argument, an unknown option or command, an
extra argument), or that a command finds in its options before it starts (``run
--concurrency 0``, ``run --formats nosuch``, ``gate`` of a folder holding no run), prints
its one line without loading what only a run needs.

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

from toolbench.formats.format_registry import format_names

SCRIPT = Path(sys.executable).parent / "toolbench"
HEAVY = ("pydantic", "detect_secrets", "rich", "litellm")
FORMAT_NAMES = format_names()
"""The registry's names: the light check must list exactly these."""

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
    # found by the command in its options, before the runner or the report is loaded
    "run-concurrency": (
        ["run", "--concurrency", "0"],
        "error: --concurrency: must be at least 1",
    ),
    "run-unknown-format": (
        ["run", "--formats", "nosuch"],
        f"error: unknown format 'nosuch'. Available: {', '.join(FORMAT_NAMES)}",
    ),
    "run-unknown-format-after-a-known-one": (
        ["run", "--formats", "xml,promptjson"],
        "error: unknown format 'promptjson'. Did you mean 'prompt-json'? Available: "
        f"{', '.join(FORMAT_NAMES)}",
    ),
    "gate-no-results": (
        ["gate", "nosuch", "--min", "call_accuracy=0.5"],
        "error: nosuch/results.jsonl: no results file (is 'nosuch' a run directory?)",
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


def test_each_declared_format_is_the_format_it_loads() -> None:
    """The light check reads the names toolbench's entry points declare: each is the
    name of the format it loads, and together they are the registry's built-ins."""
    from importlib.metadata import entry_points

    from toolbench.declared_formats import ENTRY_POINT_GROUP
    from toolbench.formats.format_registry import builtin_format_names
    from toolbench.registry import ours

    eps = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ours(ep)]
    assert eps
    for ep in eps:
        assert ep.load().name == ep.name
    assert sorted(ep.name for ep in eps) == builtin_format_names()


def test_the_registry_answers_once_it_is_loaded() -> None:
    """Formats registered in code (this process has loaded the registry) are not in the
    entry points: the light check leaves the names to the registry."""
    from toolbench.declared_formats import declared_format_names

    assert format_names()
    assert declared_format_names() is None


def _probe(argv: list[str], cwd: Path) -> tuple[int, str, list[str]]:
    probe = PROBE.format(heavy=repr(set(HEAVY)))
    done = subprocess.run(
        [sys.executable, "-c", probe, *argv], cwd=cwd, capture_output=True, text=True, check=True
    )
    code, err, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    return code, err, loaded


def test_a_plugin_leaves_the_names_to_the_registry(tmp_path: Path) -> None:
    """With a plugin's entry point installed, its formats are known only by loading it."""
    plugin = tmp_path / "site" / "toy_plugin-1.0.dist-info"
    plugin.mkdir(parents=True)
    (plugin / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-plugin\nVersion: 1.0\n")
    (plugin / "entry_points.txt").write_text("[toolbench.formats]\ntoy = toy_plugin:Toy\n")
    script = (
        "import sys; sys.path.append(sys.argv[1])\n"
        "from toolbench.declared_formats import declared_format_names\n"
        "print(declared_format_names())"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "site")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert done.stdout.strip() == "None"
    alone = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "nothing")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert alone.stdout.strip() == repr(FORMAT_NAMES)


@pytest.mark.parametrize(
    ("toml", "argv", "line"),
    [
        # the rate limits are read before the formats' names: theirs is the first error
        (
            "[rate_limits]\nstate_file = 3\n",
            ["run", "--formats", "nosuch"],
            "error: toolbench.toml: rate_limits.state_file: expected a file path\n",
        ),
        # a settings file that is not TOML is refused as a run would refuse it
        (
            "[rate_limits\n",
            ["run", "--formats", "nosuch"],
            "error: toolbench.toml: not valid TOML: Expected ']' at the end of a table "
            "declaration (at line 1, column 13)\n",
        ),
        # a bad --mcp is refused before the other options, as ever
        (
            None,
            ["run", "--mcp", "bad", "--concurrency", "0"],
            "error: --mcp: 'bad' is not NAME=COMMAND (or NAME=http://127.0.0.1:PORT/mcp)\n",
        ),
        # a gate's bounds are checked before its folder
        (None, ["gate", "nosuch", "--min", "nosuch_metric=1"], "error: unknown metric 'nosuch_"),
        (
            None,
            ["gate", "nosuch"],
            "error: gate: no thresholds (give --min/--max/--max-drop or a [gate] table in "
            "toolbench.toml)\n",
        ),
    ],
)
def test_the_light_checks_keep_the_order_of_the_errors(
    toml: str | None, argv: list[str], line: str, tmp_path: Path
) -> None:
    if toml is not None:
        (tmp_path / "toolbench.toml").write_text(toml)
    code, err, _ = _probe(argv, tmp_path)
    assert code == 2
    assert err == line if line.endswith("\n") else err.startswith(line), err
