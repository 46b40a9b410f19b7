"""The one writer of a stored run: every byte passes the redaction of secrets.

``run`` appends one trial at a time (:class:`ResultsAppender`); ``rescore`` and ``merge``
write a new run (:class:`NewResults`, :func:`write_info`). Each line is the trial's JSON
at the current schema version, with every known secret value (environment, command line)
removed everywhere and anything shaped like a credential removed from error texts, which
may echo what a server was sent.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from types import TracebackType
from typing import IO

from toolbench.errors import StorageError, UserError
from toolbench.record_redaction import redacted_json_line
from toolbench.results import RunInfo, TrialResult
from toolbench.store.run_reader import TrialKey, info_path, results_path, trial_key
from toolbench.store.schema import CURRENT


def result_line(result: TrialResult) -> str:
    """One trial as its redacted, newline-terminated ``results.jsonl`` line."""
    if result.schema_version != CURRENT:
        result = result.model_copy(update={"schema_version": CURRENT})
    return redacted_json_line(result.model_dump_json())


def append_result(path: Path, result: TrialResult) -> None:
    """Append one trial and flush, so a kill at any moment loses no finished trial."""
    with ResultsAppender(path) as out:
        out.append(result)


_APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)


class ResultsAppender:
    """A run's ``results.jsonl``, open for the whole run: each trial's line is handed to
    the operating system in one write as it finishes.

    Written with no buffer in between, so a kill at any moment loses no finished trial.
    No fsync: it would block the event loop for every trial and only guards against a
    power cut. Kept open rather than opened per trial: opening and closing the file cost
    a live trial more than writing its line (``O_APPEND``: every write lands at the end).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def __enter__(self) -> ResultsAppender:
        try:
            self._fd = os.open(self.path, _APPEND_FLAGS, 0o666)
        except OSError as exc:
            raise StorageError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        return self

    def append(self, result: TrialResult) -> None:
        """Write one trial's line, or raise :class:`~toolbench.errors.StorageError`.

        A file deleted under the run is found before writing (its link count is 0: a
        line written to it would be lost with it), and a write the disk refuses part way
        (full, read-only) is cut back off: the file never ends in a torn line."""
        fd = self._fd
        assert fd is not None, "ResultsAppender is used as a context manager"
        data = result_line(result).encode("utf-8")
        if os.fstat(fd).st_nlink == 0:
            raise StorageError(f"{self.path} was deleted while the run was writing it")
        view, sent = memoryview(data), 0
        try:
            while sent < len(data):
                sent += os.write(fd, view[sent:])
        except OSError as exc:
            _cut_back(fd, sent)
            raise StorageError(f"cannot write {self.path}: {exc.strerror or exc}") from None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _cut_back(fd: int, sent: int) -> None:
    """Remove the ``sent`` bytes of a line the disk refused part way (the file's last
    bytes: one writer appends, under the run's lock)."""
    if sent:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, os.fstat(fd).st_size - sent)


def drop_trials(path: Path, keys: set[TrialKey]) -> int:
    """Rewrite ``path`` without the lines of the trials ``keys`` (atomically: a temporary
    file renamed over it); returns how many lines went.

    ``--resume`` redoes a trial whose line says it was not kept (its cassette could not
    be written): readers keep the first line of a trial, so the old line goes before the
    new one is appended."""
    if not keys or not path.is_file():
        return 0
    kept: list[bytes] = []
    dropped = 0
    with path.open("rb") as fh:
        for raw in fh:
            try:
                key = trial_key(json.loads(raw))
            except (ValueError, KeyError, TypeError):
                key = None  # not a trial's line: kept as it is (the reader judges it)
            if key in keys:
                dropped += 1
            else:
                kept.append(raw)
    if dropped:
        _replace(path, b"".join(kept))
    return dropped


def _replace(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path`` and rename it over ``path``: a
    full disk leaves the old file whole. A failure is a ``UserError`` naming the file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise UserError(f"{path}: cannot write: {exc.strerror or exc}") from None


def drop_torn_tail(path: Path) -> None:
    """Cut a last line that a killed run left half-written, so appends start clean."""
    if not path.is_file():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as fh:
            fh.truncate(data.rfind(b"\n") + 1)


def write_info(run_dir: Path, info: RunInfo) -> None:
    """Write ``run_dir/run.json`` (redacted, at the current schema version)."""
    if info.schema_version != CURRENT:
        info = info.model_copy(update={"schema_version": CURRENT})
    data = json.loads(redacted_json_line(info.model_dump_json()))
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    _replace(info_path(run_dir), text.encode("utf-8"))  # a full disk: no empty run.json


def copy_info(src_run: Path, dst_dir: Path) -> None:
    """Copy a run's ``run.json`` byte for byte (a rescored run is the same matrix)."""
    src = info_path(src_run)
    if src.is_file():
        shutil.copyfile(src, dst_dir / "run.json")


class NewResults:
    """The results file of a new run directory, written trial by trial.

    Refuses a directory that already holds results (``-o`` of rescore and merge must be a
    new run). Lines go to ``results.jsonl.partial``, renamed into place when the writing
    ends without an error and removed when it fails: a failed rescore or merge leaves no
    half-written run for a report to read.
    """

    def __init__(self, run_dir: Path, option: str = "-o") -> None:
        self.path = results_path(run_dir)
        self._partial = self.path.with_name(self.path.name + ".partial")
        self._option = option
        self._fh: IO[str] | None = None
        self.written = 0

    def _refuse_existing(self) -> None:
        if self.path.exists():
            raise UserError(f"{self._option}: {self.path} already exists; choose a new directory")

    def __enter__(self) -> NewResults:
        self._refuse_existing()
        try:
            self._fh = self._partial.open("x", encoding="utf-8")
        except FileExistsError:
            raise UserError(
                f"{self._option}: {self._partial} exists: another toolbench is writing there"
            ) from None
        except OSError as exc:
            raise UserError(f"{self.path}: cannot write: {exc.strerror}") from None
        return self

    def write(self, result: TrialResult) -> None:
        assert self._fh is not None, "NewResults is used as a context manager"
        self._fh.write(result_line(result))
        self.written += 1

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._fh is None:
            return
        self._fh.close()
        if exc_type is not None:
            self._partial.unlink(missing_ok=True)
            return
        try:
            self._refuse_existing()
        except UserError:
            self._partial.unlink(missing_ok=True)
            raise
        os.replace(self._partial, self.path)
