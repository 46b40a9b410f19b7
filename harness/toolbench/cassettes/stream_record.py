"""What a live stream's exchange is written as: headers and request scrubbed as every
cassette's are, the request body as a replay matches it, llama-server's model path as its
alias, the body redacted as a reader of the stream sees it (:mod:`.stream_scrub`), and
the events decoded from the chunks as written (never a value apart from them)."""

from __future__ import annotations

from typing import Any

import httpx

import toolbench.cassettes.recording as rec
from toolbench.cassettes.hosts import normalise_local_model
from toolbench.cassettes.scrub import RequestParts, scrub_body_data, scrub_headers, scrub_request
from toolbench.cassettes.stream_framing import events_of
from toolbench.cassettes.stream_scrub import redact_frames, redact_stream
from toolbench.framings import framing_of


def recorded_exchange(
    request: httpx.Request,
    body: Any,
    response: httpx.Response,
    chunks: list[rec.Chunk],
    values: list[str],
) -> tuple[rec.RecordedExchange, bool]:
    """The exchange of ``request`` (its decoded ``body``) and ``response`` (read as
    ``chunks``) as its cassette keeps it, and whether redaction rewrote the chunks (then
    what a replay reads from them is not what was read live)."""
    headers: dict[str, Any] = {k: v for k, v in response.headers.items()}
    scrub_headers(headers, values)
    # The body is recorded as a replay matches it (scrub_body_data), the rest scrubbed.
    parts = RequestParts(request.method, str(request.url), b"", dict(request.headers.items()))
    scrubbed = scrub_request(parts, values)
    # llama-server's GGUF path in each chunk's ``model`` field, recorded as the alias.
    chunks = [
        rec.Chunk(offset_ms=c.offset_ms, text=normalise_local_model(c.text))
        if c.text is not None
        else c
        for c in chunks
    ]
    raw = [(c.data(), c.offset_ms) for c in chunks]
    rewritten = False
    if framing_of(response.headers).frames is not None:  # binary frames, not lines
        frames = redact_frames(raw, values)
        if frames is not None:
            chunks = [rec.Chunk.of(data, offset) for data, offset in frames]
            rewritten = True
    else:
        redacted = redact_stream(raw, values)
        if redacted is not None:
            chunks = [rec.Chunk(offset_ms=offset, text=text) for text, offset in redacted]
            rewritten = True
    recorded = rec.RecordedResponse(status=response.status_code, headers=headers, chunks=chunks)
    # Decoded from what is written (redacted, the model's alias): never a value apart.
    recorded.events = events_of(recorded)
    request_kept = rec.RecordedRequest(
        method=request.method, uri=scrubbed.uri, body=scrub_body_data(body, values)
    )
    return rec.RecordedExchange(request=request_kept, response=recorded), rewritten
