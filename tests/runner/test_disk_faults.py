"""Disk faults end a run with one line and an exit code, never a traceback (issue 34,
section 7).

A full disk at start, a results file the disk refuses mid-run or that is deleted under
the run, a cassette folder that fills up or turns read-only: each is simulated by
injecting the operating system's own error (``ENOSPC``, ``EROFS``) at the one call that
meets it, and, where this process may mount one, on a real 64 kB tmpfs. The run stops
at once (no model call after the fault), keeps every line it wrote whole, and
``--resume`` runs again every trial whose line or cassette was not kept.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.runner.conftest import GOOD_CALL, run_fake
from toolbench.cassettes import persist
from toolbench.errors import EXIT_STORAGE
from toolbench.providers.fake import FakeServer
from toolbench.store import load_results

pytestmark = pytest.mark.usefixtures("openai_key")
ENOSPC = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
EROFS = OSError(errno.EROFS, os.strerror(errno.EROFS))
SAMPLES = ("--samples", "6", "--concurrency", "1")
"""Twelve trials, one at a time: the count of model calls says when the run stopped."""


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    with FakeServer() as server:
        server.respond = lambda body: GOOD_CALL if "Paris" in str(body) else "A joke."
        yield server


def _stderr_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    (line,) = [x for x in err.splitlines() if x.startswith("error:")]
    return line


def _lines(run: Path) -> list[bytes]:
    data = (run / "results.jsonl").read_bytes()
    assert not data or data.endswith(b"\n"), "a torn last line"
    return data.splitlines()


def test_a_full_disk_at_start_is_one_line_and_exit_2(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """The lock file is the first byte a run writes."""

    def full(*_: Any) -> int:
        raise ENOSPC

    monkeypatch.setattr(os, "pwrite", full)  # only the lock file writes with pwrite
    assert run_fake(fake, tmp_path, scenario_file) == 2
    assert _stderr_line(capsys) == (
        f"error: --out: cannot write {tmp_path / 'run' / '.lock'}: No space left on device"
    )
    assert fake.received == []


def _fail_nth_results_write(monkeypatch: pytest.MonkeyPatch, nth: int) -> None:
    """The ``nth`` line written to results.jsonl gets half its bytes onto the disk, then
    ``ENOSPC`` (what a filling disk does to a write larger than the room left)."""
    real_open, real_write = os.open, os.write
    fds: set[int] = set()
    seen = [0]

    def opened(path: Any, flags: int, mode: int = 0o777, **kw: Any) -> int:
        fd = real_open(path, flags, mode, **kw)
        if str(path).endswith("results.jsonl") and flags & os.O_APPEND:
            fds.add(fd)
        return fd

    def write(fd: int, data: Any) -> int:
        if fd not in fds:
            return real_write(fd, data)
        view = memoryview(data)
        if len(view) > 1 and seen[0] != -1:
            seen[0] += 1
            if seen[0] == nth:
                seen[0] = -1
                return real_write(fd, view[: len(view) // 2])
        if seen[0] == -1:
            raise ENOSPC
        return real_write(fd, data)

    monkeypatch.setattr(os, "open", opened)
    monkeypatch.setattr(os, "write", write)


def test_a_disk_that_fills_mid_run_stops_it_without_a_torn_line(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    _fail_nth_results_write(monkeypatch, nth=3)
    assert run_fake(fake, tmp_path, scenario_file, *SAMPLES) == EXIT_STORAGE
    run = tmp_path / "run"
    assert _stderr_line(capsys) == (
        f"error: cannot write {run / 'results.jsonl'}: No space left on device; the run"
        " stopped (no trial started after it); once it can be written, complete it with:"
        f" toolbench run --resume --out {run}"
    )
    assert len(_lines(run)) == 2  # the two lines written whole, the third cut back off
    assert len(fake.received) == 3  # the third trial's call; none after it
    monkeypatch.undo()
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")
    assert run_fake(fake, tmp_path, scenario_file, "--resume", models=None, formats=None) == 0
    assert len(_lines(run)) == 12 and len(load_results(run)) == 12
    assert all(r.status == "ok" for r in load_results(run))


def test_a_results_file_deleted_mid_run_is_found_before_it_is_written_to(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "run" / "results.jsonl"
    answer = fake.respond

    def respond(body: dict[str, Any]) -> Any:
        if len(fake.received) == 4:
            results.unlink()
        return answer(body)

    fake.respond = respond
    assert run_fake(fake, tmp_path, scenario_file, *SAMPLES) == EXIT_STORAGE
    assert _stderr_line(capsys).startswith(
        f"error: {results} was deleted while the run was writing it; the run stopped"
    )
    assert len(fake.received) == 4
    assert not results.exists()
    assert run_fake(fake, tmp_path, scenario_file, "--resume", models=None, formats=None) == 0
    assert len(load_results(tmp_path / "run")) == 12
    assert len(fake.received) == 4 + 12 - 4  # the four recorded replay; the rest are asked


def _fail_cassette_saves_after(
    monkeypatch: pytest.MonkeyPatch, kept: int, fault: OSError
) -> list[int]:
    """Let ``kept`` cassettes be saved, then fail every save with ``fault``."""
    real = persist._open_temp
    saves = [0]

    def open_temp(target: str, mode: int) -> tuple[int, str]:
        if saves[0] >= kept:
            raise fault
        opened = real(target, mode)
        saves[0] += 1
        return opened

    monkeypatch.setattr(persist, "_open_temp", open_temp)
    return saves


@pytest.mark.parametrize(("fault", "said"), [(ENOSPC, "No space left on device"),
                                             (EROFS, "Read-only file system")])  # fmt: skip
@pytest.mark.parametrize("stream", ["off", "on"])
def test_a_cassette_folder_that_cannot_be_written_stops_the_run(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], fault: OSError, said: str, stream: str,
) -> None:  # fmt: skip
    """No model call after the trial whose cassette could not be saved; that trial's
    line says so (``harness.cassette_write``), and ``--resume`` runs it again."""
    _fail_cassette_saves_after(monkeypatch, kept=3, fault=fault)
    assert run_fake(fake, tmp_path, scenario_file, *SAMPLES, "--stream", stream) == EXIT_STORAGE
    line = _stderr_line(capsys)
    assert line.startswith("error: cannot write cassette ") and f": {said}; the run stopped" in line
    run = tmp_path / "run"
    trials = load_results(run)
    assert len(fake.received) == 4 == len(trials)  # three kept, the fourth not: then none
    assert [t.error_code for t in trials].count("harness.cassette_write") == 1
    monkeypatch.undo()
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")
    assert run_fake(fake, tmp_path, scenario_file, "--resume", models=None, formats=None) == 0
    again = load_results(run)
    assert len(again) == 12 and len(_lines(run)) == 12  # the not-kept line replaced
    assert all(t.status == "ok" for t in again), [t.error_code for t in again]
    assert len(fake.received) == 4 + 9  # the unsaved trial asked again, the three kept not


def test_resume_retries_the_cassette_write_lines_of_an_older_run(
    fake: FakeServer, tmp_path: Path, scenario_file: Path
) -> None:
    """A run written before runs stopped (every later trial failed its save): each of
    those lines is run again, once, and replaced."""
    assert run_fake(fake, tmp_path, scenario_file, *SAMPLES) == 0
    run = tmp_path / "run"
    lines = [json.loads(x) for x in _lines(run)]
    for d in lines[5:]:
        d.update(status="harness_error", error_code="harness.cassette_write", scores=None,
                 infra_error="CassetteWriteError: cannot write cassette x: disk full")  # fmt: skip
    (run / "results.jsonl").write_text("".join(json.dumps(d) + "\n" for d in lines))
    for path in (tmp_path / "cas").rglob("*.json"):
        path.unlink()
    asked = len(fake.received)
    assert run_fake(fake, tmp_path, scenario_file, "--resume", models=None, formats=None) == 0
    assert len(fake.received) == asked + 7
    again = load_results(run)
    assert len(again) == 12 == len(_lines(run)) and all(t.status == "ok" for t in again)


def _mount(tmp: Path, size: str) -> Callable[[], None]:
    point = tmp / "disk"
    point.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(point)],
                          capture_output=True)  # fmt: skip
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")

    def unmount() -> None:
        subprocess.run(["umount", str(point)], check=False)

    return unmount


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_on_a_real_small_disk(
    fake: FakeServer, tmp_path: Path, scenario_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 64 kB tmpfs: full at start (one line, exit 2, no empty run.json), and a cassette
    folder on it that fills mid-run (exit 4, no call after it)."""
    unmount = _mount(tmp_path, "64k")
    disk = tmp_path / "disk"
    try:
        filler = disk / "filler"
        with filler.open("wb") as fh, pytest.raises(OSError):
            fh.write(b"\0" * 70_000)
        out = disk / "run"
        rc = run_fake(fake, tmp_path, scenario_file, "--out", str(out), "--cassettes",
                      str(tmp_path / "cas"))  # fmt: skip
        assert rc == 2 and _stderr_line(capsys).endswith("No space left on device")
        assert not (out / "run.json").exists() and fake.received == []
        filler.unlink()
        (disk / "ballast").write_bytes(b"\0" * 40_000)
        cas = disk / "cas"
        rc = run_fake(fake, tmp_path, scenario_file, *SAMPLES, "--cassettes", str(cas))
        assert rc == EXIT_STORAGE
        assert "No space left on device; the run stopped" in _stderr_line(capsys)
        saved = len(list(cas.rglob("*.json")))
        assert len(fake.received) == saved + 1 < 12
    finally:
        unmount()
