"""``toolbench import bfcl``: BFCL's single-turn JSON-lines files as scenario files.

Layouts read: ``BFCL_v3_<category>.json`` or ``BFCL_v4_<category>.json`` question files with
``possible_answer/`` beside them (same names). Output: ``<category>-NNN.yaml`` files, each
under the 1 MiB scenario-file limit, written to a temporary folder that is renamed to the
output folder only when everything was read: bad input leaves nothing half-written.
The same input gives byte-identical output (input order, fixed YAML settings).

An entry BFCL itself gets wrong (a malformed line, an answer that lists a parameter as
if it were a function) refuses the whole import by default: a silent gap in a benchmark
reads as a model's score. ``skip_bad`` (``--skip-bad``) leaves such entries out instead,
each reported with its file, line and reason and counted in the summary. A fault of a
whole file (unreadable, no answers beside it) refuses either way.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from toolbench.bfcl.convert import (
    BadInput,
    SkipEntry,
    arg_matcher,
    json_schema,
    scenario_id,
)
from toolbench.scenarios.model import Scenario
from toolbench.scenarios.toolschema import schema_problem
from toolbench.scenarios.yamlfile import MAX_FILE_BYTES

FILE_RE = re.compile(r"^BFCL_v([34])_(?P<cat>[a-z_]+)\.json$")

IMPORTED = {
    "simple",
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
}
NO_CALL = {"irrelevance", "live_irrelevance"}

SKIPPED_CATEGORIES = {
    "java": "Java values are compared as BFCL's typed strings, not implemented yet",
    "simple_java": "Java values are compared as BFCL's typed strings, not implemented yet",
    "javascript": "JavaScript typed strings are not implemented yet",
    "simple_javascript": "JavaScript typed strings are not implemented yet",
    "live_relevance": "the expectation 'call at least one function' has no scenario form",
}
"""Single-turn categories not imported, with the reason. Anything else (multi_turn_*,
memory, web_search, format_sensitivity, exec_*, rest, sql...) needs state or execution."""


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Writes every value in full, never as an anchor and alias: toolbench's scenario
    loader refuses aliases (alias bombs), and a converted entry may hold one object in two
    places (an answer alternative shared by two matchers), which a plain dumper would
    write as ``&id001`` ... ``*id001``. A file toolbench writes, toolbench reads."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


_FILE_BUDGET = MAX_FILE_BYTES - 64 * 1024


@dataclass
class ImportReport:
    """What an import did: counts per category and every skip with its reason."""

    counts: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    skipped_categories: list[str] = field(default_factory=list)
    files: int = 0
    bad: list[str] | None = None
    """Bad entries left out (``file:line: reason``); None: bad input refuses the import."""

    def render(self) -> str:
        lines = [f"{cat}: {n} scenarios" for cat, n in sorted(self.counts.items())]
        lines += [f"skipped category {line}" for line in self.skipped_categories]
        lines += [f"skipped {line}" for line in self.skipped]
        lines += [f"bad entry {line}" for line in self.bad or ()]
        total = sum(self.counts.values())
        summary = f"{total} scenarios in {self.files} files; {len(self.skipped)} entries skipped"
        if self.bad is not None:
            summary += f"; {len(self.bad)} bad entries skipped"
        lines.append(summary)
        return "\n".join(lines)

    def refuse_or_note(self, exc: BadInput) -> None:
        """Raise ``exc`` (the default), or note it as one bad entry (``skip_bad``)."""
        if self.bad is None:
            raise exc
        self.bad.append(str(exc))


def _read_lines(path: Path, report: ImportReport) -> list[tuple[int, dict[str, Any]]]:
    out = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: cannot read: {exc}") from None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append((n, _entry(path, n, line)))
        except BadInput as exc:
            report.refuse_or_note(exc)
    return out


def _entry(path: Path, n: int, line: str) -> dict[str, Any]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{path}:{n}: malformed JSON line: {exc.msg}") from None
    except RecursionError:
        raise BadInput(f"{path}:{n}: malformed JSON line: nested too deeply") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
        raise BadInput(f"{path}:{n}: expected a JSON object with a string 'id'")
    return obj


def _messages(question: Any) -> list[dict[str, str]]:
    if not isinstance(question, list) or len(question) != 1 or not isinstance(question[0], list):
        raise SkipEntry("not a single-turn question")
    out = []
    for m in question[0]:
        if not isinstance(m, dict) or not isinstance(m.get("content"), str):
            raise SkipEntry("a message without text content")
        out.append({"role": str(m.get("role")), "content": m["content"]})
    return out


def _tools(functions: list[Any]) -> list[dict[str, Any]]:
    tools = []
    for f in functions:
        params = json_schema(f.get("parameters") or {"type": "dict", "properties": {}})
        problem = schema_problem(params)
        if problem is not None:
            raise SkipEntry(f"function '{f.get('name')}': {problem}")
        tools.append(
            {
                "name": str(f["name"]),
                "description": str(f.get("description", "")),
                "parameters": params,
            }
        )
    return tools


def _expected(answers: Any, functions: list[Any], where: str, qid: str) -> list[dict[str, Any]]:
    by_name = {f["name"]: f for f in functions}
    if not isinstance(answers, list) or not answers:
        raise BadInput(f"{where}: 'ground_truth' must be a non-empty list")
    calls = []
    for ans in answers:
        if not isinstance(ans, dict) or len(ans) != 1:
            raise BadInput(f"{where}: each ground-truth call must map one function name")
        ((name, args),) = ans.items()
        if name not in by_name:
            raise BadInput(
                f"{where}: possible answer of '{qid}' names function '{name}', which the"
                " question does not offer"
            )
        if not isinstance(args, dict):
            raise BadInput(f"{where}: arguments of '{name}' must be an object")
        schema = by_name[name].get("parameters") or {}
        if not isinstance(schema, dict) or not isinstance(schema.get("properties", {}), dict):
            raise SkipEntry(f"function '{name}' has no parameter schema object")
        props = schema.get("properties") or {}
        req: Any = schema.get("required")
        required: list[Any] = req if isinstance(req, list) else []
        matchers = {}
        for param, alts in args.items():
            if param not in props:
                raise SkipEntry(f"answer names parameter '{param}' that '{name}' does not have")
            matchers[param] = arg_matcher(param, alts, props[param], param in required)
        calls.append({"name": name, "arguments": matchers})
    return calls


def entry_scenario(
    cat: str, q: dict[str, Any], answer: dict[str, Any] | None, where: str, a_where: str
) -> dict[str, Any]:
    """The scenario (YAML data, validated) for one question line and its answer line."""
    functions = q.get("function")
    # An irrelevance question may offer no function at all (BFCL has four such lines);
    # any other question without functions cannot be answered by a call.
    if not isinstance(functions, list) or (not functions and cat not in NO_CALL):
        raise BadInput(f"{where}: question '{q['id']}' has no functions")
    for f in functions:
        if not isinstance(f, dict) or not isinstance(f.get("name"), str) or not f["name"]:
            raise BadInput(f"{where}: every function needs a 'name'")
    names = [f["name"] for f in functions]
    if len(set(names)) != len(names):
        raise SkipEntry("two functions have the same name")
    expect: dict[str, Any]
    if cat in NO_CALL:
        expect = {"no_call": True}
    else:
        assert answer is not None
        calls = _expected(answer.get("ground_truth"), functions, a_where, q["id"])
        expect = {"calls": calls}
        if "parallel" in cat:
            expect["order"] = "any"
    data = {
        "id": scenario_id(q["id"]),
        "tags": ["bfcl", f"bfcl-{cat}"],
        "tools": _tools(functions),
        "messages": _messages(q.get("question")),
        "expect": expect,
    }
    try:
        Scenario.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise SkipEntry(err["msg"].removeprefix("Value error, ")) from None
    return data


def _dump(data: Any) -> str:
    text: str = yaml.dump(
        data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1_000_000
    )
    return text


def _category_files(
    cat: str, scenarios: list[dict[str, Any]], report: ImportReport
) -> dict[str, str]:
    """One category's scenarios as ``<cat>-NNN.yaml`` texts, each under the file limit."""
    files: dict[str, str] = {}
    chunk: list[str] = []
    size = 0

    def flush() -> None:
        nonlocal chunk, size
        if chunk:
            files[f"{cat}-{len(files) + 1:03d}.yaml"] = "scenarios:\n" + "".join(chunk)
        chunk, size = [], 0

    for sc in scenarios:
        text = _dump([sc])
        piece = "\n".join("  " + line if line else line for line in text.splitlines()) + "\n"
        n = len(piece.encode("utf-8"))
        if n > _FILE_BUDGET:
            report.skipped.append(
                f"{sc['id']}: {n} bytes as YAML, over the {MAX_FILE_BYTES}-byte scenario-file limit"
            )
            report.counts[cat] -= 1
            continue
        if size + n > _FILE_BUDGET:
            flush()
        chunk.append(piece)
        size += n
    flush()
    return files


def find_files(path: Path) -> list[tuple[str, Path, Path | None]]:
    """(category, question file, answer file) for each BFCL question file under ``path``."""
    if path.is_file():
        candidates = [path]
    elif path.is_dir():
        candidates = sorted(path.iterdir())
    else:
        raise BadInput(f"{path}: no such file or directory")
    out = []
    for f in candidates:
        m = FILE_RE.match(f.name)
        if not m or not f.is_file():
            continue
        ans = f.parent / "possible_answer" / f.name
        out.append((m["cat"], f, ans if ans.is_file() else None))
    if not out:
        raise BadInput(f"{path}: no BFCL question files (BFCL_v3_*.json or BFCL_v4_*.json)")
    return out


def convert(path: Path, skip_bad: bool = False) -> tuple[dict[str, str], ImportReport]:
    """Read everything; return file name -> text and the report (nothing written)."""
    report = ImportReport(bad=[] if skip_bad else None)
    out: dict[str, str] = {}
    seen_ids: dict[str, str] = {}
    done: dict[str, str] = {}
    for cat, qfile, afile in find_files(path):
        if cat in done:
            report.skipped_categories.append(
                f"{cat} ({qfile.name}): already imported from {done[cat]}"
            )
            continue
        if cat not in IMPORTED:
            reason = SKIPPED_CATEGORIES.get(cat, "multi-turn or executable: not supported")
            report.skipped_categories.append(f"{cat} ({qfile.name}): {reason}")
            continue
        answers: dict[str, tuple[int, dict[str, Any]]] = {}
        if cat not in NO_CALL:
            if afile is None:
                raise BadInput(f"{qfile}: no possible_answer/{qfile.name} beside it")
            answers = {obj["id"]: (n, obj) for n, obj in _read_lines(afile, report)}
        scenarios = []
        for n, q in _read_lines(qfile, report):
            where = f"{qfile}:{n}"
            ans = answers.get(q["id"])
            a_where = f"{afile}:{ans[0]}" if ans else where
            if cat not in NO_CALL and ans is None:
                report.skipped.append(f"{q['id']} ({where}): no possible answer")
                continue
            try:
                sc = entry_scenario(cat, q, ans[1] if ans else None, where, a_where)
            except SkipEntry as exc:
                report.skipped.append(f"{q['id']} ({where}): {exc}")
                continue
            except BadInput as exc:
                report.refuse_or_note(exc)
                continue
            if sc["id"] in seen_ids:
                report.skipped.append(
                    f"{q['id']} ({where}): id '{sc['id']}' already used at {seen_ids[sc['id']]}"
                )
                continue
            seen_ids[sc["id"]] = where
            scenarios.append(sc)
        done[cat] = qfile.name
        report.counts[cat] = len(scenarios)
        out.update(_category_files(cat, scenarios, report))
    report.files = len(out)
    return out, report


def import_bfcl(path: Path, out_dir: Path, skip_bad: bool = False) -> ImportReport:
    """Convert ``path`` and write the files to ``out_dir`` all at once (a rename);
    ``skip_bad``: leave bad entries out, each reported, instead of refusing."""
    # The output is checked first: no point reading thousands of lines to refuse it.
    check_out(out_dir)
    files, report = convert(path, skip_bad)
    write_files(files, out_dir)
    return report


def check_out(out_dir: Path) -> None:
    """Refuse an output folder that is a file or holds something."""
    if out_dir.exists() and not out_dir.is_dir():
        raise BadInput(f"--out: {out_dir} is a file, not a directory")
    if out_dir.exists() and any(out_dir.iterdir()):
        raise BadInput(f"--out: {out_dir} exists and is not empty")


def write_files(files: dict[str, str], out_dir: Path) -> None:
    """Write ``files`` (name -> text) to ``out_dir`` all at once (a rename)."""
    parent = out_dir.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".bfcl-import-", dir=parent))
    except OSError as exc:
        raise BadInput(f"--out: {out_dir}: cannot write: {exc.strerror}") from None
    try:
        for name, text in files.items():
            (tmp / name).write_bytes(text.encode("utf-8"))
        if out_dir.exists():
            out_dir.rmdir()
        os.replace(tmp, out_dir)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise BadInput(f"--out: {out_dir}: cannot write: {exc.strerror}") from None
