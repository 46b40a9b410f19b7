"""Toolbench's verdicts against BFCL's on a verdict corpus (``make_verdicts.py`` output).

    python tests/data/bfcl/agreement.py tests/data/bfcl/verdicts.jsonl [--show N]

Prints the agreement and the first N disagreements; the test imports :func:`compare`.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from toolbench.bfcl.convert import SkipEntry
from toolbench.bfcl.importer import entry_scenario
from toolbench.bfcl.verdict import verdict
from toolbench.scenarios.model import Scenario


def compare(path: Path) -> tuple[int, int, list[dict[str, Any]]]:
    """(cases, agreeing cases, disagreements) over every importable entry of the corpus."""
    total = agree = 0
    diffs: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        q = {"id": rec["id"], "question": rec["question"], "function": rec["function"]}
        try:
            data = entry_scenario(rec["category"], q, {"ground_truth": rec["ground_truth"]}, "", "")
        except SkipEntry:
            continue
        sc = Scenario.model_validate(data)
        for case in rec["cases"]:
            total += 1
            mine = verdict(sc, case["output"])
            if mine == case["bfcl"]:
                agree += 1
            else:
                diffs.append({"id": rec["id"], "case": case["case"], "bfcl": case["bfcl"]})
    return total, agree, diffs


if __name__ == "__main__":
    total, agree, diffs = compare(Path(sys.argv[1]))
    show = int(sys.argv[sys.argv.index("--show") + 1]) if "--show" in sys.argv else 20
    print(f"{agree}/{total} agree ({agree / total:.3%})")
    print(Counter(d["case"].split(":")[0] + (" bfcl=" + str(d["bfcl"])) for d in diffs))
    for d in diffs[:show]:
        print(d)
