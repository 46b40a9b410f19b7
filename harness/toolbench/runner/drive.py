"""One trial of a (model, format, scenario, sample): the engine driven by a provider.

The conversation itself (render, parse, scripted results, the turn limit, the retry
after a parse error) is :mod:`toolbench.engine`; this module gives it a ``complete`` that
goes through the trial's cassette and the shared call (:func:`toolbench.providers.call.call`)
to the provider kind (a streamed format's, ``xml:stream``, sent streamed), stores the
effective settings on the trial, and scores it with them and the run's marker set
(:func:`score_trial`; a streamed trial's measurements are a registered scorer's,
:mod:`toolbench.scoring.stream`).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from toolbench import __version__, codes
from toolbench.cassettes import (
    RecordOption,
    TrialCassette,
    record_command,
    use_cassette,
)
from toolbench.cassettes.boundary import ReplayMode
from toolbench.engine import TurnReply, converse, effective_settings
from toolbench.environments import EnvironmentFault
from toolbench.environments.ground_truth import run_trial_truth
from toolbench.errors import (
    CassetteLayoutError,
    CassetteMissingError,
    CassetteUnreadableError,
    CassetteWriteError,
    InfraError,
    UnsupportedError,
)
from toolbench.formats.base import Format, RenderedRequest
from toolbench.formats.stream_spec import is_streamed
from toolbench.providers.call import call
from toolbench.providers.model_api import Completion, CompletionRequest, Endpoint, ModelAPI
from toolbench.results import RequestParams, TrialResult, TrialScores, TrialSettings, TurnRecord
from toolbench.runner.variants import split_variant
from toolbench.scenarios.model import Scenario
from toolbench.scoring import score_trial

BASE_SEED = 1234


def slug(text: str) -> str:
    """A path-safe name: ``local/smollm2-135m`` -> ``local_smollm2-135m``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "_"


NAME_CAP = 100
"""Longest file or directory name a cassette path uses (filesystems allow 255 bytes)."""


def safe_name(text: str, exact: bool = False) -> str:
    """A short path-safe name for ``text``, distinct for distinct texts.

    Kept as it is when already safe and short (so recorded cassettes keep their paths);
    otherwise slugged, cut, and followed by a hash of the original. With ``exact`` the
    slug is kept without a hash when it is short (model and format directories, whose
    slugs predate this rule).
    """
    name = slug(text).lstrip(".") or "_"  # never "..", never a hidden file
    if len(name) <= NAME_CAP and (exact or name == text):
        return name
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
    return f"{name[: NAME_CAP - 11]}-{digest}"


def cassette_path(root: Path, model: str, fmt: str, scenario_id: str, sample: int) -> Path:
    """Where a trial's cassette lives: safe, bounded names whatever the ids are; one
    JSON recording, plain or streamed (:mod:`toolbench.cassettes.recording`). A variant
    keeps its ``@`` (``openai_gpt-5-mini@low``): its name is already path-safe, and a
    model called ``gpt-5-mini_low`` must not share its cassettes."""
    bare, variant = split_variant(model)
    folder = safe_name(bare, exact=True) + (f"@{variant}" if variant else "")
    suffix = f"__s{sample}" if sample else ""
    return (
        root / folder / safe_name(fmt, exact=True)
        / f"{safe_name(scenario_id)}{suffix}.json"
    )  # fmt: skip


@dataclass
class TrialSpec:
    run_id: str
    model: str
    fmt: Format
    scenario: Scenario
    sample: int
    max_turns: int | None
    retry_on_parse_error: bool
    record: RecordOption
    cassette: Path
    markers: tuple[re.Pattern[str], ...] | None = None
    """The run's leakage marker set (``run.json``); None: the formats installed now."""
    api_base: str | None = None
    """The run's ``--api-base`` (for the re-record command of a missing cassette)."""
    cassette_dir: Path | None = None
    """The run's ``--cassettes`` (likewise)."""
    display: Literal["careful", "naive"] = "careful"
    """Streamed trials: the display policy their stream leak is measured under."""
    model_params: dict[str, Any] = field(default_factory=dict)
    """The model's (a variant's) own parameters (likewise: the command must send the
    same request)."""
    replay: ReplayMode = "boundary"
    """The run's ``--replay``: carried by the trial's cassette to the provider boundary."""


EndpointFor = Callable[[str, Format], Awaitable[tuple[ModelAPI, Endpoint]]]
"""The provider kind serving a (model, format) and the endpoint it calls. As ``go_live``
(:func:`run_trial`): the live one, asked once, when a replayed trial's cassette cannot
answer a request and the run may record it."""

OnLoop = Callable[[Sequence[TurnRecord]], bool]
"""Asked with a trial's turns when it is to be scored: True scores it on the event loop
(see :func:`_score`)."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def merge_params(base: TrialResult, turn: RequestParams) -> None:
    """The trial's record of parameters: the first turn's, plus what a later turn dropped
    (a ``stop`` the model refused)."""
    if base.params is None:
        base.params = turn.model_copy(deep=True)
        return
    base.params.dropped.update(turn.dropped)
    base.params.sent = [p for p in base.params.sent if p not in turn.dropped]


def note_adaptations(base: TrialResult, done: Completion) -> None:
    """Record on the trial what a server's adaptation changed in a request (once)."""
    base.notes.extend(a for a in done.adaptations if a not in base.notes)


def settings_of(spec: TrialSpec) -> TrialSettings:
    """The settings this trial's conversation runs with (and is scored by)."""
    settings = effective_settings(spec.scenario, spec.max_turns, spec.retry_on_parse_error)
    if is_streamed(spec.fmt):
        settings.display = spec.display
    return settings


def _status(base: TrialResult, status: str, code: str, message: str) -> TrialResult:
    base.status = status  # type: ignore[assignment]
    base.error_code, base.infra_error, base.finished_at = code, message, _now()
    return base


async def run_trial(
    spec: TrialSpec, endpoint_for: EndpointFor, inline: OnLoop | None = None,
    go_live: EndpointFor | None = None,
) -> TrialResult:  # fmt: skip
    """Run and score one trial (:func:`_run_trial`), timing the provider apart from the
    harness: ``provider_s`` sums the attempts' provider times, ``harness_s`` is the rest
    of the trial's wall time (the caller holds its concurrency slot already, so no
    queueing is in it).

    ``inline``: asked, with the trial's turns, when it is to be scored; True scores it on
    the event loop instead of in a worker thread (see :func:`_score`). ``go_live``
    (``--record new`` over a cassette): the trial is replayed through ``endpoint_for``'s
    endpoint until its cassette cannot answer a request; that request, and every one
    after it, goes to ``go_live``'s and what is missing is recorded (one drive)."""
    t0 = time.perf_counter()
    recorded: list[float] = []
    result = await _run_trial(spec, (endpoint_for, go_live), recorded, inline)
    wall = time.perf_counter() - t0
    times = [a.provider_s for a in result.attempts]
    known = [t for t in times if t is not None]
    result.provider_s = round(sum(known), 4) if known and len(known) == len(times) else None
    live = sum(known) - sum(recorded)
    result.harness_s = round(max(0.0, wall - live), 4)
    return result


def _conversation_options(spec: TrialSpec) -> list[str]:
    """The run's options (not their defaults) that change a trial's conversation: the
    command recording its cassette must give them too."""
    out = [] if spec.max_turns is None else ["--max-turns", str(spec.max_turns)]
    return out + (["--retry-on-parse-error"] if spec.retry_on_parse_error else [])


async def _run_trial(
    spec: TrialSpec, reach: tuple[EndpointFor, EndpointFor | None], recorded: list[float],
    inline: OnLoop | None = None,
) -> TrialResult:  # fmt: skip
    """Run and score one trial. Never raises (short of cancellation): whatever goes wrong
    becomes the trial's status and typed code, and the run goes on.

    Provider faults are ``infra_error`` (``infra.*``); a cassette that is missing or
    unreadable has its own status; anything else is toolbench's own fault,
    ``harness_error``, with the exception's type and message recorded.
    """
    base = _blank(spec)
    notes: list[str] = []
    try:
        turns = await _drive(spec, reach, base, notes, recorded)
    except CassetteMissingError:
        what = (
            f"cassette {spec.cassette} has no recorded response for this request"
            if spec.cassette.is_file()
            else f"no cassette {spec.cassette}"
        )
        command = record_command(
            spec.model, spec.fmt.spec, spec.scenario.id, spec.api_base, spec.cassette_dir,
            spec.model_params, spec.sample, _conversation_options(spec),
        )  # fmt: skip
        return _status(base, "cassette_missing", codes.CASSETTE_MISSING,
                       f"{what}; record it with: {command}")  # fmt: skip
    except CassetteLayoutError as exc:
        return _status(base, "cassette_unreadable", codes.CASSETTE_OLD_LAYOUT, str(exc))
    except CassetteUnreadableError as exc:
        return _status(base, "cassette_unreadable", codes.CASSETTE_UNREADABLE,
                       f"{exc}; record it again with --record new")  # fmt: skip
    except UnsupportedError as exc:
        return _status(base, "unsupported", exc.code, str(exc))
    except InfraError as exc:
        return _status(base, "infra_error", exc.code, str(exc))
    except CassetteWriteError as exc:
        return _harness(base, codes.HARNESS_CASSETTE_WRITE, exc)
    except EnvironmentFault as exc:  # the scenario's environment cannot serve the trial
        return _harness(base, exc.code, exc)
    except Exception as exc:  # a toolbench bug must fail this trial only
        return _harness(base, codes.HARNESS_ERROR, exc)
    finally:
        base.notes.extend(notes)
    base.turns = turns
    try:
        base.scores = await _score(spec, turns, base.settings, inline)
    except Exception as exc:  # e.g. a tool schema the validator cannot evaluate
        return _harness(base, codes.HARNESS_SCORING, exc)
    lat = [t.latency_s for t in turns]
    base.latency_s = None if any(x is None for x in lat) else round(sum(x or 0.0 for x in lat), 4)
    base.prompt_tokens = _total([t.prompt_tokens for t in turns])
    base.completion_tokens = _total([t.completion_tokens for t in turns])
    costs = [t.cost for t in turns]
    base.cost = None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)
    base.finished_at = _now()
    return base


def _cassette(spec: TrialSpec, replay_first: bool) -> AbstractContextManager[TrialCassette]:
    """The trial's cassette: one recording, its exchanges plain or streamed (a streamed
    format's live exchanges recorded as streams); ``replay_first``: it answers only what
    it holds until the trial goes live (:class:`_Reach`)."""
    return use_cassette(spec.cassette, spec.record, streamed=is_streamed(spec.fmt),
                        replay=spec.replay, live=False if replay_first else None)  # fmt: skip


_Ask = Callable[[Endpoint], CompletionRequest]
"""A turn's request, made for the endpoint it is sent to."""


@dataclass
class _Reach:
    """How the trial reaches its model: its kind and endpoint, and ``go_live`` (None: the
    endpoint is the trial's throughout), which gives the live ones once the cassette
    cannot answer."""

    api: ModelAPI
    endpoint: Endpoint
    go_live: EndpointFor | None

    async def call(self, tc: TrialCassette, spec: TrialSpec, ask: _Ask) -> Completion:
        """One turn sent by the shared call; a request the cassette cannot answer, under
        a policy that records, is sent again live, outside any attempt's deadline (going
        live may start a server), and the cassette records from then on."""
        try:
            return await call(self.api, ask(self.endpoint), stream=is_streamed(spec.fmt))
        except CassetteMissingError:
            if tc.live or self.go_live is None:
                raise
        self.api, self.endpoint = await self.go_live(spec.model, spec.fmt)
        tc.go_live()
        return await call(self.api, ask(self.endpoint), stream=is_streamed(spec.fmt))


async def _drive(
    spec: TrialSpec, ways: tuple[EndpointFor, EndpointFor | None], base: TrialResult,
    notes: list[str], recorded: list[float],
) -> list[TurnRecord]:  # fmt: skip
    """The trial's conversation through its cassette, each turn sent by the shared call
    (streamed for a streamed format: the turn keeps its stream record)."""
    seed, streamed = BASE_SEED + spec.sample, is_streamed(spec.fmt)
    endpoint_for, go_live = ways
    with _cassette(spec, go_live is not None) as tc:
        notes.extend(tc.notes)
        reach = _Reach(*await endpoint_for(spec.model, spec.fmt), go_live)

        async def send(req: RenderedRequest, turn: int) -> TurnReply:
            before = tc.played()
            done = await reach.call(tc, spec, lambda at: CompletionRequest(
                at, req, seed, tc, base.attempts, turn))  # fmt: skip
            merge_params(base, done.params)
            note_adaptations(base, done)
            replayed = tc.played() > before
            latency = tc.latency(turn, done.latency_s, replayed=replayed)
            if replayed and not streamed and base.attempts and base.attempts[-1].outcome == "ok":
                base.attempts[-1].provider_s = latency  # the provider's time, as recorded
                recorded.append(latency or 0.0)
            return TurnReply(
                reply=done.reply, request=done.request, latency_s=latency,
                prompt_tokens=done.prompt_tokens, completion_tokens=done.completion_tokens,
                cost=done.cost, stream=done.stream,
            )  # fmt: skip

        await run_trial_truth(spec.scenario)  # a loop on an MCP server: recorded here
        try:
            return await converse(spec.fmt, spec.scenario, settings_of(spec), send)
        finally:  # what the cassette noted during the trial (a secret redacted in a stream)
            notes.extend(n for n in tc.notes if n not in notes)


async def _score(
    spec: TrialSpec, turns: list[TurnRecord], settings: TrialSettings | None,
    inline: OnLoop | None,
) -> TrialScores:  # fmt: skip
    """Score a trial: in a worker thread while another trial may be waiting on a server
    (a scenario's slow regex check, bounded by :mod:`toolbench.timedregex`, or a big
    reply's schema validation must not stall its I/O), on the event loop when ``inline``
    says so: when nothing is waiting on a server (a replay), or when this trial's
    scoring is known to be quick (:mod:`toolbench.scoring.quick`). Handing the work to a
    thread and back was a large share of a replayed plain trial's CPU, and cost a live trial
    CPU and context switches of its own."""
    args = (spec.scenario, spec.fmt, turns, settings, spec.markers)
    if inline is not None and inline(turns):
        return score_trial(*args)
    return await asyncio.to_thread(score_trial, *args)


def _blank(spec: TrialSpec) -> TrialResult:
    return TrialResult(
        run_id=spec.run_id, toolbench_version=__version__, model=spec.model,
        format=spec.fmt.spec, format_options=spec.fmt.options.model_dump(),
        scenario_id=spec.scenario.id, sample=spec.sample, started_at=_now(),
        cassette=str(spec.cassette), settings=settings_of(spec),
        notes=spec.fmt.notes(spec.scenario.tools),
    )  # fmt: skip


def harness_result(spec: TrialSpec, exc: BaseException) -> TrialResult:
    """The line written for a trial whose run escaped :func:`run_trial` (a last resort)."""
    return _harness(_blank(spec), codes.HARNESS_ERROR, exc)


def _harness(base: TrialResult, code: str, exc: BaseException) -> TrialResult:
    base.error_type = type(exc).__name__
    message = str(exc).splitlines()[0] if str(exc) else ""
    return _status(base, "harness_error", code, f"{type(exc).__name__}: {message}"[:2000])


def _total(values: list[int | None]) -> int | None:
    return None if any(v is None for v in values) else sum(v or 0 for v in values)
