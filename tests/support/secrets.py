"""Test helpers around the registry of secrets (:func:`toolbench.redaction.register_secret`).

A process of toolbench starts with no registered secret and never needs to forget one;
tests that register secrets start each case the way a new process would.
"""

from __future__ import annotations

from toolbench import redaction


def forget_registered_secrets() -> None:
    """Forget what :func:`~toolbench.redaction.register_secret` was given."""
    redaction._registered.clear()
