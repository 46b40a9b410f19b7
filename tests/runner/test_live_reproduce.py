"""Live: a fresh recording on this machine gives the committed cassettes' replies, trial for
trial (both embedded models, every default format, two recorded scenarios: 20 trials).

The committed cassettes are the numbers the README shows; if a re-recording with the
shipped server settings gave other replies, those numbers could not be reproduced. Skips
where llama-server is not installed; CI installs it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.live import require_llama_server
from toolbench.cli.app import run_cli
from toolbench.providers.local_models import DEFAULT_MODELS
from toolbench.runner.options import DEFAULT_FORMATS
from toolbench.store import load_results

pytestmark = pytest.mark.live

require_llama_server("live re-recording test")

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ["weather-paris", "irr-opinion-calculator"]


def _replies(run_dir: Path) -> dict[tuple[str, str, str, int], list[str]]:
    out = {}
    for r in load_results(run_dir):
        assert r.status == "ok", (r.key, r.infra_error)
        out[r.key] = [t.reply.text for t in r.turns]
    return out


def test_a_fresh_recording_gives_the_committed_replies(tmp_path: Path) -> None:
    common = ["--models", ",".join(DEFAULT_MODELS), "--formats", ",".join(DEFAULT_FORMATS),
              "--scenarios", ",".join(SCENARIOS), "--quiet", "--no-report"]  # fmt: skip
    rc = run_cli(["run", *common, "--record", "none", "--out", str(tmp_path / "committed"),
                  "--cassettes", str(ROOT / "cassettes")])  # fmt: skip
    assert rc == 0
    rc = run_cli(["run", *common, "--record", "all", "--out", str(tmp_path / "fresh"),
                  "--cassettes", str(tmp_path / "cas")])  # fmt: skip
    assert rc == 0
    committed, fresh = _replies(tmp_path / "committed"), _replies(tmp_path / "fresh")
    assert len(committed) == len(DEFAULT_MODELS) * len(DEFAULT_FORMATS) * len(SCENARIOS) >= 20
    differ = [k for k in committed if committed[k] != fresh.get(k)]
    assert differ == [], f"{len(differ)} of {len(committed)} trials replied otherwise"
