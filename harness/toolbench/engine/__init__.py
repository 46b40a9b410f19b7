"""The one conversation engine: render -> reply -> parse -> scripted results -> continue.

The runner drives it with a provider, the tests with hand-written replies; both get the
same turns, limits and retries (:mod:`toolbench.engine.conversation`).
"""

from toolbench.engine.conversation import (
    Conversation,
    SendTurn,
    TurnReply,
    converse,
    effective_settings,
)

__all__ = ["Conversation", "SendTurn", "TurnReply", "converse", "effective_settings"]
