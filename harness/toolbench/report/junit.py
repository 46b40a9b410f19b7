"""JUnit XML for CI test tabs: one testcase per (model, format, scenario).

A testcase fails when any sample that reached the model failed (call accuracy, no-call,
final answer or parse, see ``outcome`` in :mod:`toolbench.report.metrics`); it is skipped
when no failure was seen but some sample hit an infra error, an unsupported provider or
a missing cassette. Each testsuite (one per model and format) carries the cell's
registered metrics as ``<properties>`` (``toolbench.<metric>``, shown as in the reports,
with ``n/a`` where a metric does not apply). Built with :mod:`xml.etree.ElementTree`, so
model text is escaped.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from toolbench.metrics import all_metrics
from toolbench.report.metrics import TrialTable, aggregate, cell_map, fmt_value
from toolbench.report.visible import show_invisible

_MAX_REASONS = 10
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def xml_text(s: str) -> str:
    """Text safe for XML 1.0: ElementTree escapes markup but not forbidden characters."""
    return _NOT_XML.sub("\ufffd", show_invisible(s))


def junit_xml(table: TrialTable) -> str:
    df = table.df
    suites = ET.Element("testsuites", name=f"toolbench {table.run_id}")
    fail_offsets: list[int] = []
    grouped = list(df.groupby(["model", "format"], sort=True))
    # Full records only for failing trials: their reasons go into the failure text.
    failing = df[df["outcome"] == "fail"]
    fail_offsets = [int(x) for x in failing["_offset"]] if "_offset" in df else []
    reasons: dict[tuple[str, str, str, int], list[str]] = {}
    for t in table.trials(fail_offsets[:2000]):
        rs = t.scores.reasons if t.scores else []
        reasons[t.key] = rs or (t.scores.errors if t.scores else [])
    stats = cell_map(aggregate(df, overall=False))
    metrics = all_metrics()
    for (model, fmt), cell in grouped:
        suite = ET.SubElement(suites, "testsuite", name=xml_text(f"{model} / {fmt}"))
        props = ET.SubElement(suite, "properties")
        values = stats[(str(model), str(fmt))].values
        for m in metrics:
            value = fmt_value(m.name, values.get(m.name))
            ET.SubElement(props, "property", name=f"toolbench.{m.name}", value=value)
        n_fail = n_skip = n_tests = 0
        for sid, g in cell.groupby("scenario_id", sort=True):
            n_tests += 1
            case = ET.SubElement(
                suite,
                "testcase",
                classname=xml_text(f"toolbench.{model}.{fmt}"),
                name=xml_text(str(sid)),
                time=f"{float(g['latency_s'].sum()):.3f}",
            )
            fails = g[g["outcome"] == "fail"]
            other = g[~g["outcome"].isin(["pass", "fail"])]
            if len(fails):
                n_fail += 1
                lines = []
                for _, row in fails.iterrows():
                    key = (str(model), str(fmt), str(sid), int(row["sample"]))
                    why = reasons.get(key) or [row["errors"]]
                    lines.append(f"sample {row['sample']}: " + "; ".join(why[:_MAX_REASONS]))
                el = ET.SubElement(
                    case,
                    "failure",
                    message=xml_text(
                        f"{len(fails)} of {len(g)} samples failed: "
                        + ", ".join(sorted({e for x in fails["errors"] for e in x.split(";") if e}))
                    ),
                    type="toolbench.failure",
                )
                el.text = xml_text("\n".join(lines))
            elif len(other):
                n_skip += 1
                ET.SubElement(
                    case,
                    "skipped",
                    message=f"{len(other)} of {len(g)} samples not scored: "
                    + ", ".join(sorted(set(other["status"]))),
                )
        suite.set("tests", str(n_tests))
        suite.set("failures", str(n_fail))
        suite.set("skipped", str(n_skip))
        suite.set("errors", "0")
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
