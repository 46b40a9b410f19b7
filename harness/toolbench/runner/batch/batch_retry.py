"""Which trials a batch failed ``--resume --batch`` submits again.

A live call asks again, within the trial, after a fault that may pass (a 408, a 429, a
5xx, a lost connection, a 2xx that is no reply: :mod:`toolbench.providers.attempts`) and
never after one that will not (any other 4xx: the key, the model, the request itself).
A batch cannot ask again within the run (each ask is a batch round trip of up to a day),
so its trials are written with their typed code at once and the asking again is the
resume's: ``--resume --batch`` drops their lines and submits those requests again (the
latest line wins, as for a trial whose cassette was not kept), by the same rule:

- ``infra.batch_expired`` and ``infra.batch_missing``: the request was never answered
  (the batch ran out of time, or ended without a line for it): always again;
- ``infra.batch_failed`` and ``infra.batch_rejected``: again when the fault, as a live
  call classifies it (kept as the trial's attempt, :func:`failed_attempt`), is one a live
  call asks again after; a 400 for the request or a batch that failed its validation
  would be refused the same way, and stays.

Every other trial, a batch's or not, stays as written.
"""

from __future__ import annotations

from toolbench import codes
from toolbench.results import Attempt, TrialResult
from toolbench.runner.batch.batch_api import Failed

UNANSWERED = frozenset({codes.INFRA_BATCH_EXPIRED, codes.INFRA_BATCH_MISSING})
"""A batch's codes for a request it never answered."""
ANSWERED_WITH_A_FAULT = frozenset({codes.INFRA_BATCH_FAILED, codes.INFRA_BATCH_REJECTED})
"""A batch's codes for a request (or a batch) the provider answered with a fault."""
TRANSIENT = frozenset({
    codes.INFRA_TIMEOUT, codes.INFRA_CONNECTION, codes.INFRA_RATE_LIMITED,
    codes.INFRA_SERVER_ERROR, codes.INFRA_BAD_REPLY,
})  # fmt: skip
"""The live call's faults it asks again after (its ``Fault.retryable`` ones)."""


def failed_attempt(failed: Failed) -> Attempt:
    """The one attempt a trial the batch failed keeps: the fault as a live call would
    classify it (its ``error_code``), which decides :func:`submit_again`."""
    return Attempt(outcome="fail", error_code=failed.cause or failed.code,
                   error=failed.message[:500])  # fmt: skip


def submit_again(result: TrialResult) -> bool:
    """Whether ``--resume --batch`` submits this written trial's request again."""
    if result.error_code in UNANSWERED:
        return True
    if result.error_code not in ANSWERED_WITH_A_FAULT:
        return False
    return any(a.error_code in TRANSIENT for a in result.attempts)
