"""The run on disk: ``runs/<id>/run.json`` and ``runs/<id>/results.jsonl``, versioned.

One reader (:mod:`.reader`: validated trials, or fast projected rows), one writer that
redacts (:mod:`.writer`), schema versions and their migrations (:mod:`.schema`), and
:func:`~.merge.merge_runs`. The record shapes themselves are the pydantic models of
:mod:`toolbench.results`. Everything above (runner, rescore, reports) reads and writes a
run only through here.
"""

from toolbench.store.run_reader import (
    Projected,
    existing_results,
    info_path,
    iter_results,
    load_results,
    read_info,
    read_projected,
    read_trials_at,
    results_path,
)
from toolbench.store.schema import CURRENT as SCHEMA_VERSION
from toolbench.store.writer import (
    NewResults,
    ResultsAppender,
    append_result,
    copy_info,
    drop_torn_tail,
    drop_trials,
    result_line,
    write_info,
)

__all__ = [
    "SCHEMA_VERSION",
    "NewResults",
    "Projected",
    "ResultsAppender",
    "append_result",
    "copy_info",
    "drop_torn_tail",
    "drop_trials",
    "existing_results",
    "info_path",
    "iter_results",
    "load_results",
    "read_info",
    "read_projected",
    "read_trials_at",
    "result_line",
    "results_path",
    "write_info",
]
