from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from synthetic_runs import HOSTILE, make_trial, write_run

from toolbench.metrics import metric_names
from toolbench.report.junit import junit_xml
from toolbench.report.metrics import load_table


def test_junit_cases_failures_skips(run_dir: Path) -> None:
    root = ET.fromstring(junit_xml(load_table(run_dir)).encode())
    cases = root.findall(".//testcase")
    assert len(cases) == 12  # 2 models x 2 formats x 3 scenarios
    failed = [c for c in cases if c.find("failure") is not None]
    skipped = [c for c in cases if c.find("skipped") is not None]
    assert [(c.get("classname"), c.get("name")) for c in failed] == [
        ("toolbench.m-beta.xml", "weather_basic")
    ]
    assert [(c.get("classname"), c.get("name")) for c in skipped] == [
        ("toolbench.m-alpha.xml", "trip_multi")
    ]
    fail = failed[0].find("failure")
    assert fail is not None
    assert "call.wrong_tool" in (fail.get("message") or "")
    assert "expected get_weather, got get_time" in (fail.text or "")


def test_junit_escapes_hostile_text(tmp_path: Path) -> None:
    reason = HOSTILE + "\x00\x1b[31m"
    t = make_trial("m", "xml", "weather_basic", ok=False, reasons=[reason])
    xml = junit_xml(load_table(write_run(tmp_path / "r", [t])))
    assert "<script>" not in xml
    assert "&lt;script&gt;" in xml
    fail = ET.fromstring(xml.encode()).find(".//failure")
    assert fail is not None and fail.text is not None
    assert "<script>window.__pwned=1;" in fail.text  # round-trips as text


def test_junit_suites_carry_the_registered_metrics(run_dir: Path) -> None:
    root = ET.fromstring(junit_xml(load_table(run_dir)).encode())
    suite = next(s for s in root.iter("testsuite") if s.get("name") == "m-beta / xml")
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["toolbench.call_accuracy"] == "50.0%"
    assert props["toolbench.n_trials"] == "6"
    assert props["toolbench.retry_recovery"] == "n/a"
    assert len(props) == len(metric_names())
