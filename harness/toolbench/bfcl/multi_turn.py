"""``toolbench import bfcl --multi-turn``: BFCL v4's multi-turn categories as loop scenarios.

Imported: ``multi_turn_base``, ``multi_turn_miss_func``, ``multi_turn_miss_param`` and
``multi_turn_long_context``, from the unpacked ``bfcl-eval`` wheel
(:mod:`toolbench.bfcl.package`). Each entry becomes one scenario:

* ``environment``: one BFCL backend per involved class (``bfcl.GorillaFileSystem``, ...)
  with the entry's initial configuration (and ``long_context`` for that category);
* ``messages``: the first turn's question; ``turns``: the later ones;
* the functions BFCL holds out (``missed_function``) join at their turn, whose message is
  BFCL's own ("I have updated some more functions you can choose from. What about now?");
* ``expect.turns``: the ground-truth calls per turn, positional arguments named by the
  backend method's signature; a turn whose ground truth is empty in ``miss_param`` or
  ``miss_func`` is marked ``ask`` (the model should ask, or say it cannot);
* ``max_turns: 20``, BFCL's step limit within a user turn.

An entry whose ground truth does not parse, names a function no involved class has, or
whose arguments do not fit the method is skipped with its reason (or refuses the import
without ``--skip-bad``), never imported half.
"""

from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolbench.bfcl.backends import backend_class, environment_name
from toolbench.bfcl.convert import BadInput, SkipEntry, scenario_id
from toolbench.bfcl.importer import ImportReport, _category_files, _tools, check_out, write_files
from toolbench.bfcl.package import PACKAGE, cache_root, fetch, package_dir, unpack
from toolbench.scenarios.model import Scenario

CATEGORIES = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)
ASKING = {"multi_turn_miss_func", "multi_turn_miss_param"}

FUNC_DOCS = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
}
"""BFCL's ``MULTI_TURN_FUNC_DOC_FILE_MAPPING`` for the multi-turn classes."""

ADDED_FUNCTIONS = "I have updated some more functions you can choose from. What about now?"
"""BFCL's user message at the turn held-out functions join (``..._FC``)."""

STEP_LIMIT = 20
"""BFCL's ``MAXIMUM_STEP_LIMIT``: model steps within one user turn."""


def _lines(path: Path) -> list[dict[str, Any]]:
    try:
        return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]
    except (OSError, ValueError) as exc:
        raise BadInput(f"{path}: cannot read: {exc}") from None


def _docs(data: Path, classes: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for cls in classes:
        if cls not in FUNC_DOCS:
            raise SkipEntry(f"class {cls} is not a multi-turn backend")
        out.extend(_lines(data / "multi_turn_func_doc" / FUNC_DOCS[cls]))
    return out


def _literal(node: ast.expr) -> Any:
    value = ast.literal_eval(node)
    return list(value) if isinstance(value, tuple) else value


def ground_call(text: str, methods: dict[str, inspect.Signature]) -> dict[str, Any]:
    """One ground-truth call string (``mv(source='a', destination='b')``) as a call with
    named arguments."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise SkipEntry(f"ground truth {text!r} does not parse") from None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise SkipEntry(f"ground truth {text!r} is not a function call")
    name = node.func.id
    sig = methods.get(name)
    if sig is None:
        raise SkipEntry(f"ground truth calls {name}, which no involved class has")
    try:
        positional = [_literal(a) for a in node.args]
        named = {k.arg: _literal(k.value) for k in node.keywords if k.arg is not None}
        bound = sig.bind(*positional, **named)
    except (ValueError, TypeError) as exc:
        raise SkipEntry(f"ground truth {text!r}: {exc}") from None
    return {"name": name, "arguments": dict(bound.arguments)}


def ground_call_name(text: str) -> str:
    """The function a ground-truth call string names (what precedes its parenthesis)."""
    return text.split("(", 1)[0].strip()


def _methods(classes: list[str]) -> dict[str, inspect.Signature]:
    out: dict[str, inspect.Signature] = {}
    for cls in classes:
        for name, fn in inspect.getmembers(backend_class(cls), inspect.isfunction):
            if not name.startswith("_"):
                sig = inspect.signature(fn)
                out[name] = sig.replace(parameters=list(sig.parameters.values())[1:])
    return out


def entry_scenario(
    cat: str, q: dict[str, Any], answer: dict[str, Any], data: Path
) -> dict[str, Any]:
    """The loop scenario (YAML data, validated) of one multi-turn entry."""
    classes = [str(c) for c in q.get("involved_classes") or []]
    docs = {d["name"]: d for d in _docs(data, classes)}
    held: dict[int, list[str]] = {
        int(k): list(v) for k, v in (q.get("missed_function") or {}).items()
    }
    held_names = {n for names in held.values() for n in names}
    questions = q.get("question") or []
    truth = answer.get("ground_truth") or []
    if len(truth) != len(questions) or not questions:
        raise SkipEntry(f"{len(questions)} turns but {len(truth)} ground-truth turns")
    if 0 in held:
        raise SkipEntry("functions held out of the first turn")
    methods = _methods(classes)
    turns = []
    for n, messages in enumerate(questions[1:], 1):
        tools = _tools([docs[name] for name in held.get(n, [])])
        if n in held:
            messages = [{"role": "user", "content": ADDED_FUNCTIONS}]
        turns.append({"messages": [{"role": "user", "content": m["content"]} for m in messages],
                      **({"tools": tools} if tools else {})})  # fmt: skip
    long_context = cat == "multi_turn_long_context"
    offered = {n for n in docs if n not in held_names}
    expect_turns = []
    for n, calls in enumerate(truth):
        offered |= set(held.get(n, []))
        early = [c for c in map(ground_call_name, calls) if c in held_names and c not in offered]
        if early:
            raise SkipEntry(
                f"turn {n}'s ground truth calls {early[0]}, held out until a later turn"
            )
        ask = not calls and cat in ASKING
        expect_turns.append({"calls": [ground_call(c, methods) for c in calls],
                             **({"ask": True} if ask else {})})  # fmt: skip
    data_out = {
        "id": scenario_id(q["id"]),
        "tags": ["bfcl", "bfcl-multi_turn", f"bfcl-{cat}"],
        "tools": _tools([d for name, d in docs.items() if name not in held_names]),
        "messages": [{"role": m["role"], "content": m["content"]} for m in questions[0]],
        "environment": [
            {"name": environment_name(c),
             "state": {"config": (q.get("initial_config") or {}).get(c, {}),
                       **({"long_context": True} if long_context else {})}}
            for c in classes
        ],
        "turns": turns,
        "expect": {"max_turns": STEP_LIMIT, "turns": expect_turns},
    }  # fmt: skip
    try:
        Scenario.model_validate(data_out)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise SkipEntry(err["msg"].removeprefix("Value error, ")) from None
    return data_out


def convert_multi_turn(root: Path, skip_bad: bool = False) -> tuple[dict[str, str], ImportReport]:
    """Every multi-turn category of the unpacked copy under ``root``: file name -> text."""
    pkg = package_dir(root)
    if pkg is None:
        raise BadInput(f"{root}: no unpacked {PACKAGE} with multi-turn backends")
    data = pkg / "data"
    report = ImportReport(bad=[] if skip_bad else None)
    out: dict[str, str] = {}
    for cat in CATEGORIES:
        qfile = data / f"BFCL_v4_{cat}.json"
        afile = data / "possible_answer" / qfile.name
        answers = {a["id"]: a for a in _lines(afile)}
        scenarios = []
        for n, q in enumerate(_lines(qfile), 1):
            where = f"{qfile}:{n}"
            if q.get("id") not in answers:
                report.skipped.append(f"{q.get('id')} ({where}): no possible answer")
                continue
            try:
                scenarios.append(entry_scenario(cat, q, answers[q["id"]], data))
            except SkipEntry as exc:
                problem = BadInput(f"{where}: {q['id']}: {exc} (--skip-bad leaves it out)")
                report.refuse_or_note(problem)
        report.counts[cat] = len(scenarios)
        out.update(_category_files(cat, scenarios, report))
    report.files = len(out)
    return out, report


def import_multi_turn(source: Path | None, out_dir: Path, skip_bad: bool = False) -> ImportReport:
    """The one command: BFCL's multi-turn suite from ``source`` (a ``bfcl-eval`` wheel or
    an unpacked or installed copy), else from the cache, else fetched (the pinned wheel,
    no dependencies); unpacked into the cache, where its backends run from; the scenario
    files written to ``out_dir`` at once."""
    check_out(out_dir)
    if source is not None:
        root = unpack(source)
    elif package_dir(cache_root()) is not None:
        root = cache_root()
    else:
        root = fetch()
    files, report = convert_multi_turn(root, skip_bad)
    write_files(files, out_dir)
    return report
