"""vcrpy's side of the one cassette format: its cassette dict to and from a
:class:`~toolbench.cassettes.recording.Recording` (JSON bodies decoded into data, the
request keys and latencies on each exchange), and the reader of the old YAML layout
(:class:`LegacyYamlSerializer`, for ``toolbench cassettes migrate`` only)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import toolbench.cassettes.recording as rec
from toolbench.cassettes.faults import answered

VCR_VERSION = 1
"""vcrpy's cassette dict version (``vcr.serialize.CASSETTE_FORMAT_VERSION``), written
here so that reading a cassette does not import vcrpy; a test checks the two agree."""

REQUEST_KEYS = "toolbench_request_keys"
LATENCY_KEY = "toolbench_latency_s"
READ_KEY = "toolbench_read"
"""vcrpy metadata: toolbench's key, the provider's time and the reply as read of each
interaction, by index (on disk they sit on each exchange)."""
CAPABILITIES_KEY = "toolbench_capabilities"
"""vcrpy metadata: what the sender's tables said the model takes (the recording's
``capabilities``)."""


def _to_json(s: Any) -> tuple[bool, Any]:
    if not isinstance(s, str) or s.strip()[:1] not in ("{", "["):
        return False, None
    try:
        return True, json.loads(s)
    except ValueError:
        return False, None


def _at(values: Any, i: int) -> Any:
    return values[i] if isinstance(values, list) and i < len(values) else None


def _read(value: Any) -> rec.ReadReply | None:
    return rec.ReadReply.model_validate(value) if value is not None else None


def _capabilities(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def recording_of(data: dict[str, Any]) -> rec.Recording:
    """A vcrpy cassette dict (``interactions`` + ``metadata``) as a recording."""
    meta = data.get("metadata") or {}
    keys, latencies = meta.get(REQUEST_KEYS), meta.get(LATENCY_KEY)
    reads = meta.get(READ_KEY)
    out = rec.Recording(capabilities=_capabilities(meta.get(CAPABILITIES_KEY)))
    for i, it in enumerate(data.get("interactions", [])):
        req, resp = it["request"], it["response"]
        body = req.get("body")
        ok, obj = _to_json(body)
        status = resp.get("status") or {}
        string = (resp.get("body") or {}).get("string")
        rok, robj = _to_json(string)
        latency = _at(latencies, i)
        out.exchanges.append(
            rec.RecordedExchange(
                request=rec.RecordedRequest(
                    method=req["method"],
                    uri=req["uri"],
                    body=obj if ok else body,
                    headers=req.get("headers") or {},
                ),
                response=rec.RecordedResponse(
                    status=int(status.get("code", 0)),
                    reason=status.get("message"),
                    headers=resp.get("headers") or {},
                    body=robj if rok else None,
                    text=None if rok else (string or ""),
                ),
                key=_at(keys, i),
                latency_s=None if latency is None else float(latency),
                read=_read(_at(reads, i)),
            )
        )
    return out


def metadata_of(recording: rec.Recording, read: Callable[[rec.ReadReply], Any]) -> dict[str, Any]:
    """vcrpy's cassette metadata of a recording: each exchange's key, latency and reply as
    read (``read`` of it) by index, and the capabilities; a list none of whose entries
    is set is left out."""
    exchanges = recording.exchanges
    lists: dict[str, list[Any]] = {
        REQUEST_KEYS: [ex.key for ex in exchanges],
        LATENCY_KEY: [ex.latency_s for ex in exchanges],
        READ_KEY: [None if ex.read is None else read(ex.read) for ex in exchanges],
    }
    meta: dict[str, Any] = {k: v for k, v in lists.items() if any(x is not None for x in v)}
    if recording.capabilities is not None:
        meta[CAPABILITIES_KEY] = recording.capabilities
    return meta


def _listed(headers: dict[str, str]) -> dict[str, list[str]]:
    """Headers as vcrpy keeps them: a list a name (a recording keeps one text a name)."""
    return {name: [value] for name, value in headers.items()}


def vcr_dict_of(recording: rec.Recording) -> dict[str, Any]:
    """A recording as vcrpy's cassette dict (bodies as compact JSON text)."""
    interactions: list[dict[str, Any]] = []
    for ex in recording.exchanges:
        req, resp = ex.request, ex.response
        body = req.body
        if body is not None and not isinstance(body, str):
            body = json.dumps(body, ensure_ascii=False)
        interactions.append({
            "request": {"method": req.method, "uri": req.uri, "body": body,
                        "headers": _listed(req.headers)},
            "response": {
                "status": {"code": resp.status, "message": resp.reason or ""},
                "headers": _listed(resp.headers), "body": {"string": resp.content()},
            },
        })  # fmt: skip
    meta = metadata_of(recording, lambda read: read.model_dump(mode="json"))
    out: dict[str, Any] = {"version": VCR_VERSION, "interactions": interactions}
    if meta:
        out["metadata"] = meta
    return out


class RecordingSerializer:
    """vcrpy's serializer for :mod:`.recording` files."""

    @staticmethod
    def serialize(data: dict[str, Any]) -> str:
        return rec.dump(recording_of(data))

    @staticmethod
    def deserialize(text: str) -> dict[str, Any]:
        # A defect raises a typed error (CassetteLayoutError for the old layout), which
        # the persister passes on as it is.
        # A recorded provider error is never played (:func:`.faults.answered`).
        return vcr_dict_of(answered(rec.parse(text, "<cassette>")))


class LegacyYamlSerializer:
    """The old layout's reader: vcrpy's YAML with JSON bodies decoded into data."""

    @staticmethod
    def deserialize(text: str) -> dict[str, Any]:
        import yaml  # only the migration reads YAML cassettes

        loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        data: dict[str, Any] = yaml.load(text, Loader=loader) or {}
        if not isinstance(data, dict) or data.get("version", VCR_VERSION) != VCR_VERSION:
            version = data.get("version") if isinstance(data, dict) else None
            raise ValueError(f"version {version!r} is not a vcrpy cassette version this reads")
        for it in data.get("interactions", []):
            req, resp = it["request"], it["response"]
            if isinstance(req.get("body"), dict) and "json" in req["body"]:
                req["body"] = json.dumps(req["body"]["json"], ensure_ascii=False)
            if isinstance(resp.get("body"), dict) and "json" in resp["body"]:
                resp["body"] = {"string": json.dumps(resp["body"]["json"], ensure_ascii=False)}
        return data
