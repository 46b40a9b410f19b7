"""Cohere v2 chat (``POST /v2/chat``): its typed stream events, read here because LiteLLM
misreads them (:mod:`.reader`)."""

from __future__ import annotations

from toolbench.providers.wire.cohere.reader import assemble as assemble
from toolbench.providers.wire.cohere.reader import speaks as speaks

name = "cohere"
