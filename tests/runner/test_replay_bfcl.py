"""The ``bfcl-smoke`` selection replays offline from its committed cassettes: both
embedded models, all five formats, 100 imported BFCL entries each, into exactly the
committed expected results. This is the "replay within CI's budget" the README measures."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runner.replay_summary import EXPECTED_BFCL, assert_replays_to
from toolbench.cli.app import run_cli
from toolbench.store import load_results

ROOT = Path(__file__).resolve().parents[2]
MODELS = "local/smollm2-135m,local/gemma3-270m"
FORMATS = "prompt-json,prompt-json:shots=2,react,xml,native"


@pytest.mark.skipif(not EXPECTED_BFCL.is_file(), reason="no expected bfcl replay committed")
def test_bfcl_smoke_replays_to_expected_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    rc = run_cli([
        "run", "--record", "none", "--quiet", "--no-report", "--scenarios", "bfcl-smoke",
        "--models", MODELS, "--formats", FORMATS, "--out", str(tmp_path / "r"),
    ])  # fmt: skip
    assert rc == 0
    results = load_results(tmp_path / "r")
    assert len(results) == 2 * 5 * 100
    assert_replays_to(results, EXPECTED_BFCL)
