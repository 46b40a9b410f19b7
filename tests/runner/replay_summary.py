"""The committed expected summary of replaying the committed cassettes.

``python -m tests.runner.replay_summary RUN_DIR`` rewrites ``tests/data/expected_replay.json``
from a replay run; do that only after re-recording cassettes or a deliberate parser or
scorer change, and review the diff: it is the behaviour CI holds the project to.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from toolbench.results import TrialResult, load_results

EXPECTED = Path(__file__).resolve().parents[1] / "data" / "expected_replay.json"


def summarize(results: list[TrialResult]) -> list[dict[str, Any]]:
    """One row per trial: its outcome and the scores that define it."""
    rows = []
    for r in sorted(results, key=lambda r: r.key):
        row: dict[str, Any] = {
            "model": r.model,
            "format": r.format,
            "scenario": r.scenario_id,
            "sample": r.sample,
            "status": r.status,
            "turns": len(r.turns),
        }
        if r.scores is not None:
            s = r.scores
            row.update(
                parse=s.parse,
                call_accuracy=s.call_accuracy,
                no_call_correct=s.no_call_correct,
                final_answer_ok=s.final_answer_ok,
                args_schema_valid=s.args_schema_valid,
                stop=s.stop,
                leak_raw=s.leak_raw,
                leak_sanitized=s.leak_sanitized,
                errors=sorted(s.errors),
            )
        rows.append(row)
    return rows


def main(run_dir: str) -> None:
    rows = summarize(load_results(run_dir))
    EXPECTED.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(rows)} rows to {EXPECTED}")


if __name__ == "__main__":
    main(sys.argv[1])
