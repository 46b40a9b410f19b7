"""On-disk shapes of a run: ``runs/<id>/results.jsonl`` (one :class:`TrialResult` a line)
and ``runs/<id>/run.json`` (:class:`RunInfo`). Both carry a schema version.

Reports, gates, comparisons and rescoring read only these, so a run can be analysed
anywhere without model access. Reading and writing them is :mod:`toolbench.store`'s job
(versions, migrations, redaction). A new or changed field here needs a bump of
:data:`RESULTS_SCHEMA_VERSION` and one migration per record kind in
:mod:`toolbench.store.schema` (an identity when the new field has a default), so the
previous toolbench refuses the new records with one line instead of misreading them.
A trial's scores are :mod:`toolbench.trial_scores` (importable from here too).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator, TypeAdapter
from typing_extensions import TypedDict

from toolbench.formats.base import ModelReply, ParseIssue, ParseResult
from toolbench.sparse import SparseModel
from toolbench.tool_runs import EnvironmentStep
from toolbench.trial_scores import ScoreValue as ScoreValue
from toolbench.trial_scores import TrialScores as TrialScores
from toolbench.trial_scores import Value as Value
from toolbench.trial_scores import ValueKind as ValueKind
from toolbench.trial_scores import named_value as named_value

RESULTS_SCHEMA_VERSION = 8
"""The version of the stored run this toolbench writes (2: ``run.json`` got
``merged_from``; 3: ``run.json`` holds what resume, replay, rescore and merge need:
cells, scenario files with hashes, model parameters, api base, cassette directory,
shard, display policy; trials may be streamed: ``TrialResult.stream``,
``TurnRecord.stream``, ``TrialSettings.display``; 4: ``run.json`` drops
``scenario_hashes``, ``merge`` compares ``scenario_files``; 5: a streamed trial's
measurements move from ``TrialResult.stream`` into ``scores.values``, the named values of
the registered scorers; 6: the core checks (``parse_ok``, ``call_accuracy``, ...) move
from fixed ``scores`` fields into ``scores.values`` too, given by the built-in scorers;
7: ``run.json`` holds what the reports read of the run's inputs: ``scenario_tags`` and
``model_notes``; a turn may hold ``environment``; 8: ``run.json`` records ``batch``,
so ``--resume`` completes a batch run as one); older records are migrated on read, newer
ones refused."""

StopClass = Literal[
    "clean",
    "text_after_call",
    "hallucinated_result",
    "multiple_actions",
    "length",
    "no_call",
]
TrialStatus = Literal[
    "ok",
    "infra_error",
    "unsupported",
    "cassette_missing",
    "cassette_unreadable",
    "harness_error",
]
"""``infra_error``/``unsupported``/``cassette_*``: the provider or its recording failed;
``harness_error``: toolbench itself failed on the trial (a bug, or input it cannot
evaluate). Neither is a model failure; reports count them apart (``infra_error_rate``,
``harness_error_rate``)."""
AttemptOutcome = Literal["ok", "retry", "fail"]


class TimedText(NamedTuple):
    """A text delta of a streamed reply and the offset (ms from the request) it arrived at.

    A named tuple rather than a model: a streamed turn holds about 200, and validating a
    model of each was a noticeable share of a replayed streamed trial's CPU. The protocol readers
    make these as they assemble (:mod:`toolbench.providers.wire.chat.reader`), and the turn's
    record keeps them as they are. Stored as the object it always was
    (``{"offset_ms": ..., "text": ...}``, :data:`Deltas`); read back from it (an unknown
    key is refused)."""

    offset_ms: float
    text: str


class _StoredDelta(TypedDict):
    """A delta as a results line holds it."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]
    offset_ms: float
    text: str


def _delta_objects(items: list[TimedText]) -> list[dict[str, Any]]:
    """What a results line writes of a turn's deltas: the objects they always were."""
    return [{"offset_ms": offset, "text": text} for offset, text in items]


_STORED_DELTAS: TypeAdapter[list[_StoredDelta]] = TypeAdapter(list[_StoredDelta])


def _read_deltas(value: Any) -> list[TimedText]:
    """Deltas from a results line (objects) or from Python (tuples, objects, or both):
    each checked as the object it is stored as (an unknown or missing key refused)."""
    if isinstance(value, list):
        value = [v._asdict() if isinstance(v, TimedText) else v for v in value]
    return [TimedText(d["offset_ms"], d["text"]) for d in _STORED_DELTAS.validate_python(value)]


Deltas = Annotated[list[TimedText], PlainValidator(_read_deltas), PlainSerializer(_delta_objects)]
"""A streamed turn's deltas: named tuples in memory, objects on disk."""


class StreamTurn(BaseModel):
    """What one streamed exchange did, from the recorded chunk offsets (ms from the
    request being sent; on replay, the offsets recorded in the SSE cassette)."""

    model_config = ConfigDict(extra="forbid")

    deltas: Deltas = Field(default_factory=list)
    """The text deltas in order (what a streaming app is handed)."""
    first_token_ms: float | None = None
    first_call_ms: float | None = None
    """First tool-call delta (native; text formats measure it from the text, see
    :mod:`toolbench.scoring.stream`)."""
    call_complete_ms: float | None = None
    last_ms: float | None = None
    issues: list[ParseIssue] = Field(default_factory=list)
    """Broken delta sequences (``stream.*`` codes)."""


class TurnRecord(BaseModel):
    """One request/reply exchange of a trial."""

    model_config = ConfigDict(extra="forbid")

    request: dict[str, Any]
    """Exactly what was sent: model, messages, stop, tools, tool_choice, sampling params."""
    reply: ModelReply
    parsed: ParseResult
    latency_s: float | None = 0.0
    """The model's time for this exchange; on replay, the time recorded with the cassette
    (None where the cassette has none)."""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None
    retry: bool = False
    """This turn answered a parse-error retry message."""
    stream: StreamTurn | None = Field(default=None, exclude_if=lambda s: s is None)
    """A streamed exchange's deltas and timings (None, and left out, when not streamed).
    Left out by pydantic's own ``exclude_if`` rather than :class:`SparseModel`'s
    serializer, which turned the whole turn into Python data before writing it: a
    streamed turn's 200 deltas twice."""
    environment: EnvironmentStep | None = Field(default=None, exclude_if=lambda e: e is None)
    """The calls this turn ran against the trial's environments and the state after them
    (None, and left out, for a scenario without one)."""


class Attempt(BaseModel):
    """One HTTP attempt at a model call: what came back and what toolbench did next."""

    model_config = ConfigDict(extra="forbid")

    turn: int = 0
    """Index of the exchange in the trial (0 for the first request)."""
    n: int = 1
    """Attempt number within that exchange, from 1."""
    outcome: AttemptOutcome = "ok"
    """``ok``: a complete reply; ``retry``: a fault, asked again; ``fail``: a fault that
    ended the trial (or was handled by changing the request, e.g. dropping ``stop``)."""
    error_code: str | None = None
    http_status: int | None = None
    wait_s: float = 0.0
    """Seconds waited before the next attempt (``Retry-After`` when the server sent one,
    up to a cap; else exponential backoff with jitter)."""
    error: str | None = None
    """The fault in one short line (exception type and message, cut)."""
    provider_s: float | None = None
    """The provider's time for this attempt: request written to last byte (no queueing,
    no harness CPU); on replay, the time recorded with the cassette (None where it holds
    none, and for a replayed fault)."""


class TrialSettings(SparseModel):
    """The settings a trial's conversation actually ran with, stored so that scoring and
    rescoring judge it by the limit it had (not the scenario's default)."""

    model_config = ConfigDict(extra="forbid")
    omit_when_empty = ("display",)

    max_turns: int
    """The conversation's turn limit (``--max-turns``, else the scenario's; 1 for
    single-turn scenarios). A conversation that still calls at it is ``turns.exhausted``."""
    retry_on_parse_error: bool = False
    display: Literal["careful", "naive"] | None = None
    """Streamed trials: the display policy the stream leak is measured under
    (``--display``); None, and left out, for other trials."""


class RequestParams(BaseModel):
    """The sampling parameters toolbench asked for, and which of them the model was sent.

    A parameter the model does not take (by LiteLLM's tables: ``seed`` for Anthropic,
    ``temperature`` for reasoning models, ``stop`` entries beyond the limit) is not sent,
    or is taken out after the model refused it; ``dropped`` says which and why."""

    model_config = ConfigDict(extra="forbid")

    asked: dict[str, Any] = Field(default_factory=dict)
    sent: list[str] = Field(default_factory=list)
    """The names of the asked parameters that were sent (the turns' requests hold the values)."""
    dropped: dict[str, str] = Field(default_factory=dict)
    """Parameter name -> why it was not sent (or was cut)."""


class TrialResult(BaseModel):
    """One (model, format, scenario, sample) trial."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = RESULTS_SCHEMA_VERSION
    run_id: str
    toolbench_version: str
    model: str
    format: str
    """The format spec including options, e.g. ``prompt-json:shots=2``."""
    format_options: dict[str, Any] = Field(default_factory=dict)
    scenario_id: str
    sample: int = 0
    status: TrialStatus = "ok"
    infra_error: str | None = None
    """Why a non-``ok`` trial did not finish (for every non-``ok`` status)."""
    error_code: str | None = None
    """The typed code of a non-``ok`` status (``infra.timeout``, ``harness.scoring``, ...)."""
    error_type: str | None = None
    """The exception's type name for ``harness_error`` trials (what to look for in a bug)."""
    attempts: list[Attempt] = Field(default_factory=list)
    """Every HTTP attempt of the trial, retries included (empty in older results)."""
    notes: list[str] = Field(default_factory=list)
    """What the harness did that the scores do not show (a cassette moved aside, ...)."""
    turns: list[TurnRecord] = Field(default_factory=list)
    scores: TrialScores | None = None
    """None when the trial did not reach the model (infra error, unsupported, no cassette)."""
    latency_s: float | None = 0.0
    """The provider's time for the trial's exchanges that answered, summed over its
    turns (request written to last byte); on replay, the times recorded with the
    cassette (None where it holds none). Before provider timing, the time around each
    LiteLLM call."""
    provider_s: float | None = None
    """The provider's time over every attempt, failed ones and retries included (None
    when some attempt's time is not known; older results have none)."""
    harness_s: float | None = None
    """The trial's own time in toolbench: its wall time from its start (queueing for a
    concurrency slot excluded) minus the live provider time; rendering, LiteLLM's and the
    SDK's CPU, cassettes, parsing and scoring. On replay, the whole trial."""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None
    cassette: str | None = None
    started_at: str = ""
    finished_at: str = ""
    settings: TrialSettings | None = None
    """The effective conversation settings (None in results written before they were
    stored: rescoring then takes ``run.json``'s ``max_turns`` or the scenario's)."""
    params: RequestParams | None = None
    """The sampling parameters asked, sent and dropped (None before the first request,
    and in results written before they were recorded)."""

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.model, self.format, self.scenario_id, self.sample)


class ScenarioFile(BaseModel):
    """One scenario file a run read: where, its content hash, and the scenarios it gave."""

    model_config = ConfigDict(extra="forbid")

    path: str
    """Absolute path of the file when the run started."""
    sha256: str
    """Hex SHA-256 of the file's bytes: resume and rescore refuse a file that changed;
    ``merge`` refuses runs whose files differ (compared by path relative to the run's
    scenario directory, so runs from different checkouts compare alike)."""
    ids: list[str] = Field(default_factory=list)
    """The ids of the run's scenarios that came from this file."""


class Shard(BaseModel):
    """Shard ``index`` of ``count`` (1-based), stored in ``run.json`` as ``shard``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int
    count: int
    trials: int | None = None
    """How many trials of the matrix fall in this shard (set when the run is planned):
    ``merge`` refuses a shard run holding fewer (a killed or ``--budget``-stopped shard)."""

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


class RunInfo(SparseModel):
    """``runs/<id>/run.json``: the matrix and the environment of a run."""

    model_config = ConfigDict(extra="forbid")
    omit_when_empty = ("auto_formats", "shard", "scenario_tags", "model_notes", "batch")

    schema_version: int = RESULTS_SCHEMA_VERSION
    run_id: str
    toolbench_version: str
    created_at: str
    models: list[str]
    formats: list[str]
    scenarios: list[str]
    samples: int = 1
    max_turns: int | None = None
    record: str = "new"
    retry_on_parse_error: bool = False
    params: dict[str, Any] = Field(default_factory=dict)
    environment: dict[str, str] = Field(default_factory=dict)
    markers: list[str] | None = None
    """The leakage marker set the run is scored with (regex texts, fixed when the run
    started; see :mod:`toolbench.scoring.leakage`). None in runs written before it was
    recorded: they are rescored with the built-in formats' markers."""
    merged_from: list[str] = Field(default_factory=list)
    """The run ids a merged run was made of (``toolbench merge``), in the order given."""
    display: Literal["careful", "naive"] = "careful"
    """The display policy streamed trials measure their leak under (``--display``)."""
    auto_formats: dict[str, str] = Field(default_factory=dict)
    """Per model, the concrete format spec ``--formats auto`` resolved to (the trials carry
    that spec); empty when ``auto`` was not asked for, and then left out of the file."""
    cells: dict[str, list[str]] = Field(default_factory=dict)
    """Per model, the format specs it runs (``auto`` and ``--formats-from`` resolved): the
    matrix ``--resume`` completes. Empty in runs written before it was recorded (then
    every model runs every one of ``formats``)."""
    format_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per format spec, its parsed options (``prompt-json:shots=2`` -> ``{"shots": 2}``)."""
    scenario_files: list[ScenarioFile] = Field(default_factory=list)
    """The files the scenarios were read from, with content hashes (empty in older runs:
    ``rescore`` then needs ``--scenarios``, as before)."""
    model_params: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per model, the request parameters given by ``--model-param`` and
    ``toolbench.toml`` (command line over file), redacted."""
    api_base: str | None = None
    """``--api-base`` as given (credentials in it redacted): where ``--resume`` records."""
    cassette_api_base: str | None = None
    """The placeholder the api base is recorded as in cassettes (port-free), None without
    ``--api-base``."""
    cassette_dir: str | None = None
    """``--cassettes``: where the run's cassettes are (None in older runs: ``cassettes``)."""
    shard: Shard | None = None
    """The part of the matrix this run holds (``run --shard K/N``); None for a whole run
    (and for a merge of every shard), and then left out of the file."""
    scenario_tags: dict[str, list[str]] = Field(default_factory=dict)
    """Per scenario id, its tags as the run read them (untagged scenarios left out), so a
    workload (``recommend --scenarios TAG``) selects trials from the run itself, not from
    scenario files that may have changed since. Empty in runs before schema 7."""
    model_notes: list[str] = Field(default_factory=list)
    """What the reports' header says about the run's models (the embedded models'
    descriptions); empty for other models and in runs before schema 7."""
    batch: bool | None = None
    """``--batch``: the run's single-turn trials go through provider batches, and
    ``--resume`` completes it so (what a batch failed is submitted again). None in runs
    before schema 8, which did not record it: read as a live run, ``--resume --batch``
    then takes the command line's word."""
