"""Toolbench's verdicts on imported BFCL entries equal BFCL's own ``ast_checker``'s.

The corpus (tests/data/bfcl/verdicts.jsonl, provenance and regeneration in the README
beside it) holds BFCL's verdicts on its possible answers and on perturbed calls.
"""

from __future__ import annotations

import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "bfcl"
sys.path.insert(0, str(DATA))
from agreement import compare  # noqa: E402


def test_at_least_99_percent_of_bfcl_verdicts_agree() -> None:
    total, agree, diffs = compare(DATA / "verdicts.jsonl")
    assert total >= 3900  # every entry of the corpus imported, none silently skipped
    assert agree / total >= 0.99, diffs[:10]
