"""The one conversation engine: render -> reply -> parse -> scripted results -> continue.

The runner drives it with a provider, the tests with hand-written replies; both get the
same turns, limits and retries (:mod:`toolbench.engine.conversation`).
"""

from toolbench.engine.conversation import (
    Complete,
    Conversation,
    Exchange,
    converse,
    effective_settings,
)

__all__ = ["Complete", "Conversation", "Exchange", "converse", "effective_settings"]
