"""The old layout's plain cassettes: vcrpy's YAML (``<scenario>.yaml``), read for
``toolbench cassettes migrate`` only (:mod:`.migrate`), never to replay.

Such a file kept its interactions with bodies as text (or ``{"json": ...}``), headers a
list a name, and toolbench's request keys, latencies and replies as read in its
metadata, each a list by interaction index; here they go onto each exchange."""

from __future__ import annotations

import json
from typing import Any

import toolbench.cassettes.recording as rec
from toolbench.cassettes.plain_record import json_text

VCR_VERSION = 1
"""The version of vcrpy's cassette dict this reads (``vcr.serialize.CASSETTE_FORMAT_VERSION``)."""
REQUEST_KEYS = "toolbench_request_keys"
LATENCY_KEY = "toolbench_latency_s"
READ_KEY = "toolbench_read"
CAPABILITIES_KEY = "toolbench_capabilities"
"""The metadata an old YAML cassette kept: each interaction's key, provider's time and
reply as read, by index, and what the sender's tables said the model takes."""


def _at(values: Any, i: int) -> Any:
    return values[i] if isinstance(values, list) and i < len(values) else None


def _read(value: Any) -> rec.ReadReply | None:
    return rec.ReadReply.model_validate(value) if value is not None else None


def recording_of(data: dict[str, Any]) -> rec.Recording:
    """A vcrpy cassette dict (``interactions`` + ``metadata``) as a recording."""
    meta = data.get("metadata") or {}
    keys, latencies = meta.get(REQUEST_KEYS), meta.get(LATENCY_KEY)
    reads, caps = meta.get(READ_KEY), meta.get(CAPABILITIES_KEY)
    out = rec.Recording(capabilities=caps if isinstance(caps, dict) else None)
    for i, it in enumerate(data.get("interactions", [])):
        req, resp = it["request"], it["response"]
        body = req.get("body")
        ok, obj = json_text(body)
        status = resp.get("status") or {}
        string = (resp.get("body") or {}).get("string")
        rok, robj = json_text(string)
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


def read_yaml(text: str) -> dict[str, Any]:
    """The vcrpy cassette dict of an old YAML file, JSON bodies as text."""
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
