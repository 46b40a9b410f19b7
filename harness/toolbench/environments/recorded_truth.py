"""``rescore`` of a loop on an MCP server: the ground truth each stored trial ran,
replayed from its cassette.

A loop on a server with a state tool runs its ground truth in the trial, recorded in
the trial's cassette (:mod:`.ground_truth`); a rescore has no trial, so it replays
that recording in each trial's stead, and no server is started. Apart from
:mod:`.ground_truth` because it loads the cassette layer, which the trial's own path
has loaded already and a command that only checks scenarios must not.
"""

from __future__ import annotations

from pathlib import Path

from toolbench.cassettes.use import use_cassette
from toolbench.environments.ground_truth import (
    forget_trial_truth,
    keep_trial_truth,
    reads_server_state,
)
from toolbench.errors import ToolbenchError
from toolbench.scenarios.model import Scenario


def keep_recorded_truth(scenario: Scenario, cassette: str | None) -> None:
    """The ground truth a stored trial of ``scenario`` ran, replayed from its
    ``cassette`` and kept for its scoring as the trial kept it. A cassette that cannot
    answer it keeps none: the scorers then run the truth themselves (starting the
    server)."""
    forget_trial_truth()
    if cassette is None or not reads_server_state(scenario):
        return
    try:
        with use_cassette(Path(cassette), "none"):
            keep_trial_truth(scenario)
    except ToolbenchError:
        return
