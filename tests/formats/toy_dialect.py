"""A dialect that exists only in the tests: the test of the format registry's design.

Its module, its test table (``CONTRACT``, ``CASES``, ``VECTORS``, declared by the class
as its ``test_cases``) and one entry point are all a new dialect needs
(``test_plugin_dialect.py`` adds the entry point): ``formats list``, ``formats detect``,
native dialect leakage, the conformance run, the docs table, the contract test and the
stream tests then pick it up from what the class declares. The syntax is made up:
``<<CALL>>name {json}<<END>>``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from toolbench.plugin import (
    CallCollector,
    Cutter,
    DialectFormat,
    NamePattern,
    ParseResult,
    Requirements,
    ShotsOptions,
    ToolDef,
    loads_strict,
    tidy,
)

OPEN, CLOSE = "<<CALL>>", "<<END>>"
_CALL = re.compile(r"<<CALL>>([\w.-]++) ([^<]*+)<<END>>")


class Toy(DialectFormat):
    name = "toy"
    description = "A test-only dialect: <<CALL>>name {json}<<END>>."
    name_patterns = (NamePattern(5, "toy", "Toy models write <<CALL>> blocks"),)
    template_tokens = ((OPEN,),)
    template_rank = 1
    conformance_family = "toy"
    leak_rank = 0
    test_cases = "toy_dialect"
    literal_markers = (OPEN, CLOSE)
    call_openers = (OPEN,)
    markers = (re.compile(re.escape(OPEN)),)

    def instructions(self, tools: Sequence[ToolDef]) -> str:
        return "Call a tool by writing <<CALL>>name {arguments as JSON}<<END>>."

    @staticmethod
    def call_text(name: str, arguments: dict[str, Any]) -> str:
        return f"{OPEN}{name} {json.dumps(arguments)}{CLOSE}"

    @staticmethod
    def result_text(name: str, result: str) -> str:
        return f"<<RESULT {name}>>{result}"

    def _parse(self, text: str, tools: Sequence[ToolDef] | None) -> ParseResult:
        col = CallCollector()
        cuts = Cutter(text)
        for m in _CALL.finditer(text):
            got = loads_strict(m.group(2))
            col.add_object(
                {"name": m.group(1), "arguments": got.value if got.ok else m.group(2)},
                name_keys=("name",),
                where=OPEN,
            )
            cuts.cut(m.start(), m.end())
        raw = tidy(cuts.finish())
        return col.result(content=self._clean(raw), raw_content=raw, reasoning=None)


CONTRACT = (ShotsOptions, Requirements())
"""Its contract row (options model, requirements), which the contract test holds it to."""

# (id, reply, calls, content): the dialect's own test table
CASES: list[tuple[str, str, list[tuple[str, dict[str, Any]]], str]] = [
    ("one", '<<CALL>>get_weather {"city": "Paris"}<<END>>', [("get_weather", {"city": "Paris"})],
     ""),
    ("prose", "Let me see. <<CALL>>search {}<<END>>", [("search", {})], "Let me see."),
    ("none", "No call here.", [], "No call here."),
    ("unclosed", "Wait <<CALL>>search {", [], "Wait search {"),
]  # fmt: skip

# Its conformance vectors, in the corpus' schema (made up, as the syntax is).
VECTORS: list[dict[str, Any]] = [
    {
        "id": f"toy::{n}",
        "source": "tests/formats/toy_dialect.py",
        "license": "MIT",
        "format": "toy",
        "model_output": reply,
        "expected_calls": [{"name": c, "arguments": a} for c, a in calls],
        "expected_content": content,
        "content_specified": True,
    }
    for n, (_, reply, calls, content) in enumerate(CASES)
]
