"""The OpenAI Responses API (``native:api=responses``): the request shaped from the chat
request every format renders (:mod:`.request`) and its replies read, whole or as typed
stream events (:mod:`.reader`)."""

from __future__ import annotations

from toolbench.providers.wire.responses.reader import assemble as assemble
from toolbench.providers.wire.responses.reader import speaks as speaks

name = "responses"
