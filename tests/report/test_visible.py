"""Bidi controls in model text are shown as visible tags in every report."""

from __future__ import annotations

from pathlib import Path

import pytest
from synthetic_runs import make_trial, write_run

from toolbench.report import render_report
from toolbench.report.visible import BIDI_CONTROLS, show_invisible

# "Trojan Source": RLO makes `get_weather` read as something else on screen.
TROJAN = 'call \u202e{"name": "rehtaew_teg"}\u202c then \u2066isolated\u2069 \u200f.'


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain text", "plain text"),
        ("a\u202eb", "a⟨U+202E⟩b"),
        ("\u2066x\u2069", "⟨U+2066⟩x⟨U+2069⟩"),
        ("\u061c\u200e\u200f", "⟨U+061C⟩⟨U+200E⟩⟨U+200F⟩"),
        ("café \u00e9 日本", "café \u00e9 日本"),  # ordinary non-ASCII is untouched
    ],
)
def test_show_invisible(text: str, shown: str) -> None:
    assert show_invisible(text) == shown


def test_every_bidi_control_is_tagged() -> None:
    out = show_invisible(BIDI_CONTROLS)
    assert not any(ch in out for ch in BIDI_CONTROLS)
    assert out.count("⟨U+") == len(BIDI_CONTROLS)


@pytest.mark.parametrize("kind", ["html", "md", "junit"])
def test_reports_show_bidi_controls_visibly(tmp_path: Path, kind: str) -> None:
    # Model text in the reply and reasons; a model name (shown in every summary) too.
    trial = make_trial("m\u202eevil", "xml", "weather_basic", ok=False, reply=TROJAN)
    trial.scores.reasons = [f"wrong tool: {TROJAN}"]  # type: ignore[union-attr]
    run = write_run(tmp_path / "r", [trial])
    page = render_report(run, kind)
    assert not any(ch in page for ch in BIDI_CONTROLS)
    assert "⟨U+202E⟩" in page
