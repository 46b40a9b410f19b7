"""The committed expected summaries of replaying the committed cassettes.

``python -m tests.runner.replay_summary RUN_DIR... [OUT.json]`` rewrites ``OUT`` (default
``tests/data/expected_replay.json``, the recorded suite; ``tests/data/expected_replay_bfcl.json``
holds the ``bfcl-smoke`` selection) from a replay run; do that only after re-recording
cassettes or a deliberate parser or scorer change, and review the diff: it is the behaviour
CI holds the project to.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from toolbench.results import TrialResult
from toolbench.store import load_results

_STREAM = ("display", "ttft_ms", "first_call_byte_ms", "call_complete_ms", "tokens_per_s",
           "stream_leak", "leaked_chars", "holdback_ms")  # fmt: skip

_CORE = ("parse", "parse_strict_ok", "parse_ok", "call_accuracy", "no_call_correct",
         "final_answer_ok", "args_schema_valid", "stop", "stop_compliant", "leak_raw",
         "leak_sanitized", "retried", "retry_recovered", "first_try_ok")  # fmt: skip
"""The built-in checks every row holds, by name, in the order the summary has had."""

DATA = Path(__file__).resolve().parents[1] / "data"
EXPECTED = DATA / "expected_replay.json"
EXPECTED_BFCL = DATA / "expected_replay_bfcl.json"


def summarize(results: list[TrialResult]) -> list[dict[str, Any]]:
    """One row per trial: its outcome, every score that defines it, the reasons given,
    and the tokens and latency recorded with its cassettes."""
    rows = []
    for r in sorted(results, key=lambda r: r.key):
        row: dict[str, Any] = {
            "model": r.model,
            "format": r.format,
            "scenario": r.scenario_id,
            "sample": r.sample,
            "status": r.status,
            "error_code": r.error_code,
            "turns": len(r.turns),
            "prompt_tokens": r.prompt_tokens,
            "completion_tokens": r.completion_tokens,
            "latency_s": r.latency_s,
        }
        if r.scores is not None:
            s = r.scores
            row.update({name: s.get(name) for name in _CORE})
            row.update(
                errors=sorted(s.errors),
                reasons=sorted(s.reasons),
            )
        if r.scores is not None and "ttft_ms" in r.scores.values:
            # streamed trials: timings and what the user saw (the streaming scorer's
            # values, in the shape the summary has had since streaming began)
            row["stream"] = {
                **{k: r.scores.get(k) for k in _STREAM},
                "errors": [i.code for t in r.turns if t.stream for i in t.stream.issues],
            }
        rows.append(row)
    return rows


def assert_replays_to(results: list[TrialResult], expected_path: Path) -> None:
    """Every replayed trial is ``ok`` and its summary row equals the committed one."""
    assert all(r.status == "ok" for r in results), [r.key for r in results if r.status != "ok"]
    got = summarize(results)
    expected = json.loads(expected_path.read_text(encoding="utf-8"))
    assert {r["scenario"] for r in got} == {r["scenario"] for r in expected}
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g == e


def main(args: list[str]) -> None:
    """``RUN_DIR... [OUT.json]``: the summary of the runs' trials together."""
    out = next((Path(a) for a in args if a.endswith(".json")), EXPECTED)
    results = [r for a in args if not a.endswith(".json") for r in load_results(a)]
    rows = summarize(results)
    out.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(rows)} rows to {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
