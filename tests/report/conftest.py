"""Fixtures: a standard run ``r1`` and a regressed run ``r2`` (see synthetic_runs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from synthetic_runs import standard_trials, write_run


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return write_run(tmp_path / "runs" / "r1", standard_trials("r1"))


@pytest.fixture
def regressed_run(tmp_path: Path) -> Path:
    return write_run(tmp_path / "runs" / "r2", standard_trials("r2", regress=True))
