"""The HTML report in a real browser: hostile model output must stay inert text."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from synthetic_runs import standard_trials, write_run

from toolbench.report import write_report

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        print("skipping: /usr/bin/chromium is not installed (apt-get install chromium)")
        pytest.skip("chromium is not installed")
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.fixture
def hostile_report(tmp_path: Path) -> Path:
    run = write_run(tmp_path / "runs" / "r1", standard_trials("r1"))
    return write_report(run, tmp_path / "report.html")


def test_hostile_reply_renders_as_text(tmp_path: Path, hostile_report: Path) -> None:
    proc = chromium(tmp_path, "--dump-dom", hostile_report.as_uri())
    dom = proc.stdout
    assert "toolbench report: r1" in dom, proc.stderr[-2000:]
    # Had any payload run, it would have set data-pwned on <html>.
    html_tag = re.search(r"<html[^>]*>", dom)
    assert html_tag is not None and "data-pwned" not in html_tag.group(0)
    # No element came from model text: no script, no injected img (the charts are data URIs).
    assert "<script" not in dom.lower()
    assert '<img src="x"' not in dom and "<img src=x" not in dom
    # The payload is on the page as text.
    assert "&lt;script&gt;window.__pwned=1;" in dom
    assert "&lt;img src=x onerror=" in dom
    assert "&lt;/textarea&gt;&lt;/pre&gt;&lt;script&gt;" in dom


def test_screenshot(tmp_path: Path, hostile_report: Path) -> None:
    shot = tmp_path / "shot.png"
    proc = chromium(
        tmp_path, f"--screenshot={shot}", "--window-size=1400,1800", hostile_report.as_uri()
    )
    assert shot.is_file(), proc.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 20_000  # a rendered page, not a blank canvas
