"""Format contract v2: each format's own options model, requirements and markers; built-ins
and plugins registered through one entry-point group; a broken plugin is one warning line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from declared import Contract, contract
from pydantic import ValidationError

from toolbench.errors import UserError
from toolbench.formats import format_registry as registry
from toolbench.formats.base import ShotsOptions
from toolbench.formats.format_registry import format_class, format_names, get_format
from toolbench.formats.native import Native, NativeOptions
from toolbench.scenarios.model import Scenario

ROOT = Path(__file__).resolve().parents[2]

CONTRACT: dict[str, Contract] = {
    name: row for name in format_names() if (row := contract(name)) is not None
}
"""name -> (options model, requirements): the row each format declares with its test
cases (``Format.test_cases``), read through the registry."""


def test_every_registered_format_declares_its_contract_row() -> None:
    assert format_names() == sorted(CONTRACT)
    assert len(CONTRACT) >= 12


@pytest.mark.parametrize("name", sorted(CONTRACT))
def test_format_declares_options_requirements_and_markers(name: str) -> None:
    check_contract(name)


def check_contract(name: str) -> None:
    """Format ``name`` is what its declared contract row says (shared with the dialect
    plugin test, whose format is registered only while it runs)."""
    cls = format_class(name)
    row = contract(name)
    assert row is not None, f"format {name!r} declares no CONTRACT row with its test cases"
    options, needs = row
    assert cls.Options is options
    assert cls.requirements == needs
    assert cls.native == needs.native_tools
    assert cls.markers and all(isinstance(m, re.Pattern) for m in cls.markers)
    # A format that needs stop sequences sends them, and one that does not sends none.
    rendered = get_format(name).render([], [{"role": "user", "content": "hi"}])
    assert bool(rendered.stop) == needs.stop_sequences


PROMPTED = sorted(n for n, (o, _) in CONTRACT.items() if issubclass(o, ShotsOptions))


@pytest.mark.parametrize("name", PROMPTED)
def test_prompted_formats_take_shots(name: str) -> None:
    fmt = get_format(f"{name}:shots=2")
    assert fmt.spec == f"{name}:shots=2"
    assert fmt.render([], [{"role": "user", "content": "hi"}]) != get_format(name).render(
        [], [{"role": "user", "content": "hi"}]
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "native:shots=2",
            "format 'native:shots=2': unknown option 'shots' "
            "(format 'native' takes: api, parallel, strict, tool_choice)",
        ),
        (
            "native:strict=maybe",
            "format 'native:strict=maybe': option strict: Input should"
            " be a valid boolean, unable to interpret input",
        ),
        (
            "native:tool_choice=a b",
            "format 'native:tool_choice=a b': option tool_choice:"
            " String should match pattern '^[A-Za-z0-9_.-]{1,64}$'",
        ),
        (
            "prompt-json:temperature=1",
            "format 'prompt-json:temperature=1': unknown option 'temperature' "
            "(format 'prompt-json' takes: constrained, doc, markup, shots, style, tag)",
        ),
        (
            "xml:shots=1,foo=2",
            "format 'xml:shots=1,foo=2': unknown option 'foo' (format 'xml' takes: shots)",
        ),
        ("xml:shots", "format 'xml:shots': option 'shots' must be key=value"),
    ],
)
def test_bad_or_meaningless_options_are_refused(spec: str, message: str) -> None:
    with pytest.raises(UserError) as err:
        get_format(spec)
    assert str(err.value) == message


def test_options_built_for_another_format_are_checked() -> None:
    assert Native(ShotsOptions()).options == NativeOptions()
    with pytest.raises(ValidationError):
        Native(ShotsOptions(shots=2))


def test_cli_refuses_native_shots_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from toolbench.cli.app import run_cli

    assert run_cli(["formats", "show", "native:shots=2", "--scenario", "weather-paris"]) == 2
    assert capsys.readouterr().err == (
        "error: format 'native:shots=2': unknown option 'shots' (format 'native' takes:"
        " api, parallel, strict, tool_choice)\n"
    )


def test_builtins_are_the_entry_points_in_pyproject() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    table = data["project"]["entry-points"]["toolbench.formats"]
    assert sorted(table) == sorted(CONTRACT)
    for name, value in table.items():
        module, _, attr = value.partition(":")
        assert format_class(name).__module__ == module and format_class(name).__name__ == attr
    assert registry.builtin_format_names() == sorted(CONTRACT)


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[EntryPoint]]:
    """Extra (plugin) entry points of the group; the registry reloaded with them."""
    extra: list[EntryPoint] = []
    real = registry.FORMATS.find
    monkeypatch.setattr(registry.FORMATS, "find", lambda group: [*real(group), *extra])
    yield extra
    monkeypatch.undo()
    registry.FORMATS.reload()


def test_a_plugin_that_fails_to_import_is_one_warning(
    plugins: list[EntryPoint], capsys: pytest.CaptureFixture[str]
) -> None:
    plugins.append(EntryPoint("broken", "no_such_module_xyz:Fmt", "toolbench.formats"))
    plugins.append(EntryPoint("notaformat", "os:getcwd", "toolbench.formats"))
    registry.FORMATS.reload()
    assert format_names() == sorted(CONTRACT)
    assert get_format("xml").name == "xml"
    assert capsys.readouterr().err.splitlines() == [
        "warning: format plugin 'broken' (no_such_module_xyz:Fmt) failed to load: "
        "ModuleNotFoundError: No module named 'no_such_module_xyz'; its formats are left out",
        "warning: format plugin 'notaformat' (os:getcwd) does not name a Format subclass "
        "or a sequence of Format subclass objects; its formats are left out",
    ]


def test_a_plugin_cannot_replace_a_builtin(
    plugins: list[EntryPoint], capsys: pytest.CaptureFixture[str]
) -> None:
    plugins.append(EntryPoint("react2", f"{__name__}:NotReact", "toolbench.formats"))
    registry.FORMATS.reload()
    assert format_class("react").__name__ == "React"
    assert capsys.readouterr().err == (
        f"warning: format plugin 'react2' ({__name__}:NotReact) format 'react' is already "
        "registered; 'react' is left out\n"
    )


class NotReact(Native):
    """A plugin format that takes a built-in format's name."""

    name = "react"


def test_cli_with_a_broken_plugin_installed(tmp_path: Path) -> None:
    """Installed for real (a dist-info on the path): every command used to crash."""
    dist = tmp_path / "site" / "brokenplugin-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenplugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[toolbench.formats]\nbroken = brokenplugin_missing.formats:Broken\n"
    )
    path = os.pathsep.join([str(ROOT / "harness"), str(tmp_path / "site")])
    done = subprocess.run(
        [sys.executable, "-m", "toolbench", "formats", "list"],
        env={**os.environ, "PYTHONPATH": path, "NO_COLOR": "1"},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        "warning: format plugin 'broken' (brokenplugin_missing.formats:Broken) failed to "
        "load: ModuleNotFoundError: No module named 'brokenplugin_missing'; its formats are "
        "left out\n"
    )
    assert [line.split()[0] for line in done.stdout.splitlines()] == sorted(CONTRACT)


class PlugFormat(Native):
    """A plugin format whose marker is text a built-in format's reply may hold."""

    name = "plug"
    markers = (re.compile(re.escape("<<PLUG>>")),)


def _run_with_a_reply(run: Path, text: str, markers: list[str] | None) -> Scenario:
    from toolbench.formats import ModelReply
    from toolbench.results import RunInfo, TrialResult, TurnRecord
    from toolbench.scoring import score_trial

    sc = Scenario.model_validate(
        {
            "id": "joke",
            "messages": [{"role": "user", "content": "joke"}],
            "expect": {"no_call": True},
        }
    )
    fmt = get_format("prompt-json")
    reply = ModelReply(text=text)
    turns = [TurnRecord(request={}, reply=reply, parsed=fmt.parse_reply(reply, sc.tools))]
    trial = TrialResult(
        run_id="r", toolbench_version="0", model="m", format="prompt-json", scenario_id="joke",
        turns=turns, scores=score_trial(sc, fmt, turns),
    )  # fmt: skip
    run.mkdir(parents=True)
    (run / "results.jsonl").write_text(trial.model_dump_json() + "\n", encoding="utf-8")
    info = RunInfo(
        run_id="r", toolbench_version="0", created_at="", models=["m"],
        formats=["prompt-json"], scenarios=["joke"], markers=markers,
    )  # fmt: skip
    (run / "run.json").write_text(info.model_dump_json(), encoding="utf-8")
    return sc


@pytest.mark.parametrize("recorded", [True, False])
def test_rescore_after_a_plugin_is_installed_reproduces_the_scores(
    plugins: list[EntryPoint], tmp_path: Path, recorded: bool
) -> None:
    from toolbench.runner.rescore import rescore_run
    from toolbench.scoring import score_trial
    from toolbench.scoring.leakage import installed_markers, marker_texts
    from toolbench.store import load_results

    text = "Why did the chicken cross the road? <<PLUG>>"
    markers = marker_texts(installed_markers()) if recorded else None
    sc = _run_with_a_reply(tmp_path / "old", text, markers)
    (before,) = load_results(tmp_path / "old")
    assert before.scores is not None and before.scores.get("leak_raw") is False

    plugins.append(EntryPoint("plug", f"{__name__}:PlugFormat", "toolbench.formats"))
    registry.FORMATS.reload()
    assert "plug" in format_names()
    # What is installed now would call it a leak ...
    now = score_trial(sc, get_format("prompt-json"), before.turns)
    assert now.get("leak_raw") is True
    # ... but the run is rescored with the marker set it was scored with.
    summary = rescore_run(tmp_path / "old", tmp_path / "new", [sc])
    (after,) = load_results(tmp_path / "new")
    assert summary.rescored == 1 and summary.scores_changed == 0
    assert after.scores == before.scores
