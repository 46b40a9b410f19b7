"""Per-trial cassettes: one JSON recording per trial, recorded and replayed, scrubbed,
matched, migrated.

The layer below ``providers/`` and ``runner/``: it imports only ground modules (errors,
redaction), and its own modules import each other directly, never through this
package's re-exports (no import loop). A trial's exchanges, plain and streamed, are one
versioned JSON file (:mod:`.recording`; the layout before it is converted by
:mod:`.migrate`), headers one text a name in both. Plain exchanges are recorded and
replayed through HTTP by vcrpy (:mod:`.serializer`, :mod:`.use`, :mod:`.cassette`,
:mod:`.route`), or answered at the provider boundary without it
(:mod:`.replay_only`, :mod:`.boundary`); streamed ones by toolbench's own trial
cassette (:mod:`.stream_cassette`), which keeps each chunk's arrival offset: its
framing and event guard (:mod:`.stream_framing`), its httpx byte streams
(:mod:`.stream_bytes`) and what a live stream is written as (:mod:`.stream_record`,
:mod:`.stream_scrub`). Requests match on method, host, port, path and the JSON body
compared as data (:mod:`.match`), or at the provider boundary by toolbench's request key;
this machine's hosts and model paths are recorded as placeholders (:mod:`.hosts`),
secrets never (:mod:`.scrub`); only complete replies are recorded (:mod:`.faults`),
saved atomically (:mod:`.persist`).
"""

from toolbench.cassettes.cassette import TrialCassette
from toolbench.cassettes.faults import recordable, reply_fault, stream_fault
from toolbench.cassettes.hosts import (
    API_HOST,
    LOCAL_BASE,
    LOCAL_HOST,
    cassette_api_base,
    normalise_local_model,
    register_api_base,
    register_local_model_path,
    register_local_netloc,
)
from toolbench.cassettes.match import echo_equivalent, json_body, match_on, without_echo_extras
from toolbench.cassettes.persist import SafePersister, move_aside, write_atomically
from toolbench.cassettes.replay_only import ReplayOnlyCassette
from toolbench.cassettes.route import (
    StreamRoute,
    real_async,
    reset_stream_route,
    router,
    set_stream_route,
)
from toolbench.cassettes.scrub import (
    scrub_body_data,
    scrub_headers,
    scrub_request,
    scrub_response,
)
from toolbench.cassettes.serializer import RecordingSerializer
from toolbench.cassettes.use import DEFAULT_CASSETTES, RecordOption, record_command, use_cassette

__all__ = [
    "API_HOST",
    "DEFAULT_CASSETTES",
    "LOCAL_BASE",
    "LOCAL_HOST",
    "RecordOption",
    "RecordingSerializer",
    "ReplayOnlyCassette",
    "SafePersister",
    "StreamRoute",
    "TrialCassette",
    "cassette_api_base",
    "echo_equivalent",
    "json_body",
    "match_on",
    "move_aside",
    "normalise_local_model",
    "real_async",
    "record_command",
    "recordable",
    "register_api_base",
    "register_local_model_path",
    "register_local_netloc",
    "reply_fault",
    "reset_stream_route",
    "router",
    "scrub_body_data",
    "scrub_headers",
    "scrub_request",
    "scrub_response",
    "set_stream_route",
    "stream_fault",
    "use_cassette",
    "without_echo_extras",
    "write_atomically",
]
