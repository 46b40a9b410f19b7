"""A cassette path that is not a regular file, or a file too large, fails its trial with a
typed code; it never hangs the run or grows it without bound (issue 34, section 6).

A FIFO's read blocks until a writer comes, ``/dev/zero`` never ends: each is opened
without blocking and judged by what was opened (``cassettes/persist.read_cassette``).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.runner.conftest import run_fake, trials_by_id
from tests.support.fake_openai import FakeOpenAI
from toolbench.cassettes import persist
from toolbench.cassettes.persist import read_cassette
from toolbench.errors import CassetteUnreadableError

pytestmark = pytest.mark.usefixtures("openai_key")
CASSETTE = Path("cas") / "openai_fake" / "prompt-json" / "weather.json"
STREAMED = Path("cas") / "openai_fake" / "prompt-json_stream" / "weather.json"


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _huge(path: Path) -> None:
    with path.open("wb") as fh:  # sparse: no disk used
        fh.truncate(persist.MAX_CASSETTE_BYTES + 1)


BAD: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (_fifo, "not a regular file (a FIFO, a device or a socket)"),
    "dev-zero": (_zero, "not a regular file (a FIFO, a device or a socket)"),
    "too-large": (_huge, f"{persist.MAX_CASSETTE_BYTES + 1} bytes or more; cassettes are"
                         f" limited to {persist.MAX_CASSETTE_BYTES} bytes"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD))
def test_read_cassette_refuses_what_is_not_a_bounded_regular_file(
    tmp_path: Path, case: str
) -> None:
    make, why = BAD[case]
    path = tmp_path / "c.json"
    make(path)
    with pytest.raises(CassetteUnreadableError) as err:
        read_cassette(path)
    assert err.value.reason == why
    assert read_cassette(tmp_path / "absent.json") is None
    assert read_cassette(tmp_path) is None  # a directory: as missing


@pytest.fixture
def deadline() -> Iterator[None]:
    """Fail the test, rather than hang the suite, if a read blocks (SIGALRM interrupts a
    blocked read in the main thread)."""

    def hung(*_: object) -> None:
        raise TimeoutError("the run hung on a cassette path")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.usefixtures("deadline")
@pytest.mark.parametrize("stream", ["off", "on"])
@pytest.mark.parametrize("case", sorted(BAD))
def test_a_replay_from_such_a_path_fails_its_trial_only(
    fake: FakeOpenAI, tmp_path: Path, scenario_file: Path, case: str, stream: str
) -> None:
    make, why = BAD[case]
    path = tmp_path / (STREAMED if stream == "on" else CASSETTE)
    path.parent.mkdir(parents=True)
    make(path)
    rc = run_fake(fake, tmp_path, scenario_file, "--record", "none", "--stream", stream)
    assert rc == 3  # nothing measured: every trial's cassette is missing or unreadable
    weather = trials_by_id(tmp_path / "run")["weather"]
    assert (weather.status, weather.error_code) == ("cassette_unreadable", "cassette.unreadable")
    assert why in (weather.infra_error or "")
    assert trials_by_id(tmp_path / "run")["chat"].status == "cassette_missing"
    assert fake.received == []
