"""The values of ``toolbench run``'s choice options, each a type and its tuple.

A leaf, so that the command line (its help and its checks) and the layers that act on a
mode (the cassettes record and replay by them) read one list each, and checking an option
loads nothing a run needs.
"""

from __future__ import annotations

from typing import Literal, get_args

RecordOption = Literal["none", "new", "all"]
"""``--record``: none replays only; new records what is missing; all records again."""
ReplayMode = Literal["boundary", "full"]
"""``--replay``: a recorded exchange answered at the provider boundary, or re-derived
through LiteLLM in full (to check a LiteLLM upgrade; the results agree)."""
StreamMode = Literal["off", "on", "both"]
"""``--stream``: as the specs say, every format streamed, or each both ways."""
DisplayPolicy = Literal["careful", "naive"]
"""``--display``: the display policy streamed text trials are measured under."""

RECORD_MODES: tuple[RecordOption, ...] = get_args(RecordOption)
REPLAY_MODES: tuple[ReplayMode, ...] = get_args(ReplayMode)
STREAM_MODES: tuple[StreamMode, ...] = get_args(StreamMode)
DISPLAY_POLICIES: tuple[DisplayPolicy, ...] = get_args(DisplayPolicy)
