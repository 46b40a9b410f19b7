"""The one reader of a stored run: ``results.jsonl`` and ``run.json``.

Two modes over the same rules:

* :func:`iter_results` (validated): every line becomes a :class:`TrialResult`. For
  rescoring, resuming, merging and drill-downs.
* :func:`read_projected` (rows): every line is decoded as :mod:`json` decodes it, validated
  as :func:`iter_results` validates it (but the lines the calling process has just written
  itself), and handed, as a plain dict, to a projection the caller gives (the report's
  trial table), so no ``TrialResult`` is built per row.

One verdict for every command: a run ``report`` refuses, ``gate``, ``compare`` and
``export`` refuse too (a CI gate once passed a run with ``status: "weird"`` that the
report refused). Rules both modes keep: every line is migrated from an older schema and
refused when newer (:mod:`.schema`); a torn last line (a run killed mid-write: the start
of a JSON object, cut) is skipped; a trial written twice is kept once (the first line)
with one warning naming the file and lines; a file that is not UTF-8, a line that is not
a JSON object or is nested too deeply to decode (``[`` x 200,000), or a binary tail, is
one :class:`UserError` naming the file and its line (from 1).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import ValidationError
from pydantic_core import from_json

from toolbench.errors import UserError
from toolbench.results import RunInfo, TrialResult
from toolbench.run_paths import existing_results as existing_results
from toolbench.run_paths import info_path as info_path
from toolbench.run_paths import results_path as results_path
from toolbench.store.schema import CURRENT, upgrade

Row = TypeVar("Row")
TrialKey = tuple[str, str, str, int]

_CURRENT_PREFIX = f'{{"schema_version":{CURRENT},'
"""How a line written by this version starts: such a line is validated from its text
directly (pydantic's parser), with no :mod:`json` decode first."""


def warn_duplicates(path: Path, lines: list[int]) -> None:
    if lines:
        shown = ", ".join(map(str, lines[:5])) + (", ..." if len(lines) > 5 else "")
        print(
            f"warning: {path}: {len(lines)} duplicated trial(s) counted once (line {shown})",
            file=sys.stderr,
        )


def _bad_line(path: Path, n: int, exc: Exception) -> UserError:
    if isinstance(exc, KeyError):
        what = f"{exc.args[0]}: field required"
    elif isinstance(exc, json.JSONDecodeError):
        what = f"not a results file: not a JSON line ({exc})"
    elif isinstance(exc, ValidationError):
        err = exc.errors()[0]
        what = f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
    else:
        what = str(exc)
    return UserError(f"{path}:{n}: {what}")


def _loads(line: str) -> Any:
    """A line's JSON value: pydantic's reader (far less CPU than :func:`json.loads` on a
    streamed trial's line of 200 deltas), with :func:`json.loads` deciding whatever it
    refuses (a lone surrogate escape, nesting past its limit, bad syntax), so every value
    and every error is the one :mod:`json` gives."""
    try:
        return from_json(line)
    except ValueError:
        return json.loads(line)


def _decode(path: Path, n: int, line: str) -> dict[str, Any]:
    """One line as a current-schema dict (migrated; refused when newer)."""
    try:
        d = _loads(line)
    except RecursionError:
        raise ValueError("not a results file: nested too deeply to decode") from None
    if not isinstance(d, dict):
        raise ValueError("expected a JSON object")
    if d.get("schema_version") == CURRENT:
        return d
    return upgrade("trial", d, f"{path}:{n}")


def _torn(raw: bytes) -> bool:
    """Whether an unterminated last line is what a killed writer leaves (the start of a
    JSON object, with no NUL byte), not a binary tail to refuse."""
    return raw.lstrip().startswith(b"{") and b"\0" not in raw


def _cut_in_a_character(exc: UnicodeDecodeError) -> bool:
    return exc.reason == "unexpected end of data"


def trial_key(d: dict[str, Any]) -> TrialKey:
    """A decoded line's trial key (model, format, scenario, sample), as ``TrialResult.key``."""
    return (d["model"], d["format"], d["scenario_id"], int(d.get("sample", 0)))


# --------------------------------------------------------------------------- validated


def iter_results(run: str | Path) -> Iterator[TrialResult]:
    """Every trial of a run, validated, in file order (see the module's rules).

    The whole file is checked to be UTF-8 before the first trial is yielded, so a
    command that writes what it reads (rescore, merge) never starts on a binary file.
    """
    path = existing_results(run)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror}") from None
    cut = data.rfind(b"\n") + 1
    try:
        text = data[:cut].decode("utf-8")
    except UnicodeDecodeError as exc:
        why = f"not a results file: not UTF-8 text (offset {exc.start})"
        raise UserError(f"{path}: {why}") from None
    tail = data[cut:]
    if tail.strip() and not _torn(tail):
        last = data.count(b"\n") + 1
        raise UserError(f"{path}:{last}: not a results file: an unterminated line of binary data")
    try:
        text += tail.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A torn last line cut inside a character is skipped like any torn line.
        if not _cut_in_a_character(exc):
            why = f"not a results file: not UTF-8 text (offset {cut + exc.start})"
            raise UserError(f"{path}: {why}") from None
    seen: set[TrialKey] = set()
    duplicates: list[int] = []
    start, n = 0, 0
    while start < len(text):
        end = text.find("\n", start)
        torn = end < 0
        line = text[start:] if torn else text[start : end + 1]
        start = len(text) if torn else end + 1
        n += 1
        if not line.strip():
            continue
        try:
            trial = _validate(path, n, line)
        except (ValueError, KeyError, TypeError) as exc:
            if torn:
                break  # interrupted mid-write: the trial is redone by --resume
            raise _bad_line(path, n, exc) from None
        if trial.key in seen:
            duplicates.append(n)
            continue
        seen.add(trial.key)
        yield trial
    warn_duplicates(path, duplicates)


def _validate(path: Path, n: int, line: str) -> TrialResult:
    if line.startswith(_CURRENT_PREFIX):
        try:
            return TrialResult.model_validate_json(line)
        except ValidationError:
            pass  # decoded again below, for the error's wording
    return TrialResult.model_validate(_decode(path, n, line))


def load_results(run: str | Path) -> list[TrialResult]:
    return list(iter_results(run))


def read_trials_at(
    path: Path, offsets: Iterable[int], lines: Iterable[int] | None = None
) -> list[TrialResult]:
    """The validated trials whose lines start at these byte offsets (drill-downs);
    ``lines``: their numbers, for errors."""
    return list(iter_trials_at(path, offsets, lines))


def iter_trials_at(
    path: Path, offsets: Iterable[int], lines: Iterable[int] | None = None
) -> Iterator[TrialResult]:
    """Validate the lines at these byte offsets one at a time (``lines``: their numbers,
    for errors), so a caller that picked lines need not hold them all."""
    numbers = iter(lines) if lines is not None else None
    with path.open("rb") as fh:
        for off in offsets:
            n = next(numbers) if numbers is not None else 0
            fh.seek(int(off))
            line = fh.readline().decode("utf-8", errors="replace")
            try:
                yield _validate(path, n, line)
            except (ValueError, KeyError, TypeError) as exc:
                raise _bad_line(path, n, exc) from None


# --------------------------------------------------------------------------- projected


@dataclass
class Projected(Generic[Row]):
    """What :func:`read_projected` read: one row per distinct trial."""

    path: Path
    rows: list[Row] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)
    """Byte offset of each row's line (for :func:`read_trials_at`)."""
    lines: list[int] = field(default_factory=list)
    """Line number of each row (from 1)."""
    duplicates: int = 0
    """Lines that repeated an earlier trial's key and were left out."""


def read_projected(
    run: str | Path, project: Callable[[dict[str, Any]], Row], written_from: int | None = None
) -> Projected[Row]:
    """Every distinct trial as ``project(line_as_dict)``, with its line's byte offset.

    ``written_from``: the byte offset from which this process wrote the file (a run's own
    lines, just serialized from validated models under the run's lock): those lines are
    decoded and projected but not validated again (costly on a streamed trial's line);
    every line before it is checked.

    Each line is validated as :func:`iter_results` validates it (the same verdict; a
    pydantic check of the decoded dict, no model built to be thrown away).
    ``project`` may raise ``KeyError`` (a missing field), ``ValueError``, ``TypeError`` or
    ``AttributeError`` on a malformed line: that is reported as the file's bad line.
    """
    path = existing_results(run)
    out: Projected[Row] = Projected(path)
    seen: set[TrialKey] = set()
    duplicates: list[int] = []
    pos = 0
    with path.open("rb") as fh:
        for n, raw in enumerate(fh, 1):
            start = pos
            pos += len(raw)
            if not raw.strip():
                continue
            try:
                # json.loads of bytes guesses UTF-16/32 from NUL bytes; a results file is
                # UTF-8, so decode it as such and say so when it is not.
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                if not raw.endswith(b"\n") and _torn(raw) and _cut_in_a_character(exc):
                    break  # the last line, torn inside a character
                raise UserError(
                    f"{path}:{n}: not a results file: not UTF-8 text (offset {start + exc.start})"
                ) from None
            if not raw.endswith(b"\n") and not _torn(raw):
                raise UserError(
                    f"{path}:{n}: not a results file: an unterminated line of binary data"
                )
            try:
                d = _decode(path, n, text)
                if written_from is None or start < written_from:
                    _check(d, raw)
                key = trial_key(d)
                row = project(d)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                if not raw.endswith(b"\n"):
                    break  # the last line, torn: interrupted mid-write
                raise _bad_line(path, n, exc) from None
            if key in seen:
                duplicates.append(n)
                continue
            seen.add(key)
            out.rows.append(row)
            out.offsets.append(start)
            out.lines.append(n)
    out.duplicates = len(duplicates)
    warn_duplicates(path, duplicates)
    return out


def _check(d: dict[str, Any], raw: bytes) -> None:
    """Refuse what :func:`iter_results` refuses (an unknown status, field or score).

    A current line is validated from its bytes (pydantic's own parser: far quicker than
    validating the decoded dict, whose ``Any`` requests are copied whole)."""
    if raw.startswith(_CURRENT_PREFIX.encode()):
        try:
            TrialResult.__pydantic_validator__.validate_json(raw)
            return
        except ValidationError:
            pass  # validated again below, for the error's wording
    TrialResult.model_validate(d)


# --------------------------------------------------------------------------- run.json


def read_info(run: str | Path) -> RunInfo | None:
    """The run's ``run.json`` (migrated; refused when newer), or None when it has none."""
    p = info_path(run)
    if not p.is_file():
        return None
    try:
        d = json.loads(p.read_bytes().decode("utf-8"))
        if not isinstance(d, dict):
            raise ValueError("expected a JSON object")
        return RunInfo.model_validate(upgrade("run", d, str(p)))
    except UnicodeDecodeError:
        raise UserError(f"{p}: not a valid run.json: not UTF-8 text") from None
    except RecursionError:
        raise UserError(f"{p}: not a valid run.json: nested too deeply to decode") from None
    except ValueError as exc:
        raise UserError(f"{p}: not a valid run.json: {str(exc).splitlines()[0]}") from None
