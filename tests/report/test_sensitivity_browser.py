"""The format-sensitivity section in a real browser (issue 37): drawn, readable, inert."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_browser import chromium
from test_sensitivity import constructed

from toolbench.report import write_report

pytestmark = pytest.mark.browser


def section_page(tmp_path: Path) -> Path:
    """The report's own head (styles, content policy) around its sensitivity section
    alone, so a screenshot shows the section at the top of the window."""
    html = write_report(constructed(tmp_path), tmp_path / "report.html").read_text("utf-8")
    head = html.split("<body>")[0]
    section = html.split('<section id="sensitivity">')[1].split("</section>")[0]
    page = tmp_path / "section.html"
    page.write_text(
        f'{head}<body><main><section id="sensitivity">{section}</section></main></body></html>',
        encoding="utf-8",
    )
    return page


def test_the_section_renders_its_chart_and_keeps_names_as_text(tmp_path: Path) -> None:
    page = section_page(tmp_path)
    dom = chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
    assert "Format sensitivity (call_accuracy across each grid)" in dom
    assert "m&lt;i&gt;x · prompt-json: spread 60.0 pp" in dom
    assert re.search(r"<i>x", dom) is None  # the model's name made no element
    assert len(re.findall(r'<img src="data:image/png;base64,', dom)) == 1
    shot = tmp_path / "section.png"
    chromium(tmp_path, f"--screenshot={shot}", "--window-size=1300,600", page.as_uri())
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 20_000  # the chart and tables drawn, not a blank canvas
