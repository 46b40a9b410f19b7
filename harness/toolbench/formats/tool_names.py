"""Tool names as providers' function-calling APIs accept them, and back.

A scenario names its tools as the application does: MCP servers namespace theirs
(``github.create_issue``, ``fs/read_file``), OpenAPI-derived tools keep dotted operation
ids, BFCL's functions are ``math.gcd``. Prompted formats show those names to the model as
they are. Providers' tool APIs do not all take them: OpenAI's function names must match
``^[a-zA-Z0-9_-]{1,64}$`` and Anthropic's the same; Gemini takes dots and colons but
not slashes. The ``native`` format therefore sends every name in the set all of them
accept, mapped one character at a time (each other character becomes ``_``), and maps
the calls that come back to the scenario's names, so scoring, scripted results and
reports keep the real names. The mapping is recorded on each trial (the format's notes).

A mapping that cannot be undone (two tools that become the same name) or a name longer
than providers take is a scenario the native format cannot run: it is refused at plan
time, naming the scenario and the tool, rather than sent to be refused or misread.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from toolbench.tools import ToolDef

MAX_LENGTH = 64
"""Longest function name OpenAI and Anthropic accept."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def provider_safe(name: str) -> str:
    """``name`` with each character outside ``[A-Za-z0-9_-]`` written as ``_``."""
    return _UNSAFE.sub("_", name)


@dataclass(frozen=True)
class NameMap:
    """The names that change on their way to the provider, both ways."""

    sent: dict[str, str] = field(default_factory=dict)
    """Scenario name -> the name the provider is given (only names that change)."""
    back: dict[str, str] = field(default_factory=dict)
    """Provider name -> scenario name (only names that change)."""

    def to_provider(self, name: str) -> str:
        return self.sent.get(name, name)

    def from_provider(self, name: str) -> str:
        """A call's name as the scenario knows it; a name never sent passes as it is."""
        return self.back.get(name, name)

    def notes(self) -> list[str]:
        """One line per renamed tool, as recorded on the trial."""
        return [f"native: tool '{a}' sent as '{b}'" for a, b in self.sent.items()]


def name_map(tools: Sequence[ToolDef]) -> NameMap:
    """The renaming for ``tools`` (names that are already safe are left out)."""
    sent = {t.name: provider_safe(t.name) for t in tools}
    sent = {a: b for a, b in sent.items() if a != b}
    return NameMap(sent=sent, back={b: a for a, b in sent.items()})


def name_problem(tools: Sequence[ToolDef]) -> str | None:
    """Why ``tools`` cannot be offered through a provider's tool API under safe names
    (a clash after renaming, a name too long); None when they can."""
    owner: dict[str, str] = {}
    for t in tools:
        safe = provider_safe(t.name)
        if len(safe) > MAX_LENGTH:
            return (
                f"tool '{t.name}': name of {len(safe)} characters; provider tool APIs "
                f"accept at most {MAX_LENGTH}"
            )
        if safe in owner:
            return (
                f"tools '{owner[safe]}' and '{t.name}' both become '{safe}' in the "
                "provider-safe form ([A-Za-z0-9_-]) native sends"
            )
        owner[safe] = t.name
    return None
