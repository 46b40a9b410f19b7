"""The docs name modules that exist: every ``something.py`` a page describing the current
layout names is a file under ``harness/``, ``tests/`` or ``benchmarks/``.

Code moves (issue 35 folded the call path into ``providers/call.py``, ``replay.py`` and
``wire/<protocol>/``) and prose that names the old module still reads as true; this test
is what notices. A bare name matches any file of that name; a name with a directory must
be the end of a file's path (``providers/replay.py`` matches
``harness/toolbench/providers/replay.py``, never ``tests/providers/replay.py`` alone by its
base name). A name with a placeholder (``formats/<name>.py``, ``*.py``) is a pattern, not
a module, and is skipped. Names from other projects are listed in :data:`ELSEWHERE` with
why. ``docs/benchmarks.md`` is left out: its rows are the history of fast paths folded
back, and name modules that are gone on purpose.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
CODE_DIRS = ("harness", "tests", "benchmarks")

HISTORY = frozenset({"benchmarks.md"})
"""Pages that record how the code was, not how it is (see the module's docstring)."""

ELSEWHERE: dict[tuple[str, str], str] = {
    ("dialects.md", "test_qwen3coder_tool_parser.py"): "vLLM's tests, the dialect's source",
    ("dialects.md", "test/srt/test_function_call_parser.py"): "SGLang's parser tests",
    ("environments.md", "bfcl_eval/__init__.py"): "the BFCL package (gorilla), not ours",
    ("formats.md", "bfcl_eval/constants/default_prompts.py"): "the BFCL package's prompts",
    ("formats.md", "model_handler/utils.py"): "the BFCL package's handler utilities",
    ("guide.md", "my_plugin/report.py"): "a user's plugin module in the guide's example",
}
"""Names a page cites from another project, or a user's own file in an example."""

_NAME = re.compile(r"[\w./<>*{}-]*\w\.py(?!\w)")


def code_files() -> list[str]:
    """Every Python file of the project, as a path relative to the repository."""
    found: list[str] = []
    for top in CODE_DIRS:
        for path in (ROOT / top).rglob("*.py"):
            if "__pycache__" not in path.parts:
                found.append(path.relative_to(ROOT).as_posix())
    return found


def named_modules(text: str) -> list[str]:
    """The ``.py`` names a page's text holds, placeholders left out."""
    names = (m.group(0).removeprefix("./") for m in _NAME.finditer(text))
    return [n for n in names if not any(c in n for c in "<>*{}")]


def exists(name: str, files: list[str]) -> bool:
    """Whether ``name`` is a project file: a bare name by its base name, a path by its end."""
    return any(f == name or f.endswith("/" + name) for f in files)


def missing(page: str, text: str, files: list[str]) -> list[str]:
    """The names on ``page`` that are no project file and not listed as another's."""
    return [n for n in named_modules(text) if (page, n) not in ELSEWHERE and not exists(n, files)]


def layout_pages() -> list[Path]:
    return sorted(p for p in DOCS.glob("*.md") if p.name not in HISTORY)


@pytest.fixture(scope="module")
def files() -> list[str]:
    return code_files()


@pytest.mark.parametrize("page", layout_pages(), ids=lambda p: p.name)
def test_every_module_a_page_names_exists(page: Path, files: list[str]) -> None:
    assert missing(page.name, page.read_text(encoding="utf-8"), files) == []


def test_the_pages_named_in_the_brief_are_checked() -> None:
    names = {p.name for p in layout_pages()}
    assert {"guide.md", "providers.md", "environments.md", "concepts.md"} <= names


def test_every_exception_is_still_named() -> None:
    """An exception a page no longer needs is taken out, so the list cannot hide a
    project file's name that has gone stale."""
    for page, name in ELSEWHERE:
        assert name in named_modules((DOCS / page).read_text(encoding="utf-8")), (page, name)


def test_a_wrong_name_is_found(files: list[str]) -> None:
    text = (
        "The call (`providers/call.py`) reads it; the kept reply (`providers/kept_replay.py`,"
        " `readers/chat.py`) and `streamed.py`; a pattern `formats/<name>.py` is skipped."
    )
    assert missing("providers.md", text, files) == [
        "providers/kept_replay.py",
        "readers/chat.py",
        "streamed.py",
    ]


def test_a_path_matches_only_at_its_end() -> None:
    files = ["harness/toolbench/providers/replay.py", "tests/providers/test_replay.py"]
    assert exists("replay.py", files)
    assert exists("providers/replay.py", files)
    assert exists("toolbench/providers/replay.py", files)
    assert not exists("cassettes/replay.py", files)
    assert not exists("lay.py", files)
    assert not exists("oviders/replay.py", files)
