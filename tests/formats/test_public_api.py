"""The library surface an application imports: ``toolbench`` and ``toolbench.formats``."""

from __future__ import annotations

import subprocess
import sys

import toolbench
import toolbench.formats as formats


def test_every_formats_name_of_toolbench_is_the_formats_object() -> None:
    ours = [n for n, module in toolbench._EXPORTS.items() if module == "toolbench.formats"]
    assert len(ours) >= 18
    for name in ours:
        assert name in formats.__all__, name
        assert getattr(toolbench, name) is getattr(formats, name), name


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        _ = toolbench.no_such_name  # type: ignore[attr-defined]
    except AttributeError as exc:
        assert str(exc) == "module 'toolbench' has no attribute 'no_such_name'"
    else:  # pragma: no cover - the check must be able to fail
        raise AssertionError("no AttributeError")


def test_parse_a_reply_and_stream_it_through_the_public_names() -> None:
    tools = [toolbench.ToolDef(name="get_weather", parameters={
        "type": "object", "properties": {"city": {"type": "string"}}})]  # fmt: skip
    text = 'Checking.<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    fmt = toolbench.get_format("xml")
    whole = fmt.parse(text, tools)
    assert [(c.name, c.arguments) for c in whole.calls] == [("get_weather", {"city": "Paris"})]
    reader = fmt.reader(tools)
    kinds = [e.kind for k in range(0, len(text), 5) for e in reader.feed(text[k : k + 5])]
    kinds += [e.kind for e in reader.close()]
    assert "call_complete" in kinds
    assert reader.result == whole
    assert toolbench.detect_format("ollama/qwen3-coder:30b").format == "qwen3-coder"


def test_importing_the_library_loads_no_provider_or_report_stack() -> None:
    code = (
        "import sys, toolbench; toolbench.get_format('xml'); toolbench.detect_format('x')\n"
        "print(sorted(m for m in ('litellm', 'pandas', 'matplotlib', 'vcr', 'pyarrow', 'httpx')"
        " if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
