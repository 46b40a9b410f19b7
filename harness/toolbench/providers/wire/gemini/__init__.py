"""Gemini ``streamGenerateContent``: a stream whose calls arrive in parts, read here
because LiteLLM cannot (:mod:`.reader`, :mod:`.partial_args`)."""

from __future__ import annotations

from toolbench.providers.wire.gemini.reader import assemble as assemble
from toolbench.providers.wire.gemini.reader import speaks as speaks

name = "gemini"
