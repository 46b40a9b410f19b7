"""A trial's cassette opened for ``--record none | new | all``, and the command that
records a missing one."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import toolbench.cassettes.recording as rec
from toolbench.cassettes.boundary import ReplayMode
from toolbench.cassettes.faults import answered
from toolbench.cassettes.persist import CASSETTE_MODE, move_aside, read_cassette, write_atomically
from toolbench.cassettes.route import reset_route, set_route
from toolbench.cassettes.trial import RecordOption as RecordOption
from toolbench.cassettes.trial import TrialCassette
from toolbench.errors import CassetteLayoutError, CassetteMissingError, CassetteUnreadableError
from toolbench.redaction import redact, redact_uri, secret_values

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
def use_cassette(
    path: Path,
    record: RecordOption,
    streamed: bool = False,
    replay: ReplayMode = "boundary",
    live: bool | None = None,
) -> Iterator[TrialCassette]:
    """Route this task's HTTP through the trial's cassette at ``path``.

    ``none``: replay only (a missing file raises :class:`CassetteMissingError`, an
    unreadable one :class:`CassetteUnreadableError`); ``new``: replay what is recorded,
    record what is missing (an unreadable file is moved aside and recorded again);
    ``all``: record again (the old file is replaced only when the new one is saved).
    ``streamed``: the trial's live exchanges are streams, recorded chunk by chunk. Only
    complete replies are recorded (:mod:`.trial`); saves are atomic. ``replay``: the
    run's ``--replay`` mode, carried by the cassette to the provider boundary. ``live``
    False (``new`` only): replay until the trial turns the cassette live
    (:meth:`~.exchanges.TrialExchanges.go_live`); a request it cannot answer before
    then is a gap, as under ``none``.
    """
    live = record != "none" if live is None else live
    data, reload = rec.Recording(), None
    notes: list[str] = []
    if record != "all":
        try:
            raw = read_cassette(path)  # one open, no stat before it; a regular file only
            found = None if raw is None else rec.parsed(raw, path)
        except CassetteUnreadableError as exc:
            if record != "new" or isinstance(exc, CassetteLayoutError):
                raise
            aside = move_aside(path)
            notes.append(f"{exc}; moved to {aside.name} and recorded again")
        else:
            if found is None:
                old_layout = rec.legacy_error(path)
                if old_layout is not None:
                    raise old_layout  # not recorded over: the old file is converted, not lost
                if record == "none":
                    raise CassetteMissingError(f"no cassette {path}")
            else:
                data = answered(found)  # a recorded provider error is never played
                if not live and raw is not None:
                    reload = partial(_reread, raw, path)
    tc = TrialCassette(path, record, data, secret_values(), streamed, reload, replay, live)
    tc.notes.extend(notes)
    token = set_route(tc)
    try:
        yield tc
    except BaseException:
        # The trial failed: an exchange its last attempt recorded and did not claim
        # answered nothing (a trial that ends well ended on the exchange that answered).
        tc.drop_unconfirmed()
        raise
    finally:
        reset_route(token)
        # Nothing to keep (every exchange was a fault it forgot): write no empty cassette.
        if record != "none" and tc.dirty and tc.data.exchanges:
            write_atomically(path, rec.dump(tc.data), CASSETTE_MODE)


def _reread(raw: bytes, path: Path) -> rec.Recording:
    """The recording of a replay-only trial read again from its file's bytes."""
    return answered(rec.parsed(raw, path))
