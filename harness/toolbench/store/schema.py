"""Schema versions of the stored run, and the migrations between them.

Every stored record (a ``results.jsonl`` line, ``run.json``) carries ``schema_version``.
On read, a record of an older version is migrated one version at a time by the functions
registered here, before it is validated or projected; a record of a newer version is
refused with one line, because this toolbench cannot know what its fields mean (reading
it anyway would silently mislabel them).

A change of a stored shape is: bump :data:`~toolbench.results.RESULTS_SCHEMA_VERSION`,
then register one function per record kind that turns a version ``N - 1`` record into a
version ``N`` one (a fixture of the old version keeps it tested).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from toolbench.errors import UserError
from toolbench.results import RESULTS_SCHEMA_VERSION

RecordKind = Literal["trial", "run"]
"""``trial``: a line of ``results.jsonl``; ``run``: ``run.json``."""

Migration = Callable[[dict[str, Any]], dict[str, Any]]

CURRENT = RESULTS_SCHEMA_VERSION
OLDEST = 1
"""The first schema toolbench wrote; records that carry no version are this one."""

_MIGRATIONS: dict[RecordKind, dict[int, Migration]] = {"trial": {}, "run": {}}


def migration(kind: RecordKind, from_version: int) -> Callable[[Migration], Migration]:
    """Register ``fn`` as the migration of a ``kind`` record from ``from_version`` to the
    next version. The function gets the decoded record and returns the new one (it may
    change its argument: the reader owns it); :func:`upgrade` sets the new version."""

    def register(fn: Migration) -> Migration:
        table = _MIGRATIONS[kind]
        if from_version in table:
            raise ValueError(f"a {kind} migration from schema {from_version} is registered")
        table[from_version] = fn
        return fn

    return register


def version_of(record: dict[str, Any], where: str) -> int:
    """The record's schema version; a missing one is the first (1)."""
    v = record.get("schema_version", OLDEST)
    if isinstance(v, bool) or not isinstance(v, int) or v < OLDEST:
        raise UserError(f"{where}: schema_version: {v!r} is not a schema version")
    return v


def upgrade(kind: RecordKind, record: dict[str, Any], where: str) -> dict[str, Any]:
    """``record`` at the :data:`CURRENT` version: migrated when older, refused when newer.

    ``where`` names the file (and line) in the error.
    """
    v = version_of(record, where)
    if v == CURRENT:
        return record
    if v > CURRENT:
        raise UserError(
            f"{where}: written by a newer toolbench (schema {v}); this one reads up to {CURRENT}"
        )
    table = _MIGRATIONS[kind]
    while v < CURRENT:
        step = table.get(v)
        if step is None:  # a bug of ours, not the user's: every version has its step
            raise RuntimeError(f"no {kind} migration from schema {v}")
        record = step(record)
        v += 1
        record["schema_version"] = v
    return record


# --------------------------------------------------------------------------- migrations


@migration("trial", 1)
def _trial_1_to_2(record: dict[str, Any]) -> dict[str, Any]:
    """Schema 2 trial lines may carry what schema 1 had no field for: ``error_code``,
    ``error_type``, ``attempts``, ``notes``, ``settings``, ``params`` and, inside scores and
    parses, ``fallback_rescued`` and ``via``. Each has a default meaning "not recorded", so a
    schema-1 line is a valid schema-2 line as it is."""
    return record


@migration("run", 1)
def _run_1_to_2(record: dict[str, Any]) -> dict[str, Any]:
    """Schema 2 ``run.json`` adds ``merged_from`` (a schema-1 run was not merged),
    ``markers`` and ``auto_formats`` (None / empty: not recorded)."""
    record.setdefault("merged_from", [])
    return record


@migration("trial", 2)
def _trial_2_to_3(record: dict[str, Any]) -> dict[str, Any]:
    """Schema 3 trial lines may carry ``stream`` (the trial, its turns) and
    ``settings.display``: all streamed-trial fields, absent from a non-streamed trial, so
    a schema-2 line is a valid schema-3 line as it is."""
    return record


@migration("run", 2)
def _run_2_to_3(record: dict[str, Any]) -> dict[str, Any]:
    """Schema 3 ``run.json`` adds ``cells``, ``format_options``, ``scenario_files``,
    ``model_params``, ``api_base``, ``cassette_api_base``, ``cassette_dir``, ``shard``,
    ``scenario_hashes`` (dropped again in 4) and ``display``; each has a default meaning
    "not recorded" (resume then takes the command line, rescore needs ``--scenarios``,
    merge cannot compare hashes; ``careful``, what a schema-2 run, which streamed
    nothing, meant)."""
    return record


@migration("trial", 3)
def _trial_3_to_4(record: dict[str, Any]) -> dict[str, Any]:
    """Schema 4 changed only ``run.json``: a schema-3 line is a valid schema-4 line."""
    return record


@migration("run", 3)
def _run_3_to_4(record: dict[str, Any]) -> dict[str, Any]:
    """Schema 4 ``run.json`` drops ``scenario_hashes``: it repeated ``scenario_files``
    (each file's SHA-256, keyed by its path relative to the working directory), which
    resume, rescore and now merge read. A schema-3 run wrote both from the same files, so
    nothing is lost; one that recorded hashes without files (never written by toolbench)
    reads as a run whose files were not recorded, like a schema-2 run."""
    record.pop("scenario_hashes", None)
    return record


_STREAM_VALUES = (
    "display", "ttft_ms", "first_call_byte_ms", "call_complete_ms", "tokens_per_s",
    "stream_leak", "leaked_chars", "holdback_ms",
)  # fmt: skip
"""The schema-4 ``stream`` fields that became the streaming scorer's named values."""


@migration("trial", 4)
def _trial_4_to_5(record: dict[str, Any]) -> dict[str, Any]:
    """Schema 5 stores a streamed trial's measurements as the streaming scorer's named
    values (``scores.values``, :mod:`toolbench.scoring.stream`) instead of the fixed
    ``stream`` record: each field becomes the value of that name, and its ``errors`` (the
    ``stream.*`` codes, already in ``scores.errors``) become ``stream_error`` with the codes
    as its reason. A trial without scores (it never reached the model) had nothing the
    metrics read, so its ``stream`` is dropped."""
    stream = record.pop("stream", None)
    scores = record.get("scores")
    if not isinstance(stream, dict) or not isinstance(scores, dict):
        return record
    values: dict[str, Any] = {name: {"value": stream.get(name)} for name in _STREAM_VALUES}
    values["display"]["value"] = stream.get("display", "careful")
    errors = [str(e) for e in stream.get("errors") or ()]
    values["stream_error"] = {"value": bool(errors)}
    if errors:
        values["stream_error"]["reason"] = "; ".join(errors)
    scores["values"] = {**values, **(scores.get("values") or {})}
    return record


@migration("run", 4)
def _run_4_to_5(record: dict[str, Any]) -> dict[str, Any]:
    """Schema 5 changed only trial lines: a schema-4 ``run.json`` is a valid schema-5 one."""
    return record


SCHEMA_5_CHECKS = (
    "parse", "parse_strict_ok", "parse_ok", "first_try_ok", "call_accuracy",
    "no_call_correct", "final_answer_ok", "args_schema_valid", "stop", "stop_compliant",
    "leak_raw", "leak_sanitized", "retried", "retry_recovered", "fallback_rescued",
)  # fmt: skip
"""The schema-5 ``scores`` fields that became the built-in scorers' named values, in the
order those scorers give them (:mod:`toolbench.scoring.builtin_scorers`)."""


@migration("trial", 5)
def _trial_5_to_6(record: dict[str, Any]) -> dict[str, Any]:
    """Schema 6 stores the core checks as the built-in scorers' named values
    (``scores.values``) instead of fixed ``scores`` fields: each field present becomes
    the value of that name, ahead of the values schema 5 already held. Their reasons were
    not stored then (the trial's ``errors`` and ``reasons`` still hold every problem), so
    the migrated values have none; ``rescore`` gives them."""
    scores = record.get("scores")
    if not isinstance(scores, dict):
        return record
    values = {name: {"value": scores.pop(name)} for name in SCHEMA_5_CHECKS if name in scores}
    scores["values"] = {**values, **(scores.get("values") or {})}
    return record


@migration("run", 5)
def _run_5_to_6(record: dict[str, Any]) -> dict[str, Any]:
    """Schema 6 changed only trial lines: a schema-5 ``run.json`` is a valid schema-6 one."""
    return record


@migration("trial", 6)
def _trial_6_to_7(record: dict[str, Any]) -> dict[str, Any]:
    """Schema 7 trial lines may carry ``TurnRecord.environment`` (the calls an environment
    ran and its state after them), absent from a trial without one: a schema-6 line is a
    valid schema-7 line as it is."""
    return record


@migration("run", 6)
def _run_6_to_7(record: dict[str, Any]) -> dict[str, Any]:
    """Schema 7 ``run.json`` adds ``scenario_tags`` and ``model_notes``, what the reports
    read of the run's inputs; empty means "not recorded": a workload then selects by
    scenario id, file or folder only, and the header has no note on the models."""
    return record


@migration("trial", 7)
def _trial_7_to_8(record: dict[str, Any]) -> dict[str, Any]:
    """Schema 8 changed only ``run.json``: a schema-7 line is a valid schema-8 line."""
    return record


@migration("run", 7)
def _run_7_to_8(record: dict[str, Any]) -> dict[str, Any]:
    """Schema 8 ``run.json`` records ``batch`` (``run --batch``). A schema-7 run did not:
    it reads as ``None``, "not recorded", a live run unless ``--resume --batch`` says
    otherwise (as a resume of it did before)."""
    return record
