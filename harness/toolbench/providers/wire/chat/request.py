"""The HTTP request the sender sends for an OpenAI chat request: what an older cassette's
exchange is matched by on a replay at the boundary (newer ones by toolbench's own key).

The request itself is built for every kind by :mod:`toolbench.providers.turn_request`: the
chat request is what every format renders and every kind takes.
"""

from __future__ import annotations

from typing import Any

from toolbench.cassettes import boundary
from toolbench.providers.capabilities import provider_of
from toolbench.providers.model_api import Endpoint, WireRequest


def wire_request(
    endpoint: Endpoint, request: dict[str, Any], own_server: bool
) -> WireRequest | None:
    """What the OpenAI SDK sends (LiteLLM's OpenAI route); None for a provider whose
    request LiteLLM transforms. A server of toolbench's own is ``openai/<alias>`` at the
    endpoint's base (no LiteLLM table asked)."""
    if own_server:
        provider, _, name = endpoint.model.partition("/")
        return boundary.wire_request(name, provider, endpoint.api_base, request)
    try:
        name, provider = provider_of(endpoint.model, endpoint.api_base)
    except Exception:
        return None
    return boundary.wire_request(name, provider, endpoint.api_base, request)
