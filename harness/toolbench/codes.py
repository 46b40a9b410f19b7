"""Typed error codes: the failure taxonomy that reports count.

Codes are plain dotted strings so third-party formats can add their own; the ones the
built-in formats and scorers use are listed here so they are spelled once.
"""

from __future__ import annotations

# parsing
JSON_DECODE_FAILED = "json.decode_failed"
JSON_REPAIRED = "json.repaired"
CALL_TRUNCATED = "call.truncated"
CALL_UNKNOWN_TOOL = "call.unknown_tool"
CALL_MISSING_NAME = "call.missing_name"
CALL_BAD_SHAPE = "call.bad_shape"
ARGS_NOT_OBJECT = "args.not_object"
ARGS_NOT_LITERAL = "args.not_literal"
CALL_TOO_DEEP = "call.too_deep"
CALL_LENIENT = "call.lenient"  # read only leniently: not a strict parse
CALL_IN_CONTENT = "call.in_content"  # native: call syntax left in the content as text
CALL_STRAY_TAG = "call.stray_tag"  # a call tag followed by prose, not by a call
CALL_MALFORMED = "call.malformed"  # the provider saw the model's call attempt fail
FAILED_CALL_FINISHES = frozenset({
    "malformed_function_call", "unexpected_tool_call", "too_many_tool_calls",
})  # fmt: skip
"""Finish reasons a reply carries when the provider reports that the model tried to call
and no call came out (Gemini's, lower-cased by ``toolbench.providers.finish``): a call
failure (``call.malformed``), never an abstention."""

# notes on a parsed call (ToolCall.notes): recorded, not errors
ARGS_NULL = "args.null"
ARGS_STRICT_NULL = "args.strict_null"  # native:strict: a null optional argument read as left out

# call matching
CALL_WRONG_TOOL = "call.wrong_tool"
CALL_MISSING = "call.missing"
CALL_EXTRA = "call.extra"
CALL_WRONG_ORDER = "call.wrong_order"
CALL_UNEXPECTED = "call.unexpected"  # a call where the scenario wanted none
ARGS_MISSING_REQUIRED = "args.missing_required"
ARGS_MISMATCH = "args.mismatch"
ARGS_UNEXPECTED = "args.unexpected"
ARGS_SCHEMA_INVALID = "args.schema_invalid"
ARGS_REGEX_TIMEOUT = "args.regex_timeout"

# stop compliance
STOP_TEXT_AFTER_CALL = "stop.text_after_call"
STOP_HALLUCINATED_RESULT = "stop.hallucinated_result"
STOP_MULTIPLE_ACTIONS = "stop.multiple_actions"
STOP_LENGTH = "stop.length"

# leakage
LEAK_RAW = "leak.raw_markers"
LEAK_SANITIZED = "leak.sanitized_markers"

# no-call / final answer / conversation
NO_CALL_DECODE_FAILURE = "nocall.decode_failure"
ANSWER_MISMATCH = "answer.mismatch"
ANSWER_MISSING = "answer.missing"
TURNS_EXHAUSTED = "turns.exhausted"
ANSWER_REGEX_TIMEOUT = "answer.regex_timeout"

# outcomes that are not model failures: provider faults (infra.*)
INFRA_ERROR = "infra.error"
INFRA_TIMEOUT = "infra.timeout"
INFRA_CONNECTION = "infra.connection"
INFRA_RATE_LIMITED = "infra.rate_limited"
INFRA_SERVER_ERROR = "infra.server_error"
INFRA_CLIENT_ERROR = "infra.client_error"
INFRA_BAD_REPLY = "infra.bad_reply"
# a provider batch (``run --batch``): what became of a trial's request in it
INFRA_BATCH_REJECTED = "infra.batch_rejected"
INFRA_BATCH_FAILED = "infra.batch_failed"
INFRA_BATCH_EXPIRED = "infra.batch_expired"
INFRA_BATCH_MISSING = "infra.batch_missing"
UNSUPPORTED = "provider.unsupported"
PROVIDER_STOP_REJECTED = "provider.stop_rejected"  # an attempt's outcome, not a trial's
PROVIDER_FILTERED = "provider.filtered"  # the provider's filter stopped the reply
CASSETTE_MISSING = "cassette.missing"
CASSETTE_UNREADABLE = "cassette.unreadable"
CASSETTE_OLD_LAYOUT = "cassette.old_layout"

# toolbench's own faults (harness.*): counted apart from model and provider failures
HARNESS_ERROR = "harness.error"
HARNESS_SCORING = "harness.scoring"
HARNESS_CASSETTE_WRITE = "harness.cassette_write"

# streamed replies (stream.*: the delta sequence of a native streamed reply was broken;
# infra.stream_*: the event stream itself failed, a typed infrastructure error)
STREAM_CALL_NO_ID = "stream.call_no_id"
STREAM_CALL_NO_NAME = "stream.call_no_name"
STREAM_INDEX_GAP = "stream.index_gap"
STREAM_ARGS_INVALID = "stream.args_invalid"
STREAM_CONTENT_IN_CALL = "stream.content_in_call"
STREAM_NO_FINISH = "stream.no_finish"
INFRA_STREAM_TRUNCATED = "infra.stream_truncated"
INFRA_STREAM_BAD_EVENT = "infra.stream_bad_event"
INFRA_STREAM_EVENT_TOO_LARGE = "infra.stream_event_too_large"
INFRA_STREAM_STALLED = "infra.stream_stalled"

# a provider's limit the request exceeds (a trial status ``unsupported``)
PROVIDER_CONTEXT_WINDOW = "provider.context_window"

# environments (tools that run, toolbench.environments): a trial that cannot open its
# environment is ``harness_error`` with one of these; a tool's own failure is fed back
# to the model and recorded on the call (``TurnRecord.environment.runs[].error``)
ENV_UNKNOWN = "environment.unknown"
ENV_STATE_INVALID = "environment.state_invalid"
ENV_UNAVAILABLE = "environment.unavailable"
ENV_SNAPSHOT_NOT_JSON = "environment.snapshot_not_json"
TOOL_UNKNOWN = "tool.unknown"
TOOL_RAISED = "tool.raised"
TOOL_RESULT_NOT_JSON = "tool.result_not_json"
TOOL_TIMEOUT = "tool.timeout"
ENV_MCP_START = "environment.mcp_start"
ENV_MCP_DIED = "environment.mcp_died"
ENV_MCP_PROTOCOL = "environment.mcp_protocol"
ENV_MCP_UNRECORDED = "environment.mcp_unrecorded"
ENV_MCP_STATE_MISSING = "environment.mcp_state_missing"
ENV_MCP_STATE_RAISED = "environment.mcp_state_raised"
ENV_MCP_STATE_NOT_JSON = "environment.mcp_state_not_json"

# a loop scenario judged turn by turn (toolbench.scoring.loop)
LOOP_EMPTY_TURN = "loop.empty_turn"
LOOP_STATE_MISMATCH = "loop.state_mismatch"
LOOP_RESULT_MISSING = "loop.result_missing"
LOOP_NOT_REACHED = "loop.not_reached"
LOOP_STEP_LIMIT = "loop.step_limit"

DESCRIPTIONS: dict[str, str] = {
    JSON_DECODE_FAILED: "a tool call's JSON could not be decoded, even after repair",
    JSON_REPAIRED: "a tool call's JSON was invalid and only decoded after repair",
    CALL_TRUNCATED: "the reply ended inside a tool call",
    CALL_UNKNOWN_TOOL: "a call names a tool that was not offered",
    CALL_MISSING_NAME: "a call has no tool name",
    CALL_BAD_SHAPE: "a call's JSON has the wrong shape for the format",
    ARGS_NOT_OBJECT: "a call's arguments are not a JSON object",
    ARGS_NOT_LITERAL: "a pythonic call's argument is not a literal (lambda, name, attribute, call)",
    CALL_TOO_DEEP: "a call is nested too deeply or too long to read safely; refused unread",
    CALL_LENIENT: "a call was read only leniently (text or several objects inside its block, "
    "a doubled or missing tag)",
    CALL_IN_CONTENT: "the reply's content holds tool-call syntax as text: the server did not "
    "return it as a structured call",
    CALL_STRAY_TAG: "a call's opening tag is followed by prose, not by a call (a stray tag, "
    "not a reply cut off mid-call)",
    CALL_MALFORMED: "the provider reports that the model's call attempt failed (Gemini "
    "MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS): it tried to call "
    "and no call came out",
    ARGS_NULL: 'a call\'s arguments were null or the JSON string "null", read as {} '
    "(a note on the call, not an error)",
    CALL_WRONG_TOOL: "the expected tool was not the one called",
    CALL_MISSING: "an expected call was not made",
    CALL_EXTRA: "more calls were made than expected",
    CALL_WRONG_ORDER: "the calls came in the wrong order",
    CALL_UNEXPECTED: "a call was made where the scenario wanted a text answer",
    ARGS_MISSING_REQUIRED: "an expected argument is missing",
    ARGS_MISMATCH: "an argument's value does not match",
    ARGS_UNEXPECTED: "an argument was given that the scenario does not accept",
    ARGS_SCHEMA_INVALID: "the arguments do not validate against the tool's JSON Schema",
    ARGS_REGEX_TIMEOUT: (
        "an argument's regex check (a matcher or the schema's pattern) ran past its time"
        " bound; the argument counts as not matching"
    ),
    STOP_TEXT_AFTER_CALL: "the model went on writing after its call",
    STOP_HALLUCINATED_RESULT: "the model invented a tool result or Observation",
    STOP_MULTIPLE_ACTIONS: "several actions where the format allows one",
    STOP_LENGTH: "the reply hit the length limit",
    LEAK_RAW: "raw format markers in the reply's text outside calls",
    LEAK_SANITIZED: "raw format markers survive sanitizing",
    NO_CALL_DECODE_FAILURE: "a no-call scenario's reply tried to call and failed to parse",
    ANSWER_MISMATCH: "the final answer fails the scenario's check",
    ANSWER_MISSING: "the conversation ended without a final answer",
    TURNS_EXHAUSTED: "max_turns reached before a final answer",
    ANSWER_REGEX_TIMEOUT: (
        "the final answer's regex check ran past its time bound; the answer counts as not matching"
    ),
    INFRA_ERROR: "transport failure after retries (not a model failure)",
    UNSUPPORTED: "the provider cannot do what the format needs",
    CASSETTE_MISSING: "replay-only run found no cassette for the trial",
    PROVIDER_STOP_REJECTED: "the model refused `stop`; the turn was sent again without it",
    PROVIDER_FILTERED: "the provider's filter stopped the reply (Gemini SAFETY, RECITATION and "
    "the other block reasons, Anthropic refusal, content_filter): not the model's answer, "
    "kept out of the format's rates like an infrastructure fault",
    INFRA_TIMEOUT: "the provider did not answer within the request timeout",
    INFRA_CONNECTION: "the provider could not be reached",
    INFRA_RATE_LIMITED: "the provider kept refusing with 429 (or asked to wait past the cap)",
    INFRA_SERVER_ERROR: "the provider kept answering 5xx",
    INFRA_CLIENT_ERROR: "the provider refused the request with a 4xx (key, model, quota, ...)",
    INFRA_BAD_REPLY: "the provider answered 2xx with a body that is not a complete reply",
    INFRA_BATCH_REJECTED: "the provider refused the batch holding the trial's request (its file "
    "or the batch itself, at creation or validation): nothing of it was answered",
    INFRA_BATCH_FAILED: "the provider's batch answered the trial's request with an error",
    INFRA_BATCH_EXPIRED: "the batch expired, or did not end within --timeout or before "
    "--budget ran out, before the trial's request was answered (the batch was cancelled; "
    "the answered ones are kept)",
    INFRA_BATCH_MISSING: "the batch ended without a result for the trial's request",
    CASSETTE_UNREADABLE: "the trial's cassette file is truncated, malformed or binary",
    CASSETTE_OLD_LAYOUT: (
        "the trial's cassette is of the old layout (or its events carry no offsets):"
        " convert it with `toolbench cassettes migrate`"
    ),
    HARNESS_ERROR: "toolbench itself failed on this trial (a bug: see the recorded exception)",
    HARNESS_SCORING: "scoring this trial raised (e.g. a tool schema toolbench cannot evaluate)",
    HARNESS_CASSETTE_WRITE: "the trial's cassette could not be written",
    STREAM_CALL_NO_ID: "a streamed tool call never received an id (kept, with a made-up id)",
    STREAM_CALL_NO_NAME: "a streamed tool call never received a function name: the server "
    "broke the call, the attempt fails `infra.bad_reply` (never an answer without the call)",
    STREAM_INDEX_GAP: "streamed tool-call deltas skipped an index (e.g. 0 then 2)",
    STREAM_ARGS_INVALID: "a streamed tool call's argument fragments never joined into valid JSON",
    STREAM_CONTENT_IN_CALL: "text content arrived between the deltas of one tool call",
    STREAM_NO_FINISH: "the event stream ended without a finish_reason",
    INFRA_STREAM_TRUNCATED: "the event stream was cut off before it ended (what arrived is kept "
    "in the message)",
    INFRA_STREAM_BAD_EVENT: "a `data:` line of the event stream is not JSON",
    INFRA_STREAM_EVENT_TOO_LARGE: "one server-sent event exceeded 1 MB",
    INFRA_STREAM_STALLED: "the event stream stopped sending before it ended (bounded wait; what "
    "arrived is kept in the message)",
    PROVIDER_CONTEXT_WINDOW: "the request is longer than the model's context window "
    "(the model's limit: the trial is unsupported, not a transport failure)",
    ENV_UNKNOWN: "the scenario names an environment that is not registered",
    ENV_STATE_INVALID: "the scenario's initial state does not fit its environment",
    ENV_UNAVAILABLE: "the environment's code is not installed here (BFCL's backends "
    "without the bfcl-eval wheel: `toolbench import bfcl --multi-turn`)",
    ENV_SNAPSHOT_NOT_JSON: "the environment's state snapshot is not JSON (its own bug)",
    ENV_MCP_START: "an MCP server did not start (command missing, it exited, or it gave no "
    "answer to initialize or tools/list within its start bound)",
    ENV_MCP_DIED: "an MCP server exited during the trial (the call it was serving was told to "
    "the model as a tool error; the trial's later state cannot be trusted)",
    ENV_MCP_PROTOCOL: "an MCP server answered what MCP does not allow (malformed JSON-RPC, a "
    "tool whose input schema is not a JSON object schema)",
    ENV_MCP_UNRECORDED: "a replayed MCP call is not in the trial's cassette (no server is "
    "started on replay: record it again with --record new)",
    ENV_MCP_STATE_MISSING: "an MCP server's declared state_tool is not in its tools/list",
    ENV_MCP_STATE_RAISED: "an MCP server's state_tool failed (an error, isError, no answer "
    "in time): the state after the turn cannot be read",
    ENV_MCP_STATE_NOT_JSON: "an MCP server's state_tool answered text that is not JSON",
    TOOL_UNKNOWN: "a call names a tool that is not offered at that turn (told to the model, "
    "not run)",
    TOOL_RAISED: "a tool raised; its error was fed back to the model in the format's shape",
    TOOL_RESULT_NOT_JSON: "a tool returned something JSON cannot hold (fed back as an error)",
    TOOL_TIMEOUT: "a tool did not return within its time bound (fed back as an error; the "
    "environment takes no further call in that trial)",
    LOOP_EMPTY_TURN: "a loop turn whose ground truth calls got no call from the model",
    LOOP_STATE_MISMATCH: "the state after a loop turn differs from the state the ground "
    "truth leaves",
    LOOP_RESULT_MISSING: "a ground-truth result of a loop turn is not among the results of "
    "the model's calls so far",
    LOOP_NOT_REACHED: "the conversation ended before a loop turn",
    LOOP_STEP_LIMIT: "a loop turn still called at its step limit",
}
