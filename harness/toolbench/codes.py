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

# outcomes that are not model failures
INFRA_ERROR = "infra.error"
UNSUPPORTED = "provider.unsupported"
CASSETTE_MISSING = "cassette.missing"

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
    CALL_WRONG_TOOL: "the expected tool was not the one called",
    CALL_MISSING: "an expected call was not made",
    CALL_EXTRA: "more calls were made than expected",
    CALL_WRONG_ORDER: "the calls came in the wrong order",
    CALL_UNEXPECTED: "a call was made where the scenario wanted a text answer",
    ARGS_MISSING_REQUIRED: "an expected argument is missing",
    ARGS_MISMATCH: "an argument's value does not match",
    ARGS_UNEXPECTED: "an argument was given that the scenario does not accept",
    ARGS_SCHEMA_INVALID: "the arguments do not validate against the tool's JSON Schema",
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
    INFRA_ERROR: "transport failure after retries (not a model failure)",
    UNSUPPORTED: "the provider cannot do what the format needs",
    CASSETTE_MISSING: "replay-only run found no cassette for the trial",
}
