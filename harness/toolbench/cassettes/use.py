"""A trial's cassette opened for ``--record none | new | all``, and the command that
records a missing one."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from toolbench.cassettes.cassette import TrialCassette
from toolbench.cassettes.faults import recordable
from toolbench.cassettes.match import match_on
from toolbench.cassettes.persist import SafePersister, move_aside, read_cassette
from toolbench.cassettes.recording import legacy_error
from toolbench.cassettes.replay_only import ReplayOnlyCassette
from toolbench.cassettes.route import reset_trial_cassette, set_trial_cassette
from toolbench.cassettes.scrub import scrub_request, scrub_response
from toolbench.cassettes.serializer import RecordingSerializer
from toolbench.errors import CassetteLayoutError, CassetteMissingError, CassetteUnreadableError
from toolbench.redaction import redact, redact_uri, secret_values

if TYPE_CHECKING:
    from vcr.request import Request as VcrRequest

RecordOption = Literal["none", "new", "all"]


DEFAULT_CASSETTES = Path("cassettes")


def record_command(
    model: str,
    fmt: str,
    scenario: str,
    api_base: str | None = None,
    cassette_dir: Path | None = None,
    params: Mapping[str, Any] | None = None,
    sample: int = 0,
    run_options: Sequence[str] = (),
) -> str:
    """The command that records a missing cassette (shell-quoted: ``native|xml``), with
    the run's ``--api-base`` and ``--cassettes`` when it had them (else it would record
    elsewhere), and what makes the trial's request: the model's own parameters (a
    variant's ``reasoning_effort``, ...) as ``--model-param``s, the sample (its seed:
    ``--samples`` up to it, the ones recorded before it replayed) and the run's options
    that shape a conversation (``run_options``: ``--max-turns``, ...). Without them the
    command would send another request and record something else. The format's options
    are in its spec."""
    m, f, s = (shlex.quote(x) for x in (model, fmt, scenario))
    command = f"toolbench run --models {m} --formats {f} --scenarios {s}"
    if sample > 0:
        command += f" --samples {sample + 1}"
    command += "".join(f" {shlex.quote(o)}" for o in run_options)
    for key, value in sorted((params or {}).items()):
        if key != "api_base":  # given as --api-base below
            text = redact(f"{model}:{key}={_param_text(value)}")
            command += f" --model-param {shlex.quote(text)}"
    if api_base:
        command += f" --api-base {shlex.quote(redact_uri(api_base))}"
    if cassette_dir is not None and cassette_dir != DEFAULT_CASSETTES:
        command += f" --cassettes {shlex.quote(str(cassette_dir))}"
    return command + " --record new"


def _param_text(value: Any) -> str:
    """A parameter's value as ``--model-param`` reads it back (JSON where it parses, else
    the text): a text that would parse as JSON (``"1"``, ``"true"``) is written as JSON."""
    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@contextmanager
def use_cassette(path: Path, record: RecordOption) -> Iterator[TrialCassette]:
    """Route this task's HTTP through the cassette at ``path``.

    ``none``: replay only (a missing file raises :class:`CassetteMissingError`, an
    unreadable one :class:`CassetteUnreadableError`); ``new``: replay what is recorded,
    record what is missing (an unreadable file is moved aside and recorded again);
    ``all``: re-record (the old file is replaced only when the new one is saved).
    Only complete replies are recorded (:func:`recordable`); saves are atomic.
    """
    if record != "all" and not path.is_file():  # one ask of the file system, not three
        old_layout = legacy_error(path)
        if old_layout is not None:
            raise old_layout  # not re-recorded over: the old file is converted, not lost
        if record == "none":
            read_cassette(path)  # a FIFO or a device there: unreadable, not missing
            raise CassetteMissingError(f"no cassette {path}")
    values = secret_values()  # once per trial, not once per request hook
    tc = TrialCassette(path=path, cassette=None, values=values)
    if record == "none":  # read without vcrpy; opened as vcrpy's if a request reaches HTTP
        tc.cassette = ReplayOnlyCassette.open(path, lambda: _vcr_cassette(path, record, tc, values))
    else:
        tc.cassette = _vcr_cassette(path, record, tc, values)
    token = set_trial_cassette(tc)
    try:
        yield tc
    except BaseException:
        # The trial failed: an exchange its last attempt recorded and did not claim
        # answered nothing (a trial that ends well ended on the exchange that answered).
        tc.drop_unconfirmed()
        raise
    finally:
        reset_trial_cassette(token)
        # Nothing to keep (every exchange was a fault it forgot): write no empty cassette.
        if record != "none" and tc.cassette.dirty and tc.cassette.data:
            tc.cassette._save()


def _vcr_cassette(path: Path, record: RecordOption, tc: TrialCassette, values: list[str]) -> Any:
    """vcrpy's cassette of ``path`` for ``record`` (vcrpy imported here, only when needed).

    ``new``: an unreadable file is moved aside (noted on ``tc``) and recorded again."""
    from vcr.record_mode import RecordMode

    from toolbench.cassettes.vcr_replay import RecordingCassette, VcrReplayCassette

    mode = {"none": RecordMode.NONE, "new": RecordMode.NEW_EPISODES, "all": RecordMode.ALL}[record]

    def before_record_response(r: dict[str, Any]) -> dict[str, Any] | None:
        return scrub_response(r, values) if recordable(r, tc.current_path) else None

    scrubbed: list[tuple[VcrRequest, VcrRequest]] = []

    def before_record_request(r: VcrRequest) -> VcrRequest:
        # vcrpy scrubs the request of an exchange to ask whether it can play it, then
        # again to record it (a copy and a redaction scan of the body each time), and
        # once more the scrubbed copy it recorded. Nothing changes the request in between
        # and scrubbing is idempotent: the copy made the first time serves all three.
        for seen, out in scrubbed:
            if seen is r or out is r:
                return out
        out = scrub_request(r, values)
        scrubbed[:] = [*scrubbed[-1:], (r, out)]  # the request and vcrpy's copy of it
        return out

    options: dict[str, Any] = dict(
        path=str(path),
        record_mode=mode,
        match_on=match_on(),
        before_record_request=before_record_request,
        before_record_response=before_record_response,
        serializer=RecordingSerializer,
        persister=SafePersister,
        allow_playback_repeats=True,
    )
    if record == "all":
        return RecordingCassette(**options)
    if record == "none":
        return VcrReplayCassette.load(**options)
    try:
        return RecordingCassette.load(**options)
    except CassetteUnreadableError as exc:
        if isinstance(exc, CassetteLayoutError):
            raise
        aside = move_aside(path)
        tc.notes.append(f"{exc}; moved to {aside.name} and recorded again")
        return RecordingCassette.load(**options)
