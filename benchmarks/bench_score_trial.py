"""Scoring cost a trial: every registered scorer over one trial's turns (``score_trial``),
and writing and reading back its stored scores (``TrialScores`` as JSON, one line's part).

Since schema 6 the built-in checks are scorers like any other and a trial stores every
value by name, so this is what the registry and the named values cost a run. The trials
are the schema-5 fixture's replies (``tests/data/runs/v5``: plain trials of an embedded
model, replayed from the committed cassettes), rescored in a loop; CPU time of this
process, best of 5 rounds.

Run: ``python benchmarks/bench_score_trial.py``; ``--tiny``: one round of 20 (checks it
still runs).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import time
from pathlib import Path

from toolbench.formats.format_registry import get_format
from toolbench.results import TrialScores
from toolbench.scenarios import load_scenarios
from toolbench.scoring import score_trial
from toolbench.store import iter_results

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "tests" / "data" / "runs" / "v5"
ROUNDS, N = 5, 2000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiny", action="store_true", help="one round of 20 trials")
    rounds, n = (1, 20) if ap.parse_args().tiny else (ROUNDS, N)
    with contextlib.redirect_stderr(io.StringIO()):
        trials = [t for t in iter_results(RUN) if "stream" not in t.format]
    by_id = {s.id: s for s in load_scenarios()}
    work = [(by_id[t.scenario_id], get_format(t.format), t.turns, t.settings) for t in trials]
    scores = score_trial(*work[0])
    score_us, io_us = [], []
    for _ in range(rounds):
        t0 = time.process_time()
        for i in range(n):
            scores = score_trial(*work[i % len(work)])
        t1 = time.process_time()
        for _ in range(n):
            TrialScores.model_validate_json(scores.model_dump_json())
        t2 = time.process_time()
        score_us.append((t1 - t0) / n * 1e6)
        io_us.append((t2 - t1) / n * 1e6)
    size = len(scores.model_dump_json())
    print(f"{len(work)} plain trials, {len(scores.values)} named values each, {size} bytes")
    print(f"score_trial: {min(score_us):.0f} us a trial (best of {rounds} x {n})")
    print(f"scores written and read back: {min(io_us):.1f} us a trial")


if __name__ == "__main__":
    main()
