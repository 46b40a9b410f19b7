"""Where a stored run's files are (``RUN/results.jsonl``, ``RUN/run.json``), known
without reading them.

A leaf beside the store (:mod:`toolbench.store`, which reads and validates them), so a
command that is given a folder holding no run says so before it loads the reader.
"""

from __future__ import annotations

from pathlib import Path

from toolbench.errors import UserError


def results_path(run_dir: str | Path) -> Path:
    """``RUN/results.jsonl``, or the path itself when it names a ``.jsonl`` file."""
    p = Path(run_dir)
    return p if p.suffix == ".jsonl" else p / "results.jsonl"


def info_path(run: str | Path) -> Path:
    return results_path(run).parent / "run.json"


def existing_results(run: str | Path) -> Path:
    """The run's results file, or the one-line error every command gives without one."""
    path = results_path(run)
    if not path.is_file():
        raise UserError(f"{path}: no results file (is '{run}' a run directory?)")
    return path
