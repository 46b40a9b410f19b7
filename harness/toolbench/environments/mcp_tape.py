"""An MCP server's exchanges in its trial's cassette: kept when live, played on replay.

The trial's cassette (:class:`~toolbench.cassettes.trial.TrialCassette`) is the one the
trial's context routes its HTTP to; a server's exchanges go into its recording's
``tools`` (:class:`~toolbench.cassettes.recording.ToolExchange`), redacted as they are
kept (the secrets known now, the values of the server's ``env`` among them), and are
saved with the model's exchanges when the trial ends. Replayed (``--record none``, or
``new`` with the server's exchanges already recorded), the recorded ``tools/list``
gives the tools and each ``tools/call`` is answered by the next recorded call of that
server when it asks the same (name and arguments, as recorded): no server is started.
"""

from __future__ import annotations

from typing import Any

from toolbench.cassettes import route
from toolbench.cassettes.recording import ToolExchange
from toolbench.cassettes.trial import TrialCassette
from toolbench.redaction import redact_data, secret_values


def trial_cassette() -> TrialCassette | None:
    """The cassette of the trial running in this context (None: outside a trial, as in a
    test that opens an environment by itself)."""
    current = route._current.get()  # the route the trial's cassette set for its context
    return current if isinstance(current, TrialCassette) else None


class Tape:
    """One server's exchanges in one trial."""

    def __init__(self, server: str, cassette: TrialCassette | None) -> None:
        self.server, self.cassette = server, cassette
        recorded: list[ToolExchange] = []
        if cassette is not None and cassette.record != "all":
            recorded = [ex for ex in cassette.data.tools or [] if ex.server == server]
        self.recorded = recorded
        self._next = 0

    @property
    def replaying(self) -> bool:
        """The server's exchanges are recorded: the trial is answered from them."""
        return bool(self.recorded)

    def listed(self) -> list[dict[str, Any]] | None:
        """The tools of the recorded ``tools/list`` (None: none recorded)."""
        for ex in self.recorded:
            if ex.method == "tools/list" and isinstance(ex.result, dict):
                tools = ex.result.get("tools")
                return list(tools) if isinstance(tools, list) else None
        return None

    def play(self, method: str, params: Any) -> ToolExchange | None:
        """The next recorded ``method`` exchange after those played, when it asked what
        ``params`` ask (redacted as it was); None: not recorded."""
        asked = redact_data(params, secret_values())
        for i in range(self._next, len(self.recorded)):
            ex = self.recorded[i]
            if ex.method != method:
                continue
            if ex.params != asked:
                return None
            self._next = i + 1
            return ex
        return None

    def keep(self, exchange: ToolExchange) -> None:
        """Add a live exchange to the trial's recording, redacted."""
        if self.cassette is None:
            return
        data = redact_data(exchange.model_dump(mode="json"), secret_values())
        kept = ToolExchange.model_validate(data)
        recording = self.cassette.data
        recording.tools = [*(recording.tools or []), kept]
        self.cassette.dirty = True

    def forget(self) -> None:
        """Drop this server's recorded exchanges (recorded again live, from the start)."""
        self.recorded, self._next = [], 0
        if self.cassette is not None and self.cassette.data.tools is not None:
            kept = [ex for ex in self.cassette.data.tools if ex.server != self.server]
            self.cassette.data.tools = kept or None
            self.cassette.dirty = True
