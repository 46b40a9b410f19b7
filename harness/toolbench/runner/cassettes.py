"""Per-trial cassettes with vcrpy: record, replay, scrub, match.

vcrpy's own ``use_cassette`` patches httpx process-wide, so two concurrent asyncio trials
would write into one cassette. Instead, one router patch stays installed for a run and
sends each request to the cassette of the trial that made it (a context variable, which
asyncio copies into each task). Recording, matching and serialisation are vcrpy's.

Cassettes store request and response bodies as decoded JSON so they read and diff like
data. Requests match on method, host, port, path and the JSON body compared as data. The
embedded local server gets a new port every run, so its address is recorded and matched
as the fixed placeholder ``local-model.toolbench``; the server of ``--api-base`` likewise
as ``api-base.toolbench`` (a run recorded against ``localhost:8000`` replays against
``localhost:8001``, or with no server at all).
"""

from __future__ import annotations

import contextvars
import copy
import json
import os
import shlex
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import httpx
import yaml
from vcr import matchers
from vcr.cassette import Cassette
from vcr.errors import CannotOverwriteExistingCassetteException
from vcr.persisters.filesystem import CassetteNotFoundError
from vcr.record_mode import RecordMode
from vcr.request import Request as VcrRequest
from vcr.serialize import deserialize, serialize
from vcr.stubs import httpx_stubs

from toolbench.errors import CassetteMissingError, CassetteUnreadableError, CassetteWriteError
from toolbench.redaction import (
    is_secret_header,
    redact,
    redact_error,
    redact_uri,
    secret_values,
)

RecordOption = Literal["none", "new", "all"]
LOCAL_HOST = "local-model.toolbench"
LOCAL_BASE = f"http://{LOCAL_HOST}/v1"
"""Where replayed local-model requests go: the recorded placeholder, never a real port."""

API_HOST = "api-base.toolbench"
"""Where ``--api-base`` requests are recorded and matched: the server's host and port are
the machine's, not part of a request's identity."""

_local_netlocs: set[str] = set()
_api_netlocs: set[str] = set()


def register_local_netloc(netloc: str) -> None:
    """Tell the scrubber that ``host:port`` is the embedded server (rewritten on record)."""
    _local_netlocs.add(netloc)


_local_model_paths: dict[str, str] = {}


def register_local_model_path(path: str, alias: str) -> None:
    """Tell the scrubber that the embedded server reports ``path`` as its model.

    llama-server writes the GGUF's absolute path into every reply's ``model`` field: a
    fact of this machine (a venv, a home directory), not of the reply, so it is recorded
    as the model's alias, as the port is recorded as the placeholder host.
    """
    _local_model_paths[path] = alias


def normalise_local_model(text: str) -> str:
    """``text`` (a reply body or stream chunk) with registered GGUF paths as aliases."""
    for path, alias in _local_model_paths.items():
        encoded = json.dumps(path, ensure_ascii=False)[1:-1]  # as JSON writes it
        for form in (encoded, encoded.replace("/", "\\/")):  # slashes escaped or not
            if form in text:
                text = text.replace(form, alias)
    return text


def _netloc(url: str) -> str:
    """``host:port`` of ``url`` as httpx sends it (no userinfo, no default port)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    port = parts.port
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return host if port is None or port == default else f"{host}:{port}"


def register_api_base(api_base: str | None) -> str | None:
    """Tell the scrubber that ``api_base``'s server is the run's ``--api-base`` (recorded
    and matched as :data:`API_HOST`); returns the placeholder base (None without one)."""
    if not api_base:
        return None
    _api_netlocs.add(_netloc(api_base))
    return cassette_api_base(api_base)


def cassette_api_base(api_base: str) -> str:
    """The api base as cassettes hold it: scheme ``http``, host :data:`API_HOST`, the rest
    kept (a query in the base changes the path the SDK builds from it)."""
    parts = urlsplit(api_base)
    return urlunsplit(("http", API_HOST, parts.path, parts.query, parts.fragment))


# ---------------------------------------------------------------- scrubbing


def _scrub_headers(headers: dict[str, Any], values: list[str]) -> None:
    """Drop secret-bearing headers by name; redact values and shapes in every other one."""
    for name in list(headers):
        if is_secret_header(name):
            del headers[name]
            continue
        value = headers[name]
        if isinstance(value, str):
            headers[name] = redact_error(value, values)
        elif isinstance(value, list):
            headers[name] = [redact_error(v, values) if isinstance(v, str) else v for v in value]


def _scrub_body(body: Any, values: list[str], shapes: bool = False) -> Any:
    if not body:
        return body
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
    scrubbed = redact_error(text, values) if shapes else redact(text, values)
    if scrubbed == text:
        return body
    return scrubbed.encode("utf-8") if isinstance(body, bytes) else scrubbed


def scrub_request(request: VcrRequest, values: list[str] | None = None) -> VcrRequest:
    """Drop secret headers, userinfo and secret query keys, redact secret values, normalise
    the local host."""
    req = _copy_request(request)
    values = secret_values() if values is None else values
    _scrub_headers(req.headers, values)
    parts = urlsplit(req.uri)
    netloc = parts.netloc.rpartition("@")[2]
    scheme = parts.scheme
    if netloc in _local_netlocs:
        netloc, scheme = LOCAL_HOST, "http"
    elif netloc in _api_netlocs:
        netloc, scheme = API_HOST, "http"
    req.uri = redact_uri(
        urlunsplit((scheme, netloc, parts.path, parts.query, parts.fragment)), values
    )
    if "host" in req.headers:
        req.headers["host"] = netloc
    req.body = _scrub_body(req.body, values)
    return req


def _copy_request(request: VcrRequest) -> VcrRequest:
    """A copy of ``request`` that scrubbing may change without touching the original.

    Scrubbing replaces the uri and the body and edits the headers in place: a shallow copy
    with its own headers is enough. ``copy.deepcopy`` walked every header and the parsed
    uri: 88 us against 35 us for an OpenAI SDK request (15 headers, vcrpy 9.4)."""
    req = copy.copy(request)
    req.headers = dict(request.headers.items())  # vcrpy's HeadersDict of str values
    return req


def scrub_response(
    response: dict[str, Any], values: list[str] | None = None
) -> dict[str, Any] | None:
    """Drop secret headers, redact secret values a server may echo back (and, in an error
    reply, anything shaped like a secret).

    Transient faults (429, 5xx, a truncated or non-JSON body) are not recorded (None):
    a retry must reach the server again, not replay the fault.
    """
    status = int(response.get("status", {}).get("code", 200))
    if status == 429 or status >= 500 or not _complete_json(response):
        return None
    resp = copy.deepcopy(response)
    values = secret_values() if values is None else values
    _scrub_headers(resp.get("headers", {}), values)
    if "body" in resp and "string" in resp["body"]:
        body = _scrub_body(resp["body"]["string"], values, shapes=status >= 400)
        resp["body"]["string"] = _normalise_body(body)
    return resp


def _normalise_body(body: Any) -> Any:
    if not body or not _local_model_paths:
        return body
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
    normal = normalise_local_model(text)
    if normal == text:
        return body
    return normal.encode("utf-8") if isinstance(body, bytes) else normal


def _complete_json(response: dict[str, Any]) -> bool:
    headers = {k.lower(): v for k, v in response.get("headers", {}).items()}
    ctype = headers.get("content-type", [""])
    ctype = ctype[0] if isinstance(ctype, list) and ctype else str(ctype)
    if "json" not in ctype:
        return True
    body = response.get("body", {}).get("string", b"")
    try:
        json.loads(body or b"null")
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------- serialisation


def _to_json(s: Any) -> Any:
    if not isinstance(s, str) or s.strip()[:1] not in ("{", "["):
        return None
    try:
        return json.loads(s)
    except ValueError:
        return None


# libyaml's safe dumper/loader when present: the pure-Python ones cost ~8 ms a cassette.
_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ReadableSerializer:
    """YAML with JSON bodies decoded into data (and encoded back, compactly, on load)."""

    @staticmethod
    def serialize(data: dict[str, Any]) -> str:
        for it in data.get("interactions", []):
            req, resp = it["request"], it["response"]
            obj = _to_json(req.get("body"))
            if obj is not None:
                req["body"] = {"json": obj}
            rbody = resp.get("body", {})
            obj = _to_json(rbody.get("string"))
            if obj is not None:
                resp["body"] = {"json": obj}
        return yaml.dump(data, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100)

    @staticmethod
    def deserialize(text: str) -> dict[str, Any]:
        data: dict[str, Any] = yaml.load(text, Loader=_Loader) or {}
        for it in data.get("interactions", []):
            req, resp = it["request"], it["response"]
            if isinstance(req.get("body"), dict) and "json" in req["body"]:
                req["body"] = json.dumps(req["body"]["json"], ensure_ascii=False)
            if isinstance(resp.get("body"), dict) and "json" in resp["body"]:
                resp["body"] = {"string": json.dumps(resp["body"]["json"], ensure_ascii=False)}
        return data


# ---------------------------------------------------------------- what is recorded


def reply_fault(status: int, content: bytes, path: str) -> str | None:
    """Why a response is not a complete, well-formed reply (None when it is one).

    Any reply must be 2xx with a JSON object body; a chat completion (its path ends in
    ``/chat/completions``, or its body has ``choices``) also needs a non-empty
    ``choices`` list whose first entry has a ``message`` object. An HTML page, an empty
    body or ``{}`` with status 200 is a provider fault, never a model's answer.
    """
    if not 200 <= status < 300:
        return f"HTTP {status}"
    try:
        data = json.loads(content)
    except ValueError:
        head = content[:60].decode("utf-8", "replace").strip()
        return "empty body" if not head else f"body is not JSON ({head!r}...)"
    if not isinstance(data, dict):
        return "body is not a JSON object"
    protocol_fault = _protocol_fault(data, path.rstrip("/"))
    if protocol_fault is not None:
        return protocol_fault
    if path.rstrip("/").endswith("/chat/completions") or "choices" in data:
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices:
            return "chat completion without choices"
        first = choices[0]
        if not isinstance(first, dict) or not isinstance(first.get("message"), dict):
            return "chat completion whose first choice has no message"
    return None


ANTHROPIC_BLOCKS = frozenset({"text", "tool_use", "server_tool_use", "thinking",
                              "redacted_thinking", "compaction"})  # fmt: skip
"""The content blocks of an Anthropic message that LiteLLM 1.106 reads (and every
``*_tool_result``); it drops any other block without a word, so a reply made only of
them would pass for an empty answer of the model."""


def _protocol_fault(data: dict[str, Any], path: str) -> str | None:
    """Why a 2xx JSON body of a non-OpenAI protocol is not a reply (found by the provider
    round trips, tests/providers/test_bad_input.py): an Anthropic message with a block
    LiteLLM cannot read, a Gemini ``generateContent`` reply without candidates (a
    blocked prompt). A candidate without content (``finishReason`` SAFETY,
    MALFORMED_FUNCTION_CALL) is the model's empty answer, as LiteLLM reads it: scored."""
    if path.endswith("/v1/messages") and data.get("type") == "message":
        content = data.get("content")
        if not isinstance(content, list):
            return "Anthropic message without a content list"
        for block in content:
            kind = block.get("type") if isinstance(block, dict) else None
            if not isinstance(kind, str):
                return "Anthropic message with a content block without a type"
            if kind not in ANTHROPIC_BLOCKS and not kind.endswith("_tool_result"):
                return f"Anthropic message with an unknown content block type {kind!r}"
    elif path.endswith(":generateContent"):
        candidates = data.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            feedback = data.get("promptFeedback")
            reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
            why = f" (blockReason {reason})" if reason else ""
            return f"Gemini reply without candidates{why}"
    return None


def recordable(response: dict[str, Any], path: str) -> bool:
    """The recording decision: only complete replies, and 4xx answers.

    A 4xx is kept provisionally: a refusal the trial acts on (a model that rejects
    ``stop``, a provider without tool support) must replay the same way, so it stays;
    any other 4xx ends the trial as an infra error and the provider forgets it
    (:meth:`TrialCassette.forget_last`), so ``--record new`` asks the server again.
    Timeouts (408), 429, 5xx, redirects and malformed 2xx bodies are never recorded.
    """
    status = int(response.get("status", {}).get("code", 200))
    if 400 <= status < 500:
        return status not in (408, 429)
    body = response.get("body", {}).get("string", b"")
    if isinstance(body, str):
        body = body.encode("utf-8")
    return reply_fault(status, body or b"", path) is None


# ---------------------------------------------------------------- files


def _check_loaded(requests: Any, responses: Any) -> None:
    for resp in responses:
        if not isinstance(resp, dict):
            raise ValueError("an interaction's response is not a mapping")
        int(resp["status"]["code"])
        if not isinstance(resp.get("headers", {}), dict):
            raise ValueError("response headers are not a mapping")
        if not isinstance(resp["body"], dict) or "string" not in resp["body"]:
            raise ValueError("response body has no string")
    if len(requests) != len(responses):
        raise ValueError("requests and responses differ in number")


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


class SafePersister:
    """vcrpy's file persister, made safe: atomic saves and loud, typed load failures.

    vcrpy writes a cassette in place (a kill mid-write leaves it torn) and treats an
    undecodable one as empty. Here a save goes to a temporary file in the same directory
    and is renamed over the cassette (:func:`os.replace` is atomic), and a cassette that
    cannot be read raises :class:`~toolbench.errors.CassetteUnreadableError`.
    """

    @staticmethod
    def load_cassette(cassette_path: str | Path, serializer: Any) -> Any:
        path = Path(cassette_path)
        if not path.is_file():
            raise CassetteNotFoundError()
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise CassetteUnreadableError(str(path), "not UTF-8 text") from None
        except OSError as exc:
            raise CassetteUnreadableError(str(path), exc.strerror or str(exc)) from None
        if not text.strip():
            raise CassetteUnreadableError(str(path), "empty file")
        try:
            loaded = deserialize(text, serializer)
            _check_loaded(loaded[0], loaded[1])
        except Exception as exc:  # any parse or shape error: the file is unreadable
            first = (str(exc).splitlines() or [""])[0][:200]
            raise CassetteUnreadableError(str(path), f"{type(exc).__name__}: {first}") from None
        return loaded

    @staticmethod
    def save_cassette(cassette_path: str | Path, cassette_dict: Any, serializer: Any) -> None:
        data = serialize(cassette_dict, serializer)
        path = Path(cassette_path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Not *.yaml: a temporary file left by a kill is never taken for a cassette.
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(data)
                os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes it 0600; a cassette is data
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise CassetteWriteError(
                f"cannot write cassette {path}: {exc.strerror or exc}"
            ) from None


def move_aside(path: Path) -> Path:
    """Rename an unreadable cassette out of the way (kept for inspection, never replayed)."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    aside = path.with_name(f"{path.name}.unreadable-{stamp}")
    os.replace(path, aside)
    return aside


# ---------------------------------------------------------------- matching


def _empty_extras(m: Any) -> bool:
    extras = m.get("provider_specific_fields") if isinstance(m, dict) else None
    return isinstance(extras, dict) and all(v is None for v in extras.values())


def _without_echo_extras(body: Any) -> Any:
    """A request body without an empty ``provider_specific_fields`` (``{"refusal":
    null}``) on echoed assistant messages: toolbench no longer sends it to
    OpenAI-compatible servers (Mistral refuses it) and cassettes recorded before hold it,
    so it is not part of a request's identity. A non-empty one (Gemini's thought
    signatures) still is."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return body
    messages = [
        {k: v for k, v in m.items() if k != "provider_specific_fields"}
        if isinstance(m, dict) and m.get("role") == "assistant" and _empty_extras(m)
        else m
        for m in body["messages"]
    ]
    return {**body, "messages": messages}


def json_body(r1: VcrRequest, r2: VcrRequest) -> None:
    """Bodies equal as JSON data (key order and spacing ignored), else as bytes."""
    a, b = r1.body or b"", r2.body or b""
    try:
        same = _without_echo_extras(json.loads(a or b"null")) == _without_echo_extras(
            json.loads(b or b"null")
        )
    except ValueError:
        same = a == b
    if not same:
        raise AssertionError("request bodies differ")


MATCH_ON = (matchers.method, matchers.host, matchers.port, matchers.path, json_body)


# ---------------------------------------------------------------- routing


@dataclass
class TrialCassette:
    """The cassette a trial records into or replays from, plus what happened to it."""

    path: Path
    cassette: Any
    unmatched: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What happened to the cassette that the trial should report (moved aside, ...)."""
    current_path: str = ""
    """URL path of the exchange in flight (the recording decision depends on it)."""
    last_fault: str | None = None
    """Why the last response was not a complete reply (None: it was one)."""
    last_replayed: bool = False
    last_provider_s: float | None = None
    """The provider's time of the last live exchange: request written to last byte."""
    _recorded_at: int | None = None

    LATENCY_KEY = "toolbench_latency_s"
    REQUEST_KEYS = "toolbench_request_keys"
    """Metadata: toolbench's own key of each recorded interaction's request (by index;
    None for interactions recorded before keys), for replay at the provider boundary."""

    def begin(self, request: httpx.Request) -> tuple[int, int]:
        self.current_path = request.url.path
        self.last_fault, self.last_replayed, self._recorded_at = None, False, None
        return self.played(), len(self.cassette.data)

    def finish(self, status: int, content: bytes, before: tuple[int, int]) -> None:
        """Note what the exchange just routed was: replayed or live, recorded, well-formed."""
        self.last_replayed = self.played() > before[0]
        self._recorded_at = before[1] if len(self.cassette.data) > before[1] else None
        self.last_fault = reply_fault(status, content, self.current_path)

    def forget_last(self) -> None:
        """Drop the interaction the last exchange recorded (a fault the trial did not act on)."""
        if self._recorded_at is not None:
            del self.cassette.data[self._recorded_at :]
            keys = self.cassette._metadata.get(self.REQUEST_KEYS)
            if isinstance(keys, list):
                del keys[self._recorded_at :]
            self._recorded_at = None

    def remember_key(self, key: str) -> None:
        """Record toolbench's request ``key`` with the interaction the last exchange recorded."""
        at = self._recorded_at
        if at is None:
            return
        meta: dict[str, Any] = self.cassette._metadata
        old = meta.get(self.REQUEST_KEYS)
        keys: list[str | None] = list(old) if isinstance(old, list) else []
        keys = (keys + [None] * (at + 1))[: max(len(keys), at + 1)]
        keys[at] = key
        meta[self.REQUEST_KEYS] = keys
        self.cassette.dirty = True

    def replay_reply(self, key: str, wire: Any) -> dict[str, Any] | None:
        """The recorded 2xx JSON body answering a request, found without HTTP: by
        toolbench's request ``key`` when the cassette holds keys, else by ``wire`` (the
        predicted HTTP request), matched as vcrpy matches (:data:`MATCH_ON`). Counts as a
        play; None when nothing recorded answers it here (the full path then decides)."""
        self.last_fault, self.last_replayed, self._recorded_at = None, False, None
        cas = self.cassette
        if cas is None or cas.record_mode == RecordMode.ALL:
            return None
        keys = cas._metadata.get(self.REQUEST_KEYS)
        index: int | None = None
        if isinstance(keys, list) and key in keys:
            index = keys.index(key)
        elif wire is not None:
            req = VcrRequest(wire.method, wire.uri, json.dumps(wire.body).encode(), {})
            index = next((i for i, _ in cas._responses(req)), None)
        if index is None or index >= len(cas.data):
            return None
        response = cas.data[index][1]
        if int(response["status"]["code"]) // 100 != 2:
            return None  # a recorded refusal: the full path acts on it
        try:
            body = json.loads(response["body"]["string"] or b"null")
        except (KeyError, TypeError, ValueError):
            return None
        if not isinstance(body, dict):
            return None
        cas.play_counts[index] += 1
        self.last_replayed = True
        return body

    def gap(self, request: httpx.Request) -> CassetteMissingError:
        """Note a request replay cannot answer, and the error that says so."""
        self.unmatched.append(f"{request.method} {request.url.path}")
        return CassetteMissingError(
            f"cassette {self.path} has no recorded response for this request"
        )

    def played(self) -> int:
        """Responses replayed so far (a call that raised this replayed, not live)."""
        return int(self.cassette.play_count)

    def latency(self, index: int, measured: float, replayed: bool) -> float | None:
        """The model's latency for the ``index``-th exchange of this trial.

        Live: the measured time, kept in the cassette's metadata. Replayed: the time
        recorded with it (None where an older cassette has none), never the replay's
        own few milliseconds, which would pass for a very fast model.
        """
        meta: dict[str, Any] = self.cassette._metadata
        recorded = meta.get(self.LATENCY_KEY)
        if replayed:
            if isinstance(recorded, list) and index < len(recorded):
                value = recorded[index]
                return None if value is None else float(value)
            return None
        values = list(recorded) if isinstance(recorded, list) else []
        values = [*(values + [None] * index)[:index], round(measured, 4)]
        meta[self.LATENCY_KEY] = values
        self.cassette.dirty = True
        return measured


class ReplayOnlyCassette(Cassette):  # type: ignore[misc]
    """A cassette opened for replay only (``--record none``): its interactions are taken
    as they were recorded (scrubbed then), not put through the recording hooks again.
    vcrpy's load copies and re-redacts every request and response, which cost as much as
    reading the YAML itself; nothing is written back, so nothing needs it."""

    def _load(self) -> None:
        try:
            requests, responses, *metadata = self._persister.load_cassette(
                self._path, serializer=self._serializer
            )
        except CassetteNotFoundError:
            return
        self.data = list(zip(requests, responses, strict=True))
        self._old_interactions = list(self.data)
        self._loaded_count = len(self.data)
        self.dirty = False
        self.rewound = True
        self._metadata = metadata[0] if metadata else {}


_current: contextvars.ContextVar[TrialCassette | None] = contextvars.ContextVar(
    "toolbench_cassette", default=None
)
_real_async = httpx.AsyncHTTPTransport.handle_async_request
_real_sync = httpx.HTTPTransport.handle_request
_installed = 0


StreamRoute = Callable[[httpx.AsyncHTTPTransport, httpx.Request], Awaitable[httpx.Response]]
_stream_route: contextvars.ContextVar[StreamRoute | None] = contextvars.ContextVar(
    "toolbench_stream_route", default=None
)


def set_stream_route(route: StreamRoute) -> contextvars.Token[StreamRoute | None]:
    """Send this task's async requests to ``route`` (a streamed trial's SSE cassette,
    :mod:`toolbench.streaming.sse`, which records chunk timings vcrpy cannot keep)."""
    return _stream_route.set(route)


def reset_stream_route(token: contextvars.Token[StreamRoute | None]) -> None:
    _stream_route.reset(token)


async def _routed_async(self: httpx.AsyncHTTPTransport, request: httpx.Request) -> httpx.Response:
    route = _stream_route.get()
    if route is not None:
        return await route(self, request)
    tc = _current.get()
    if tc is None:
        return await _real_async(self, request)
    before = tc.begin(request)
    t0 = time.perf_counter()
    try:
        response: httpx.Response = await httpx_stubs._vcr_handle_async_request(
            tc.cassette, _real_async, self, request, httpx
        )
    except CannotOverwriteExistingCassetteException:
        raise tc.gap(request) from None
    except BaseException:
        tc.last_provider_s = time.perf_counter() - t0  # a timeout, a refused connection
        raise
    # vcrpy has buffered the body already (to record it): reading it here costs nothing.
    content = await response.aread()
    tc.last_provider_s = time.perf_counter() - t0  # request written to last byte
    tc.finish(response.status_code, content, before)
    return response


def _routed_sync(self: httpx.HTTPTransport, request: httpx.Request) -> httpx.Response:
    tc = _current.get()
    if tc is None:
        return _real_sync(self, request)
    before = tc.begin(request)
    t0 = time.perf_counter()
    try:
        response: httpx.Response = httpx_stubs._vcr_handle_request(
            tc.cassette, _real_sync, self, request, httpx
        )
    except CannotOverwriteExistingCassetteException:
        raise tc.gap(request) from None
    content = response.read()
    tc.last_provider_s = time.perf_counter() - t0
    tc.finish(response.status_code, content, before)
    return response


@contextmanager
def router() -> Iterator[None]:
    """Install the per-trial routing patch for the duration of a run (re-entrant)."""
    global _installed
    if _installed == 0:
        httpx.AsyncHTTPTransport.handle_async_request = _routed_async  # type: ignore[method-assign]
        httpx.HTTPTransport.handle_request = _routed_sync  # type: ignore[method-assign]
    _installed += 1
    try:
        yield
    finally:
        _installed -= 1
        if _installed == 0:
            httpx.AsyncHTTPTransport.handle_async_request = _real_async  # type: ignore[method-assign]
            httpx.HTTPTransport.handle_request = _real_sync  # type: ignore[method-assign]


DEFAULT_CASSETTES = Path("cassettes")


def record_command(
    model: str,
    fmt: str,
    scenario: str,
    api_base: str | None = None,
    cassette_dir: Path | None = None,
) -> str:
    """The command that records a missing cassette (shell-quoted: ``native|xml``), with
    the run's ``--api-base`` and ``--cassettes`` when it had them (else it would record
    elsewhere)."""
    m, f, s = (shlex.quote(x) for x in (model, fmt, scenario))
    command = f"toolbench run --models {m} --formats {f} --scenarios {s}"
    if api_base:
        command += f" --api-base {shlex.quote(redact_uri(api_base))}"
    if cassette_dir is not None and cassette_dir != DEFAULT_CASSETTES:
        command += f" --cassettes {shlex.quote(str(cassette_dir))}"
    return command + " --record new"


@contextmanager
def use_cassette(path: Path, record: RecordOption) -> Iterator[TrialCassette]:
    """Route this task's HTTP through the cassette at ``path``.

    ``none``: replay only (a missing file raises :class:`CassetteMissingError`, an
    unreadable one :class:`CassetteUnreadableError`); ``new``: replay what is recorded,
    record what is missing (an unreadable file is moved aside and recorded again);
    ``all``: re-record (the old file is replaced only when the new one is saved).
    Only complete replies are recorded (:func:`recordable`); saves are atomic.
    """
    if record == "none" and not path.is_file():
        raise CassetteMissingError(f"no cassette {path}")
    values = secret_values()  # once per trial, not once per request hook
    mode = {"none": RecordMode.NONE, "new": RecordMode.NEW_EPISODES, "all": RecordMode.ALL}[record]
    tc = TrialCassette(path=path, cassette=None)

    def before_record_response(r: dict[str, Any]) -> dict[str, Any] | None:
        return scrub_response(r, values) if recordable(r, tc.current_path) else None

    scrubbed: list[tuple[VcrRequest, VcrRequest]] = []

    def before_record_request(r: VcrRequest) -> VcrRequest:
        # vcrpy scrubs the request of an exchange to ask whether it can play it, then
        # again to record it (a copy and a redaction scan of the body each time).
        # Nothing changes the request in between: the copy made the first time serves.
        for seen, out in scrubbed:
            if seen is r:
                return out
        out = scrub_request(r, values)
        scrubbed[:] = [*scrubbed[-1:], (r, out)]  # the request and vcrpy's copy of it
        return out

    options: dict[str, Any] = dict(
        path=str(path),
        record_mode=mode,
        match_on=MATCH_ON,
        before_record_request=before_record_request,
        before_record_response=before_record_response,
        serializer=ReadableSerializer,
        persister=SafePersister,
        allow_playback_repeats=True,
    )
    if record == "all":
        tc.cassette = Cassette(**options)
    elif record == "none":
        tc.cassette = ReplayOnlyCassette.load(**options)
    else:
        try:
            tc.cassette = Cassette.load(**options)
        except CassetteUnreadableError as exc:
            if record != "new":
                raise
            aside = move_aside(path)
            tc.notes.append(f"{exc}; moved to {aside.name} and recorded again")
            tc.cassette = Cassette.load(**options)
    token = _current.set(tc)
    try:
        yield tc
    finally:
        _current.reset(token)
        # Nothing to keep (every exchange was a fault it forgot): write no empty cassette.
        if record != "none" and tc.cassette.dirty and tc.cassette.data:
            tc.cassette._save()
