"""Per-trial cassettes: one JSON recording per trial, recorded and replayed, scrubbed,
matched, migrated.

The layer below ``providers/`` and ``runner/``: it imports only ground modules (errors,
redaction), and its own modules import each other directly, never through this
package's re-exports (no import loop). A trial's exchanges, plain and streamed, are one
versioned JSON file (:mod:`.recording`; the layout before it is converted by
:mod:`.migrate`, its YAML read by :mod:`.legacy_yaml`), headers one text a name in both.
One trial cassette (:mod:`.trial`, opened by :mod:`.use`) answers every request of its
trial through one httpx route (:mod:`.route`), and at the provider boundary without HTTP
(:mod:`.boundary`): a plain reply handed back as its body, a stream chunk by chunk with
each chunk's arrival offset, through its framing and event guard
(:mod:`.stream_framing`, :mod:`.stream_bytes`). What a live exchange is written as is
:mod:`.plain_record`'s and :mod:`.stream_record`'s (:mod:`.stream_scrub`). Requests
match on method, path and the JSON body compared as data (:mod:`.match`), or at the
provider boundary by toolbench's request key; this machine's hosts and model paths are
recorded as placeholders (:mod:`.hosts`), secrets never (:mod:`.scrub`); only complete
replies are recorded (:mod:`.faults`), saved atomically (:mod:`.persist`).
"""

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
from toolbench.cassettes.match import echo_equivalent, same_body, without_echo_extras
from toolbench.cassettes.persist import move_aside, write_atomically
from toolbench.cassettes.route import real_async, router
from toolbench.cassettes.scrub import (
    scrub_body_data,
    scrub_headers,
    scrub_request,
    scrub_response,
)
from toolbench.cassettes.trial import TrialCassette
from toolbench.cassettes.use import DEFAULT_CASSETTES, RecordOption, record_command, use_cassette

__all__ = [
    "API_HOST",
    "DEFAULT_CASSETTES",
    "LOCAL_BASE",
    "LOCAL_HOST",
    "RecordOption",
    "TrialCassette",
    "cassette_api_base",
    "echo_equivalent",
    "move_aside",
    "normalise_local_model",
    "real_async",
    "record_command",
    "recordable",
    "register_api_base",
    "register_local_model_path",
    "register_local_netloc",
    "reply_fault",
    "router",
    "same_body",
    "scrub_body_data",
    "scrub_headers",
    "scrub_request",
    "scrub_response",
    "stream_fault",
    "use_cassette",
    "without_echo_extras",
    "write_atomically",
]
