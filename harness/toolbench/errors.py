"""Typed errors raised by the library.

The CLI converts every :class:`UserError` into one line on stderr and exit code 2;
anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class ToolbenchError(Exception):
    """Base class for every error toolbench raises on purpose."""


class UserError(ToolbenchError):
    """Bad input from the user (a file, an option, a missing key): exit code 2."""


class ScenarioError(UserError):
    """A scenario file is unreadable or invalid; the message names file and field path."""


class UnknownNameError(UserError):
    """A name (format, scenario, metric, model) is not known; lists the valid choices."""

    def __init__(
        self, kind: str, name: str, choices: Iterable[str], listing: str | None = None
    ) -> None:
        self.kind = kind
        self.name = name
        self.choices = sorted(set(choices))
        super().__init__(did_you_mean(kind, name, self.choices, listing))


class MissingApiKeyError(UserError):
    """A provider needs an API key that is not in the environment."""


class CassetteMissingError(ToolbenchError):
    """Replay found no cassette (or no matching response) for a trial.

    Recorded on the trial as a status, never raised to the user.
    """


class InfraError(ToolbenchError):
    """A transport-level failure that survived retries: kept apart from model failures.

    ``code`` is its typed code (``infra.timeout``, ``infra.bad_reply``, ...; see
    :mod:`toolbench.codes`), recorded on the trial.
    """

    def __init__(self, message: str, code: str = "infra.error") -> None:
        super().__init__(message)
        self.code = code


class CassetteUnreadableError(ToolbenchError):
    """A cassette file exists but cannot be read (truncated, malformed, binary).

    Recorded on the trial (``cassette.unreadable``); under ``--record new`` the file is
    moved aside and the trial recorded again.
    """

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cassette {path} is unreadable: {reason}")
        self.path = path
        self.reason = reason


class CassetteLayoutError(CassetteUnreadableError):
    """A cassette of the layout before one recording format (vcrpy YAML, an SSE cassette),
    or a stream whose events carry no offsets: ``toolbench cassettes migrate`` converts it.

    Recorded on the trial (``cassette.old_layout``); never moved aside or re-recorded.
    """


class CassetteWriteError(ToolbenchError):
    """A cassette could not be written (a toolbench or disk fault, not the model's)."""


class StorageError(ToolbenchError):
    """What a run writes can no longer be kept (a full disk, a folder turned read-only, a
    results file deleted under it): the run stops, keeping every trial written so far,
    and the CLI prints one line and exits with :data:`EXIT_STORAGE`. Not a user's bad
    input (exit 2): the run is partly done and ``--resume`` completes it."""


EXIT_STORAGE = 4
"""``toolbench run``'s exit code when it stopped because its results or cassettes could
not be written."""


class RunLockedError(UserError):
    """Another toolbench process is writing this run directory."""


class UnsupportedError(ToolbenchError):
    """The provider cannot do what the format asks (e.g. native tool calls).

    ``code`` is its typed code (``provider.unsupported``, or ``provider.context_window``
    when the request is longer than the model takes), recorded on the trial.
    """

    def __init__(self, message: str, code: str = "provider.unsupported") -> None:
        super().__init__(message)
        self.code = code


def did_you_mean(kind: str, name: str, choices: Iterable[str], listing: str | None = None) -> str:
    """Format an "unknown X" message with the closest match and the full list of choices.

    ``listing`` replaces that list where it would be too long to read (the suggestion is
    still drawn from every choice), e.g. the tags of a suite without its 138 ids.
    """
    options = sorted(set(choices))
    close = difflib.get_close_matches(name, options, n=1)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    if listing is None:
        listing = "Available: " + (", ".join(options) if options else "(none)")
    return f"unknown {kind} '{name}'.{hint} {listing}"
