"""Reading one scenario or tool-set YAML file, refusing what could hang or blow up.

A scenario file is user input, possibly from someone else's repository, so reading it is
bounded before any parsing starts:

* only a regular file is opened (a FIFO named ``*.yaml`` would block ``open`` forever);
* at most :data:`MAX_FILE_BYTES` are read (the whole bundled suite is under 64 KB);
* the text must be UTF-8;
* YAML aliases are refused (a 1 KB alias bomb expands to gigabytes once serialised),
  and so are duplicate mapping keys (YAML lets the last one win silently);
* nesting is limited to :data:`MAX_DEPTH` levels (deeper input overflows the recursive
  constructor);
* a value JSON cannot hold is refused, naming its field (:func:`_not_json`): YAML's
  ``!!binary`` (bytes), ``!!set``, and timestamps (``!!timestamp``, or an unquoted
  ``2024-05-01``). A scenario is JSON data on its way to a model, a cassette and a
  results file: bytes would reach the model as ``b'...'`` text, a date would fail a
  writer far from the file that held it.

Parsing uses libyaml (``CSafeLoader``) when PyYAML was built with it: the pure-Python
parser is many times slower on a large file.
"""

from __future__ import annotations

import datetime
import os
import stat
from pathlib import Path
from typing import Any

import yaml

from toolbench.errors import ScenarioError

MAX_FILE_BYTES = 1024 * 1024
"""Largest scenario or tool-set file read (1 MiB: about 5,000 scenarios, seconds to load)."""

MAX_DEPTH = 64
"""Deepest nesting of YAML collections in one file."""

_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Refused(yaml.YAMLError):
    """A construct the scenario format does not allow, with the line it is on."""

    def __init__(self, problem: str, mark: Any) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = mark


class StrictLoader(_BaseLoader):  # type: ignore[misc]
    """A safe loader that refuses duplicate keys and merge keys.

    Aliases never reach it: :func:`_check_events` refuses them first.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[tuple[str, str]] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise _Refused("YAML merge keys (<<) are not allowed", key_node.start_mark)
            if isinstance(key_node, yaml.ScalarNode):
                key = (key_node.tag, key_node.value)
                if key in seen:
                    raise _Refused(f"duplicate key '{key_node.value}'", key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)  # type: ignore[no-any-return]


def _check_events(text: str) -> None:
    """Refuse aliases and excessive nesting from the event stream (libyaml iterates)."""
    depth = 0
    for event in yaml.parse(text, Loader=_BaseLoader):
        if isinstance(event, yaml.AliasEvent):
            raise _Refused("YAML aliases (*name) are not allowed", event.start_mark)
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise _Refused(f"nested deeper than {MAX_DEPTH} levels", event.start_mark)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def read_text(path: Path) -> str:
    """The file's text: a regular file, at most :data:`MAX_FILE_BYTES`, UTF-8."""
    try:
        info = path.stat()
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ScenarioError(f"{path}: not a regular file")
    if info.st_size > MAX_FILE_BYTES:
        raise ScenarioError(
            f"{path}: file is {info.st_size} bytes; scenario files are limited to "
            f"{MAX_FILE_BYTES} bytes"
        )
    try:
        # O_NONBLOCK: if the path was swapped for a FIFO since stat(), open cannot block.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read: {exc.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ScenarioError(f"{path}: scenario files are limited to {MAX_FILE_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(
            f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None


_NOT_JSON: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bytes, "a !!binary value"),
    (datetime.datetime, "a timestamp"),
    (datetime.date, "a date"),
    ((set, frozenset), "a !!set"),
)


def _not_json(data: Any, where: str = "") -> tuple[str, str] | None:
    """The field path and kind of the first value (or key) JSON cannot hold, or None."""
    for kind, what in _NOT_JSON:
        if isinstance(data, kind):
            return where or "(the whole file)", what
    if isinstance(data, dict):
        for key, value in data.items():
            at = f"{where}.{key}" if where else str(key)
            found = _not_json(key, at) or _not_json(value, at)
            if found is not None:
                return found
    elif isinstance(data, list):
        for i, value in enumerate(data):
            found = _not_json(value, f"{where}[{i}]")
            if found is not None:
                return found
    return None


def read_yaml(path: Path) -> Any:
    """Parse one scenario or tool-set file; every refusal is a :class:`ScenarioError`."""
    text = read_text(path)
    try:
        _check_events(text)
        data = yaml.load(text, Loader=StrictLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if "nesting depth" in problem:
            # PyYAML >= 6.0.4 has its own, deeper limit, met while scanning ahead of the
            # events _check_events counts: one message for too-deep input, whichever
            # limit is met first.
            problem = f"nested deeper than {MAX_DEPTH} levels"
        raise ScenarioError(f"{path}: invalid YAML{where}: {problem}") from None
    found = _not_json(data)
    if found is not None:
        field, what = found
        raise ScenarioError(
            f"{path}: {field}: {what} is not allowed (scenario values are JSON: quote it"
            " as a string)"
        )
    return data
