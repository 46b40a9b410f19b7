"""What every provider kind offers: the :class:`ModelAPI` protocol (transport only) and
the types of the shared call.

In the spirit of inspect_ai's ``ModelAPI`` (``generate`` / ``should_retry``): a kind
sends one request, plain or streamed, and returns what came back
(:meth:`ModelAPI.send`), says what a fault means (:meth:`ModelAPI.classify`: ask
again, leave a parameter out, fail the trial as an infrastructure or a model-side
fault) and what a model takes (:meth:`ModelAPI.capabilities`). Everything around the
send is the shared call's (:func:`toolbench.providers.call.call`), the same for every
kind and for plain and streamed requests: attempts, retries, the total deadline,
parameter dropping, the record/replay hook, the provider's time. Kinds register through
the entry-point group ``toolbench.providers`` (:mod:`.registry`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from toolbench.cassettes.boundary import ReplayMode
from toolbench.cassettes.boundary import WireRequest as WireRequest
from toolbench.cassettes.recording import ReadReply
from toolbench.formats.base import Format, ModelReply, RenderedRequest
from toolbench.results import Attempt, RequestParams, StreamTurn

DEFAULT_TIMEOUT_S = 120.0
"""Per-request timeout for remote models (``--timeout``)."""


@dataclass
class Endpoint:
    """Where and how to call one model."""

    model: str
    """The LiteLLM model string actually used (``openai/smollm2-135m`` for local models)."""
    api_base: str | None = None
    api_key: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    timeout_s: float = DEFAULT_TIMEOUT_S
    on_timeout: Callable[[], None] | None = None
    """Called when a request times out; then the trial fails at once, unretried. The
    embedded server uses it: a generation that hangs would block every later request
    queued behind it, so that server is replaced instead of asked again."""
    model_params: dict[str, Any] = field(default_factory=dict)
    """The user's parameters for this model (``--model-param``, ``toolbench.toml``): asked
    with the harness's own (and over them), filtered by the model's capabilities."""
    null_content_as_empty: bool = False
    """The server's adaptation (llama.cpp's ``llama-server``, whose chat templates fail on
    a null content): echoed assistant messages with ``content: null`` are sent with
    ``""``. Every other server gets what the model said; the trial records the change."""


@dataclass
class Completion:
    reply: ModelReply
    request: dict[str, Any]
    latency_s: float
    """The provider's time for the exchange that answered (request written to last
    byte); on replay, the time recorded with the cassette (0.0 where it holds none)."""
    prompt_tokens: int | None
    completion_tokens: int | None
    cost: float | None
    attempts: int
    params: RequestParams = field(default_factory=RequestParams)
    """The sampling parameters asked, sent and dropped for this request."""
    replayed: bool = False
    """The reply came from a cassette, not from the provider."""
    adaptations: list[str] = field(default_factory=list)
    """What a server's adaptation changed in the request sent (a note on the trial)."""
    stream: StreamTurn | None = None
    """A streamed request's record: its deltas with their offsets, timings and issues."""


class StreamFaultLike(Protocol):
    """A fault the framing guard saw in the bytes (``infra.stream_*``)."""

    code: str


class StreamClock(Protocol):
    """What the cassette layer saw of a streamed body as it passed (or was replayed)."""

    path: str
    last_ms: float | None
    """The offset of the last raw chunk read: what the next chunk is stamped with."""
    fault: Any
    """A :class:`StreamFaultLike` when the framing failed (cut off, bad or oversized
    event), else None."""
    framing: str | None
    events: int
    carried: set[str]
    chat_chunks: bool
    """The events were OpenAI ``chat.completion.chunk`` events."""
    raw_events: list[tuple[Any, float | None]]
    """Those events as decoded from the bytes, with their offsets."""
    stored: list[tuple[float, Any]] | None
    """On a replay at the boundary: the cassette's decoded events (``[offset_ms, data]``,
    a content-only chat chunk as ``[offset_ms, text]``), read instead of ``raw_events``."""


class CassetteView(Protocol):
    """The trial's cassette as a call sees it, plain or streamed alike (its one
    implementation: :class:`toolbench.cassettes.trial.TrialCassette`): what it saw of the
    last HTTP exchange, how it answers a request at the boundary, and what it keeps."""

    replay_mode: ReplayMode
    """The run's ``--replay``: ``full`` answers nothing at the boundary (every recorded
    reply is re-derived through the kind and the HTTP cassette)."""
    unmatched: list[str]
    last_fault: str | None
    last_replayed: bool
    last_provider_s: float | None
    """The provider's time of the last live plain exchange: request written to last byte."""
    clock: Any
    """The :class:`StreamClock` of the stream in flight (or replayed)."""

    def forget_last(self) -> None: ...

    def may_replay(self) -> bool:
        """Whether a recorded exchange may answer the next request (False under
        ``--record all`` or with nothing recorded: the replay hook is not asked, and the
        request's key and predicted HTTP request are not made). What
        :meth:`replay_reply` resets before it finds nothing, this resets too."""
        ...

    def replay_reply(self, key: str, wire: Any) -> dict[str, Any] | None:
        """The recorded response body (decoded JSON) for this request, when the
        cassette holds one: matched by toolbench's own request ``key`` recorded with the
        exchange, or, for cassettes recorded before keys, by ``wire`` (a
        :class:`WireRequest`, the HTTP request the provider's SDK would send)."""
        ...

    def replay_stream(self, method: str, path: str, body: Any) -> bool:
        """Whether the recorded stream of this HTTP request was played through the event
        guard (its :attr:`clock` set), with no HTTP."""
        ...

    def remember_key(self, key: str) -> None:
        """Record ``key`` with the exchange that just went live and was recorded."""
        ...

    def commit(self) -> None:
        """The stream in flight was read whole and is a reply: record it (what failed is
        never kept)."""
        ...

    def keep_read(self, read: dict[str, Any], capabilities: dict[str, Any]) -> None:
        """Keep the reply as read with the exchange just recorded, and the capabilities."""
        ...

    def kept_capabilities(self) -> dict[str, Any] | None: ...

    def replay_read(
        self, asked_key: str, streamed: bool
    ) -> tuple[ReadReply, str | None, int] | None:
        """The reply kept as read for a request, the key sent, the exchange's index."""
        ...

    def play(self, index: int) -> None:
        """Count the exchange ``index`` as replayed (answered from what it kept)."""
        ...


@dataclass
class CompletionRequest:
    """One request of a trial: what to send, where, and the trial's records."""

    endpoint: Endpoint
    rendered: RenderedRequest
    seed: int
    exchange: CassetteView | None = None
    attempts: list[Attempt] | None = None
    """The trial's attempt log: every attempt is appended (retries included)."""
    turn: int = 0


# ---------------------------------------------------------------- decisions


@dataclass(frozen=True)
class Retry:
    """A transient fault: ask again after ``after_s`` (the server's ``Retry-After``), or
    after the backoff when None."""

    code: str
    after_s: float | None = None


@dataclass(frozen=True)
class Unsupported:
    """The model cannot take the request: ``param`` names the parameter (``tools``,
    ``stop``, ...) when known."""

    code: str
    param: str | None = None


@dataclass(frozen=True)
class Infra:
    """The provider or its setup failed (key, model name, quota, a bad reply)."""

    code: str


@dataclass(frozen=True)
class ModelError:
    """The model's own limit (its context window)."""

    code: str


Decision = Retry | Unsupported | Infra | ModelError
"""What a provider fault means for the trial (:meth:`ModelAPI.classify`)."""


@dataclass(frozen=True)
class Capabilities:
    """What a model takes, as far as its provider's tables tell (None: not known)."""

    params: frozenset[str] | None = None
    """The OpenAI-style parameters the model takes (``temperature``, ``seed``, ``stop``, ...)."""
    function_calling: bool | None = None
    """The model takes ``tools`` (native function calling)."""
    echo_extras: bool = False
    """The provider reads ``provider_specific_fields`` echoed back on assistant messages
    (Gemini's thought signatures); every other provider gets them taken out."""
    own_server: bool = False
    """A server toolbench runs itself (the embedded models' ``llama-server``): ``params`` is
    exactly what it takes (no provider table is asked), it speaks plain OpenAI chat, and it
    has no price. Its cassettes then replay without LiteLLM."""


FaultKind = Literal["retry", "unsupported", "infra", "model"]
"""What a fault means for the trial: ``retry`` (transient: ask again), ``unsupported``
(the model cannot take the request: a parameter or the tools), ``infra`` (the provider
or its setup failed: key, model name, quota) or ``model`` (the model's own limit, e.g.
its context window)."""


class Fault(Exception):
    """One failed attempt, classified: its typed code and whether to ask again."""

    def __init__(
        self,
        code: str,
        message: str,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
        kind: FaultKind | None = None,
        param: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.kind: FaultKind = kind or ("retry" if retryable else "infra")
        self.param = param

    def decision(self) -> Decision:
        """This fault as a typed :data:`Decision`."""
        if self.kind == "retry" or self.retryable:
            return Retry(self.code, self.retry_after)
        if self.kind == "unsupported":
            return Unsupported(self.code, self.param)
        if self.kind == "model":
            return ModelError(self.code)
        return Infra(self.code)


@dataclass(frozen=True)
class ProviderSettings:
    """The run's options a provider kind needs to make its endpoints."""

    api_base: str | None = None
    """``--api-base``: the server of every model without its own."""
    api_bases: dict[str, str] = field(default_factory=dict)
    """A model's own server (``--model-param MODEL:api_base=URL``, ``toolbench.toml``)."""
    timeout_s: float | None = None
    """``--timeout``; None: each kind's own default."""
    max_tokens: int | None = None
    """``--max-tokens`` (the embedded models' reply limit)."""
    log_dir: str = "logs"
    """Where server logs go (the embedded models)."""

    def api_base_for(self, model: str) -> str | None:
        """Where ``model``'s requests go: its own api base, else the run's."""
        return self.api_bases.get(model, self.api_base)


class ModelAPI(Protocol):
    """One provider kind: transport only. Implementations register by entry point
    (``toolbench.providers``): :mod:`.litellm_api`, :mod:`.local_api`."""

    name: str
    prefixes: tuple[str, ...]
    """Model-string prefixes this kind claims (``local/``); () for the default kind."""
    width: int | None
    """Requests at once across every model of this kind (the embedded models share the
    machine's cores: 1); None: ``--concurrency`` per model."""

    def preflight(self, model: str, record: str) -> None:
        """Refuse a model this kind cannot call (a :class:`~toolbench.errors.UserError`,
        exit 2), before the first call of a run."""
        ...

    def ready(self, models: list[str]) -> None:
        """Before the first trial of a run that calls ``models`` live: refuse what cannot
        serve them (a missing server binary or model file: a ``UserError``, exit 2)."""
        ...

    def run_params(self) -> dict[str, Any]:
        """This kind's settings a run's trials depend on (recorded in ``run.json``)."""
        ...

    async def endpoint(self, model: str, fmt: Format, live: bool) -> Endpoint:
        """Where to send ``model``'s requests (``live`` False: a replay, no server)."""
        ...

    async def send(self, endpoint: Endpoint, request: dict[str, Any]) -> Any:
        """Send ``request`` once (no retry). Plain: an OpenAI chat completion (an object
        or a dict with ``choices[0].message`` and ``usage``). With ``stream: True`` in the
        request: an async iterator of ``chat.completion.chunk`` chunks. Raises what the
        transport raised; :meth:`classify` tells what it means."""
        ...

    def cost(self, response: Any) -> float | None:
        """The price of a plain ``response`` (or an assembled one, as a dict); None when
        not known."""
        ...

    def capabilities(self, model: str) -> Capabilities:
        """What ``model`` (the endpoint's model string) takes: which parameters, whether
        ``provider_specific_fields`` go back (decides what is sent)."""
        ...

    def classify(self, error: BaseException, request: dict[str, Any] | None = None) -> Fault:
        """What a fault raised by :meth:`send` means (its :meth:`Fault.decision`)."""
        ...

    def close(self) -> None:
        """Stop what this kind started (servers); called once when the run ends."""
        ...
