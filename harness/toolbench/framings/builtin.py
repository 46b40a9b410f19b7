"""toolbench's own framings, in the order a first line is tried against them (one entry
point, as for the other registries)."""

from __future__ import annotations

from toolbench.framings.aws_eventstream import EVENTSTREAM
from toolbench.framings.lines import LINES
from toolbench.framings.ndjson import NDJSON
from toolbench.framings.sse import SSE

FRAMINGS = (SSE, NDJSON, EVENTSTREAM, LINES)
