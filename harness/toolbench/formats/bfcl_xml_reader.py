"""Reading BFCL's XML call shapes out of a reply, for ``prompt-xml``.

BFCL v4 asks for calls in one of two XML return formats
(``bfcl_eval/constants/default_prompts.py``), both one ``<functions>`` block::

    verbose: <functions><function name="f"><params>
                 <param name="a" value="1" type="integer"/></params></function></functions>
    concise: <functions><function name="f">
                 <param name="a" type="integer">1</param></function></functions>

BFCL reads them with ``xml.etree`` (``model_handler/parser/xml_parser.py``): one
malformed byte and the whole reply is lost, and a value is typed by its ``type``
attribute (``ast.literal_eval`` for arrays and dicts). This reader takes the same shapes
but reads what a small model writes around them, never raising and left to right once:

* a tag ends at its first ``>`` outside quotes; after one quote that pairs with nothing
  the rest of the reply is read at the first ``>`` alone (one long scan per reply, not
  one per tag), so the cost stays linear;
* values are unescaped (XML's five entities and character references) and typed as BFCL
  types them, then by the tool's schema when the ``type`` attribute is missing or its
  reading fails (that second reading is lenient);
* leniencies, each a reason the caller reports once with ``call.lenient``: the other
  form's value shape (an attribute value in ``concise``, a text value in ``verbose``,
  ``<params>`` in ``concise``), a ``<function>`` without ``<functions>`` around it, a
  ``<function>`` or ``<functions>`` left unclosed before the next or the end of a block.
  The reply ending inside a ``<function>`` is ``call.truncated`` (no call).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolbench import codes
from toolbench.formats.dialect import MAX_CALLS
from toolbench.formats.jsonscan import loads_strict
from toolbench.formats.prompt_axes import XmlForm
from toolbench.formats.pycalls import python_literal

BLOCK_OPEN = "<functions>"
BLOCK_CLOSE = "</functions>"
MAX_PARAMS = 128
"""Parameters read per call: past it, the rest of the call is not read."""

_TOKEN = re.compile(r"<(/?)(functions|function|params|param)(?![\w:.-])")
_SPACE = re.compile(r"\s*+")
_QUOTED_END = re.compile(r"""(?:[^>"']++|"[^"]*+"|'[^']*+')*+""")
_ATTR = re.compile(r"""([^\s=/<>"']{1,64})\s*+=\s*+(?:"([^"]*+)"|'([^']*+)'|([^\s>"'/]++))""")
_ENTITY = re.compile(r"&(?:(lt|gt|amp|quot|apos)|#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6}));")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}

OTHER_VALUE = {
    "verbose": "a value written as the element's text (concise_xml's shape)",
    "concise": "a value written in a value attribute (verbose_xml's shape)",
}
CONCISE_PARAMS = "parameters inside <params> (verbose_xml's shape)"
NO_BLOCK = "a <function> without <functions> around it"
UNCLOSED_FUNCTION = "a <function> without its </function>"
UNCLOSED_BLOCK = "a <functions> block without its </functions>"
BAD_TYPE = "a value that does not read as its declared type, typed by the schema"


def unescape(text: str) -> str:
    """XML's entities and character references replaced (others left as written)."""
    if "&" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        if m.group(1):
            return _NAMED[m.group(1)]
        code = int(m.group(2)) if m.group(2) else int(m.group(3), 16)
        return chr(code) if 0 < code <= 0x10FFFF else m.group(0)

    return _ENTITY.sub(one, text)


def escape(text: str, *, attribute: bool) -> str:
    out = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return out.replace('"', "&quot;") if attribute else out


_NO_READING = object()


def typed(raw: str, type_name: str) -> Any:
    """``raw`` read as BFCL's ``convert_value_by_type`` reads it, or a sentinel when it
    does not read as that type (BFCL would raise)."""
    t = type_name.strip().lower()
    text = raw.strip()
    try:
        if t in ("string", "str"):
            return raw
        if t in ("integer", "int"):
            return int(text)
        if t in ("float", "number"):
            return float(text)
        if t in ("boolean", "bool"):
            return text.lower() == "true" if text.lower() in ("true", "false") else _NO_READING
        if t in ("null", "none"):
            return None if text.lower() in ("", "null", "none") else _NO_READING
        if t in ("array", "tuple", "list", "object", "dict"):
            got = loads_strict(text)
            value = got.value if got.ok else None
            if not got.ok:
                ok, value = python_literal(text)
                if not ok:
                    return _NO_READING
            want: type = dict if t in ("object", "dict") else list
            return value if isinstance(value, want) else _NO_READING
    except (ValueError, OverflowError):  # int() of 5,000 digits, float("x")
        return _NO_READING
    return _NO_READING


Schema = Callable[[str, str, str], Any]
"""``(tool, parameter, raw text) -> value``: the schema's reading of an untyped value."""


@dataclass
class XmlCall:
    name: str | None
    arguments: dict[str, Any] = field(default_factory=dict)
    lenient: list[str] = field(default_factory=list)


@dataclass
class Block:
    """One ``<functions>`` block (or a run of bare ``<function>`` elements): where to
    cut it, its calls, its failures (code, message) and its leniencies."""

    start: int
    end: int
    calls: list[XmlCall] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    lenient: list[str] = field(default_factory=list)


@dataclass
class _Tag:
    end: int
    attrs: dict[str, str]
    closing: bool
    empty: bool


class Reader:
    """Reads every block of one reply, left to right."""

    def __init__(self, text: str, form: XmlForm, schema: Schema) -> None:
        self.text = text
        self.form = form
        self.schema = schema
        self.quotes_ok = True
        self.calls = 0
        self.open = False
        """A ``<function>`` is open (its ``</function>`` not yet read)."""

    def tag(self, start: int, name_end: int) -> _Tag | None:
        """The tag whose name ends at ``name_end``; None: the reply ends inside it."""
        text = self.text
        if self.quotes_ok:
            m = _QUOTED_END.match(text, name_end)
            end = m.end() if m is not None else name_end
            if end >= len(text) or text[end] != ">":
                self.quotes_ok = False  # a quote pairs with nothing: '>' alone from here
        if not self.quotes_ok:
            end = text.find(">", name_end)
            if end < 0:
                return None
        inner = text[name_end:end]
        attrs: dict[str, str] = {}
        for a in _ATTR.finditer(inner):
            value = a.group(2) if a.group(2) is not None else a.group(3)
            attrs.setdefault(a.group(1), unescape(value if value is not None else a.group(4)))
        closing = text[start + 1] == "/"
        return _Tag(end + 1, attrs, closing, inner.rstrip().endswith("/"))

    def blocks(self) -> list[Block]:
        out: list[Block] = []
        pos = 0
        while self.calls < MAX_CALLS:
            m = _TOKEN.search(self.text, pos)
            if m is None:
                break
            if m.group(1) or m.group(2) not in ("functions", "function"):
                pos = m.end()  # a closer or a <param> outside any block: text
                continue
            block = self.block(m)
            if block is not None and block.end == block.start:
                break  # an empty block read to the end: no call follows
            if block is None:
                pos = m.end()
                continue
            out.append(block)
            if block.end <= pos:
                break
            pos = block.end
        return out

    def block(self, opener: re.Match[str]) -> Block | None:
        """The block opened at ``opener``; None when it is no call syntax after all."""
        bare = opener.group(2) == "function"
        first = self.tag(opener.start(), opener.end())
        if first is None:
            if bare and "name" not in self.text[opener.end() :]:
                return None
            block = Block(opener.start(), len(self.text))
            block.failures.append((codes.CALL_TRUNCATED, "the reply ended inside a tag"))
            return block
        if (bare and "name" not in first.attrs) or (first.empty and not bare):
            return None  # "<function>" or "<functions/>" in prose, not a call
        block = Block(opener.start(), first.end)
        if bare:
            block.lenient.append(NO_BLOCK)
            self.start_function(block, first)
            pos = first.end
            if first.empty:
                return self.after_bare(block, pos)
        else:
            pos = first.end
        return self.body(block, pos, bare)

    def start_function(self, block: Block, tag: _Tag) -> None:
        block.calls.append(XmlCall(tag.attrs.get("name")))
        self.calls += 1
        self.open = not tag.empty

    def body(self, block: Block, pos: int, bare: bool) -> Block:
        text = self.text
        while True:
            m = _TOKEN.search(text, pos)
            if m is None:
                return self.ended(block)
            closing, kind = m.group(1), m.group(2)
            if closing and kind in ("params", "param"):
                pos = m.end()
                continue
            tag = self.tag(m.start(), m.end())
            if tag is None:
                return self.ended(block)
            if kind == "functions":
                if closing:
                    self.close_function(block)
                    block.end = tag.end
                    return block
                pos = tag.end  # a doubled <functions>: read on
            elif kind == "function":
                if closing:
                    self.open = False
                    pos = block.end = tag.end
                    if bare:
                        return self.after_bare(block, pos)
                    continue
                if self.open:
                    self.close_function(block)
                if self.calls >= MAX_CALLS:
                    block.failures.append((codes.CALL_BAD_SHAPE, f"more than {MAX_CALLS} calls"))
                    block.end = len(text)
                    return block
                self.start_function(block, tag)
                pos = block.end = tag.end
            elif kind == "params":
                if self.form == "concise" and self.open:
                    _add(block.calls[-1].lenient, CONCISE_PARAMS)
                pos = tag.end
            else:
                got = self.param(block, tag)
                if got is None:
                    return self.ended(block)
                pos = block.end = got

    def after_bare(self, block: Block, pos: int) -> Block:
        """A run of bare ``<function>`` elements goes on only while one follows."""
        at = _SPACE.match(self.text, pos)
        nxt = at.end() if at is not None else pos
        m = _TOKEN.match(self.text, nxt)
        if m is not None and not m.group(1) and m.group(2) == "function":
            tag = self.tag(m.start(), m.end())
            if tag is None:
                return self.ended(block)
            if self.calls >= MAX_CALLS:
                return block
            self.start_function(block, tag)
            block.end = tag.end
            return self.after_bare(block, tag.end) if tag.empty else self.body(block, tag.end, True)
        return block

    def close_function(self, block: Block) -> None:
        if self.open and block.calls:
            _add(block.calls[-1].lenient, UNCLOSED_FUNCTION)
        self.open = False

    def ended(self, block: Block) -> Block:
        """The reply ended inside the block: inside a ``<function>``, it is cut off; after
        its last element, the block ends there (what follows is text after the calls)."""
        if self.open and block.calls:
            block.calls.pop()
            block.failures.append((codes.CALL_TRUNCATED, "the reply ended inside a <function>"))
            self.open = False
            block.end = len(self.text)
        elif block.calls:
            _add(block.lenient, UNCLOSED_BLOCK)
        else:  # "<functions>" with no call after it: a mention, not a call
            block.end = block.start
        return block

    def param(self, block: Block, tag: _Tag) -> int | None:
        """Read one ``<param>`` into the open call; where reading goes on (None: the
        reply ended inside the value)."""
        end = tag.end
        text_value: str | None = None
        if not tag.empty:
            close = self.text.find("</param>", tag.end)
            if close < 0:
                return None
            text_value = self.text[tag.end : close]
            end = close + len("</param>")
        if not self.open or not block.calls:
            return end  # a <param> outside any <function>: not read
        call = block.calls[-1]
        name = tag.attrs.get("name")
        if name is None or len(call.arguments) >= MAX_PARAMS:
            return end
        if "value" in tag.attrs and (self.form == "verbose" or not (text_value or "").strip()):
            raw = tag.attrs["value"]
            if self.form == "concise":
                _add(call.lenient, OTHER_VALUE["concise"])
        else:
            raw = unescape(text_value or "").strip()
            if self.form == "verbose" and text_value is not None and text_value.strip():
                _add(call.lenient, OTHER_VALUE["verbose"])
        declared = tag.attrs.get("type")
        value = typed(raw, declared) if declared is not None else _NO_READING
        if value is _NO_READING:
            if declared is not None:
                _add(call.lenient, BAD_TYPE)
            value = self.schema(call.name or "", name, raw)
        call.arguments[name] = value
        return end


def _add(reasons: list[str], reason: str) -> None:
    if reason not in reasons:
        reasons.append(reason)


def type_name(value: Any) -> str:
    """The ``type`` attribute BFCL's prompt allows for a value (``null`` for None)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "dict"
    return "string"


def value_text(value: Any) -> str:
    """A value as the call writes it (before escaping): text as it is, JSON otherwise."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)
