"""The format-sensitivity axes of the prompted formats (``prompt-json:doc=python,tag=on``).

BFCL v4 measures how a prompted model's accuracy moves with the prompt's shape alone; the
axes here let toolbench measure the same thing on any model, native-capable ones
included, as options of the formats it already has. One table (:data:`AXES`) names each
axis, its values and BFCL's name for it; the formats take them through
:class:`AxisOptions` and render with :func:`compose` and :func:`tool_doc`.

Every axis's default renders the format's prompt exactly as it was before the axes
existed (recorded cassettes match on the request body), so the default is not always
BFCL's: ``doc=text`` is toolbench's own prose list of the tools and ``style=own`` the
format's own wording. BFCL's fifth axis, the return format, is the format itself
(``pythonic`` is BFCL's ``python``, ``prompt-json`` a JSON object per call), except for
BFCL's two XML return formats: they are one format, ``prompt-xml``, whose ``form`` axis
picks ``verbose`` or ``concise`` (so a grid over them pairs its cells on one base).
docs/formats.md ("Format sensitivity") says where toolbench's prompts follow BFCL's
templates (``bfcl_eval/constants/default_prompts.py``) and where they differ.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ConfigDict

from toolbench import codes
from toolbench.formats.base import ParseIssue, ParseResult, ShotsOptions
from toolbench.formats.describe import describe_tools
from toolbench.tools import ToolDef

DocFormat = Literal["text", "json", "python", "xml"]
TagMode = Literal["off", "on"]
Markup = Literal["plain", "markdown"]
Style = Literal["own", "classic", "experimental"]
XmlForm = Literal["verbose", "concise"]


@dataclass(frozen=True)
class Axis:
    """One axis: its option name, its values (the first is the usual default) and BFCL's."""

    name: str
    values: tuple[str, ...]
    bfcl: str
    meaning: str


AXES: tuple[Axis, ...] = (
    Axis("doc", ("text", "json", "python", "xml"), "func_doc_fmt",
         "how the tools are documented in the system prompt (text: toolbench's prose list)"),
    Axis("form", ("verbose", "concise"), "ret_fmt",
         "prompt-xml only: BFCL's verbose_xml (values in attributes) or concise_xml (as text)"),
    Axis("markup", ("plain", "markdown"), "prompt_fmt",
         "the system prompt as plain paragraphs or under Markdown headings"),
    Axis("style", ("own", "classic", "experimental"), "style",
         "the prompt's wording: the format's own, or BFCL's classic or experimental"),
    Axis("tag", ("off", "on"), "tool_call_tag",
         "calls asked inside <TOOLCALL>...</TOOLCALL> (and read there)"),
)  # fmt: skip
"""Every axis, in the order a canonical spec writes options (alphabetical, as
:attr:`~toolbench.formats.base.Format.spec` writes every option)."""
AXIS_NAMES: tuple[str, ...] = tuple(a.name for a in AXES)


def axis(name: str) -> Axis | None:
    return next((a for a in AXES if a.name == name), None)


class StyleOptions(ShotsOptions):
    """``shots`` plus the axes of a format whose call syntax has delimiters of its own
    (ReAct's labels), so no tool-call tag: ``doc``, ``markup``, ``style``. A format whose
    own default differs (``pythonic`` documents its tools as JSON) overrides that
    field's default in a subclass."""

    model_config = ConfigDict(extra="forbid")

    doc: DocFormat = "text"
    markup: Markup = "plain"
    style: Style = "own"


class AxisOptions(StyleOptions):
    """All four axes: the three of :class:`StyleOptions` and ``tag``."""

    model_config = ConfigDict(extra="forbid")

    tag: TagMode = "off"


TAG_OPEN = "<TOOLCALL>"
TAG_CLOSE = "</TOOLCALL>"
"""BFCL's tool-call tag, word for word."""


def wrap(call: str, tag: TagMode) -> str:
    """A call (or the call shape the prompt shows) as the ``tag`` axis asks for it."""
    return f"{TAG_OPEN}{call}{TAG_CLOSE}" if tag == "on" else call


def untag(text: str) -> tuple[str, bool]:
    """``text`` with every tool-call tag replaced by a newline (a removal never splices a
    new tag: the newline is part of none), and whether there was one."""
    if TAG_OPEN not in text and TAG_CLOSE not in text:
        return text, False
    return text.replace(TAG_OPEN, "\n").replace(TAG_CLOSE, "\n"), True


OUTSIDE_TAG = f"calls written outside the {TAG_OPEN} tag the prompt asked for"


def read_tagged(text: str, parse: Callable[[str], ParseResult]) -> ParseResult:
    """Read a reply of a ``tag=on`` format: the calls inside the tags, read by the
    format's own parser with the tags taken out; calls found where no tag is are read
    too (as BFCL's checker would not), but ``repaired`` with ``call.lenient``, so the
    tag's absence shows in the strict rate instead of losing the calls."""
    inner, tagged = untag(text)
    result = parse(inner)
    if tagged or not result.calls:
        return result
    calls = [c.model_copy(update={"repaired": True}) for c in result.calls]
    issue = ParseIssue(code=codes.CALL_LENIENT, message=OUTSIDE_TAG)
    status = "repaired" if result.status == "strict" else result.status
    return result.model_copy(
        update={"calls": calls, "errors": [*result.errors, issue], "status": status}
    )


# --- the tools' documentation (BFCL's func_doc_fmt) --------------------------------------

_MAX_DEPTH = 4
"""Nested parameters documented this deep (a hostile schema cannot blow up the prompt)."""
_PY_TYPES = {"string": "str", "number": "float", "integer": "int", "boolean": "bool"}


def _flat(tool: ToolDef) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "parameters": tool.parameters}


def _props(schema: Any) -> dict[str, Any]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


def _meta(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _py_type(meta: dict[str, Any], depth: int = 0) -> str:
    t = meta.get("type", "string")
    if isinstance(t, str) and t in _PY_TYPES:
        return _PY_TYPES[t]
    items = meta.get("items")
    if t in ("array", "list", "tuple") and isinstance(items, dict) and depth < _MAX_DEPTH:
        return f"list[{_py_type(items, depth + 1)}]"
    extra = meta.get("additionalProperties")
    if t in ("object", "dict"):
        if isinstance(extra, dict) and depth < _MAX_DEPTH:
            return f"dict[str, {_py_type(extra, depth + 1)}]"
        return "dict"
    return str(t)


def _with_enum(meta: dict[str, Any]) -> str:
    desc = str(meta.get("description", ""))
    return desc + (f" Enum values: {meta['enum']}." if "enum" in meta else "")


def _python_param(name: str, meta: dict[str, Any], depth: int) -> list[str]:
    indent = " " * 8 + " " * 4 * depth
    default = f", default={meta['default']!r}" if "default" in meta else ""
    lines = [f"{indent}{name} ({_py_type(meta)}{default}): {_with_enum(meta)}\n"]
    if depth < _MAX_DEPTH:
        for child, sub in _props(meta).items():
            lines.extend(_python_param(str(child), _meta(sub), depth + 1))
    return lines


def _python_doc(tools: Sequence[ToolDef]) -> str:
    """BFCL's ``_generate_function_doc_python``: a docstring per function."""
    docs: list[str] = []
    for tool in tools:
        lines = [f"# Function: {tool.name}\n", '    """\n', f"    {tool.description}\n\n"]
        props = _props(tool.parameters)
        if props:
            lines.append("    Args:\n")
            for name, sub in props.items():
                lines.extend(_python_param(str(name), _meta(sub), 0))
        lines.append('    """\n')
        docs.extend(("".join(lines), "\n"))
    return "\n\n".join(docs)


def _xml_type(meta: dict[str, Any]) -> str:
    t = str(meta.get("type", "string"))
    items, extra = meta.get("items"), meta.get("additionalProperties")
    if isinstance(items, dict) and "type" in items:
        return f"{t}[{items['type']}]"
    if isinstance(extra, dict):
        return f"{t}[{extra.get('type', 'string')}]"
    return t


def _xml_param(name: str, meta: dict[str, Any], required: Any, level: int) -> str:
    indent = " " * level * 2
    needed = "true" if not isinstance(required, list) or name in required else "false"
    attrs = f'name="{name}" type="{_xml_type(meta)}" required="{needed}"'
    if "default" in meta:
        attrs += f' default="{meta["default"]!r}"'
    parts = [f"{indent}<param {attrs}>\n", f"{indent}  <desc>{_with_enum(meta)}</desc>\n"]
    props = _props(meta)
    if props and level < 2 + 2 * _MAX_DEPTH:
        parts.append(f"{indent}  <params>\n")
        for child, sub in props.items():
            parts.append(_xml_param(str(child), _meta(sub), meta.get("required"), level + 2))
        parts.append(f"{indent}  </params>\n")
    parts.append(f"{indent}</param>\n")
    return "".join(parts)


def _xml_doc(tools: Sequence[ToolDef]) -> str:
    """BFCL's ``_generate_function_doc_xml``: a ``<function>`` element per function."""
    blocks: list[str] = []
    for tool in tools:
        required = tool.parameters.get("required") if isinstance(tool.parameters, dict) else None
        params = "".join(
            _xml_param(str(n), _meta(m), required, 2) for n, m in _props(tool.parameters).items()
        )
        blocks.append(
            f'<function name="{tool.name}">\n  <desc>{tool.description}</desc>\n'
            f"  <params>\n{params}  </params>\n</function>\n"
        )
    return "\n".join(blocks)


def tool_doc(tools: Sequence[ToolDef], doc: DocFormat) -> str:
    """The tools documented as the ``doc`` axis asks: toolbench's prose list (``text``),
    or BFCL's JSON (``json.dumps(functions, indent=4)``, non-ASCII kept as written),
    Python docstrings or XML elements."""
    if doc == "json":
        return json.dumps([_flat(t) for t in tools], ensure_ascii=False, indent=4)
    if doc == "python":
        return _python_doc(tools)
    if doc == "xml":
        return _xml_doc(tools)
    return describe_tools(tools)


# --- the system prompt's layout (BFCL's prompt_fmt and style) ----------------------------


@dataclass(frozen=True)
class PromptParts:
    """A system prompt in BFCL's five parts; a format fills them with its own wording
    (``style=own``) or takes BFCL's (:func:`bfcl_parts`)."""

    persona: str
    task: str
    call_format: str
    behaviour: str
    tools: str


@dataclass(frozen=True)
class _Wording:
    persona: str
    task: str
    no_tag: str
    with_tag: str
    behaviour: str
    tools: str


_BFCL: dict[str, _Wording] = {
    "classic": _Wording(
        "You are an expert in composing functions.",
        "You are given a question and a set of possible functions. Based on the question, you "
        "will need to make one or more function/tool calls to achieve the purpose. If none of "
        "the functions can be used, point it out. If the given question lacks the parameters "
        "required by the function, also point it out.",
        "You should only return the function calls in your response.\n\nIf you decide to "
        "invoke any of the function(s), you MUST put it in the format of {output_format}. "
        "{param_types} You SHOULD NOT include any other text in the response.",
        "You should only return the function calls in the <TOOLCALL> section. If you decide "
        "to invoke any of the function(s), you MUST put it in the format of "
        "<TOOLCALL>{output_format}</TOOLCALL>. {param_types} You SHOULD NOT include any other "
        "text in the response.",
        "At each turn, you should try your best to complete the tasks requested by the user "
        "within the current turn. Continue to output functions to call until you have "
        "fulfilled the user's request to the best of your ability. Once you have no more "
        "functions to call, the system will consider the current turn complete and proceed "
        "to the next turn or task.",
        "Here is a list of functions in {format} format that you can invoke.\n{functions}\n",
    ),
    "experimental": _Wording(
        "You are an expert in generating structured function calls.",
        "You are given a user query and a set of available functions. Your task is to produce "
        "one or more function/tool calls to fulfill the user's request. If no suitable "
        "function exists, or required parameters are missing, clearly indicate this.",
        "Respond with only the function calls.\n\nYou MUST format it exactly as "
        "{output_format}. {param_types} Do NOT include any other text.",
        "Return only the function calls enclosed in <TOOLCALL> tags.\n\nYou MUST format it "
        "exactly as <TOOLCALL>{output_format}</TOOLCALL>. {param_types} Do NOT include any "
        "other text.",
        "At every turn, aim to complete the user's tasks within that turn. Continue emitting "
        "function calls until the request is satisfied to the best of your ability. Once no "
        "more calls are needed, the system will proceed to the next turn.",
        "Below is a list of callable functions in the {format} style:\n{functions}\n",
    ),
}
"""BFCL's ``PROMPT_STYLE_TEMPLATES`` (bfcl-eval 2026.3.23), word for word."""


def bfcl_parts(
    style: Literal["classic", "experimental"],
    *,
    shape: str,
    tag: TagMode,
    doc: DocFormat,
    listing: str,
    results_note: str,
    param_types: str = "",
) -> PromptParts:
    """BFCL's wording around the format's call ``shape`` (unwrapped: BFCL's template
    writes the tag). ``results_note`` (how results come back, how to answer at the end)
    follows BFCL's multi-turn paragraph: toolbench's scenarios feed results back.
    ``param_types`` is BFCL's ``PARAM_TYPE_MAPPING`` entry (empty but for the XML forms)."""
    w = _BFCL[style]
    template = w.with_tag if tag == "on" else w.no_tag
    return PromptParts(
        persona=w.persona,
        task=w.task,
        call_format=template.format(output_format=shape, param_types=param_types),
        behaviour=f"{w.behaviour}\n\n{results_note}" if results_note else w.behaviour,
        tools=w.tools.format(format=doc, functions=listing),
    )


def compose(parts: PromptParts, markup: Markup) -> str:
    """BFCL's plaintext or Markdown layout of the five parts (``PROMPT_TEMPLATE_MAPPING``);
    an empty persona leaves no empty paragraph in Markdown."""
    if markup == "markdown":
        head = f"{parts.persona}\n\n" if parts.persona else ""
        return (
            f"{head}## Task\n{parts.task}\n\n## Tool Call Format\n{parts.call_format}\n\n"
            f"## Multi-turn Behavior\n{parts.behaviour}\n\n## Available Tools\n{parts.tools}"
        )
    # BFCL's plaintext template joins persona and task with nothing between them.
    body = (parts.call_format, parts.behaviour, parts.tools)
    return "\n\n".join((f"{parts.persona}{parts.task}", *body))
