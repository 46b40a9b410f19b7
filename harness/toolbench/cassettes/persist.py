"""Cassette files on disk: bounded reads of regular files only, atomic saves, unreadable
files moved aside."""

from __future__ import annotations

import contextlib
import itertools
import os
import stat
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from toolbench.errors import CassetteUnreadableError, CassetteWriteError


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()
CASSETTE_MODE = 0o666 & ~_UMASK
"""A cassette's permissions: data, as any file the user's umask lets be written."""


MAX_CASSETTE_BYTES = 64 * 1024 * 1024
"""The largest cassette file read (a trial's recording: the largest committed one is
under 400 kB; a streamed reply's events are bounded at 1 MB each)."""
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def read_cassette(path: Path) -> bytes | None:
    """The bytes of the cassette file at ``path``; None when there is none (or it is a
    directory, as a missing file).

    Only a regular file is read, and at most :data:`MAX_CASSETTE_BYTES` of it: a path
    that is a FIFO would block the trial (and the run) forever on its read, a device
    such as ``/dev/zero`` would grow the read until the kernel killed the process. The
    file is opened without blocking (a FIFO's open waits for a writer otherwise) and
    judged by what was opened (``fstat``), never by an earlier look at the path. Any
    other file is a :class:`CassetteUnreadableError` naming why: the trial fails with
    ``cassette.unreadable`` and the run goes on."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise CassetteUnreadableError(str(path), exc.strerror or str(exc)) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            return None
        if not stat.S_ISREG(info.st_mode):
            raise CassetteUnreadableError(
                str(path), "not a regular file (a FIFO, a device or a socket)"
            )
        if info.st_size > MAX_CASSETTE_BYTES:
            raise CassetteUnreadableError(str(path), _too_big(info.st_size))
        parts: list[bytes] = []
        left = MAX_CASSETTE_BYTES + 1  # a file that grew since fstat is caught here
        while left > 0:
            piece = os.read(fd, min(left, 1 << 20))
            if not piece:
                break
            parts.append(piece)
            left -= len(piece)
        if left <= 0:
            raise CassetteUnreadableError(str(path), _too_big(MAX_CASSETTE_BYTES + 1))
        return b"".join(parts)
    except OSError as exc:
        raise CassetteUnreadableError(str(path), exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


def _too_big(size: int) -> str:
    return f"{size} bytes or more; cassettes are limited to {MAX_CASSETTE_BYTES} bytes"


_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
_temp_serial = itertools.count()


def _open_temp(target: str, mode: int) -> tuple[int, str]:
    """A new temporary file beside the file ``target`` (never one that exists:
    ``O_EXCL``), named by this process and a counter rather than
    :func:`tempfile.mkstemp`'s random letters, and opened without Python's file object: a
    live trial saves one cassette, and that machinery cost more than the write. A name
    left by a killed process with the same id is stepped over."""
    folder, sep, name = target.rpartition(os.sep)
    for _ in range(100):
        tmp = f"{folder}{sep}.{name}.{os.getpid()}-{next(_temp_serial)}.tmp"
        try:
            return os.open(tmp, _TEMP_FLAGS, mode), tmp
        except FileExistsError:
            continue
    return tempfile.mkstemp(dir=folder or sep or ".", prefix=f".{name}.", suffix=".tmp")


def write_atomically(path: Path, text: str, mode: int) -> None:
    """Write ``text`` to a temporary file beside ``path`` and rename it over ``path``
    (:func:`os.replace` is atomic: a kill mid-write never leaves a torn cassette).

    The temporary name does not end in ``.yaml`` or ``.json``: one left by a kill is never
    taken for a cassette. ``mode``: the file's permissions (set exactly, whatever the
    umask). Any failure is a :class:`~toolbench.errors.CassetteWriteError`. The path is
    handled as text: :mod:`pathlib`'s parts were a noticeable share of a live trial's save.
    """
    data = text.encode("utf-8")
    target = os.fspath(path)
    try:
        try:  # the folder made only when missing: a live trial saves one cassette
            fd, tmp = _open_temp(target, mode)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
            fd, tmp = _open_temp(target, mode)
        try:
            try:
                os.fchmod(fd, mode)  # exactly, whatever the umask is now
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise CassetteWriteError(f"cannot write cassette {path}: {exc.strerror or exc}") from None


def move_aside(path: Path) -> Path:
    """Rename an unreadable cassette out of the way (kept for inspection, never replayed)."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    aside = path.with_name(f"{path.name}.unreadable-{stamp}")
    os.replace(path, aside)
    return aside
