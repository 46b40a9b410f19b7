"""Real prompt-mode replies (``tests/data/real_replies``): does ``pythonic`` read what a strict
reader reads, and does toolbench judge each reply as BFCL does?

**(a) Agreement with a strict reader.** The reader here is independent of
``toolbench.formats.pythonic`` and deliberately narrow; its one rule: *a reply is a call
list when, with surrounding whitespace removed, it is exactly one Python list expression
whose items are calls; a callee is a name or a dotted chain of names (``math.gcd``,
``uber.eat.order``); every argument is a keyword argument whose value is a literal:
a string, a number (a sign allowed), ``True``/``False``/``None``, or a list, tuple or
dict (string keys) of literals.* Anything else (a code fence, a sentence around the list,
a bare call without the list, a positional argument, ``true``/``null``, a name, a
trailing token) is not a strict call list, and the strict reader reads no call from it.
Tuples are read as lists (JSON has none). A reply agrees when the calls ``pythonic``
reads *as strict* (its calls when its status is ``strict``, none otherwise: a lenient
reading is ``repaired`` by the repository's rule) equal the strict reader's, names and
arguments with their JSON types (``1`` is not ``1.0`` nor ``True``). A reply that the
strict reader reads as one call or more and ``pythonic`` reads as no call, without even
an attempt, is the worst case and is counted apart.

**(b) Verdicts against BFCL's.** Where a reply carries BFCL's own verdict (``bfcl_valid``,
computed by ``tests/data/real_replies/build.py`` with BFCL's decoder and checker), the
entry is imported from ``../shared/bfcl`` with ``toolbench import bfcl``'s converter, the
reply parsed by ``pythonic`` and the trial scored by ``score_trial`` (the scorers a run
uses): ``call_accuracy``, or ``no_call_correct`` for irrelevance entries, is compared with
BFCL's verdict, and every disagreement is given one cause (first that applies, listed in
``CAUSES``).

Run: ``python benchmarks/bench_real_replies.py [--show N]``. Exits 0. ``--tiny``: the first
100 replies only (checks it still runs).
"""

from __future__ import annotations

import argparse
import ast
import itertools
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "real_replies"
BFCL_DIR = ROOT.parent / "shared" / "bfcl"

Call = tuple[str, str]
"""A call as compared: its name and its arguments as canonical JSON."""


class NotStrict(Exception):
    """The reply is not a strict call list (the reason is the message)."""


def _callee(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_callee(node.value)}.{node.attr}"
    raise NotStrict("callee is not a dotted name")


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant) and (
        node.value is None or isinstance(node.value, (bool, int, float, str))
    ):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) in (int, float)
    ):
        value = node.operand.value
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        out = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                raise NotStrict("dict key is not a string")
            out[k.value] = _literal(v)
        return out
    raise NotStrict(f"argument is not a literal ({type(node).__name__})")


def strict_calls(reply: str) -> list[Call]:
    """The calls of a strict call list (see the module docstring); raises NotStrict."""
    try:
        tree = ast.parse(reply.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise NotStrict(f"not a Python expression: {type(exc).__name__}") from None
    if not isinstance(tree.body, ast.List):
        raise NotStrict("not a list")
    calls = []
    for item in tree.body.elts:
        if not isinstance(item, ast.Call):
            raise NotStrict("a list item is not a call")
        if item.args:
            raise NotStrict("positional argument")
        args = {}
        for kw in item.keywords:
            if kw.arg is None:
                raise NotStrict("**arguments")
            args[kw.arg] = _literal(kw.value)
        calls.append((_callee(item.func), canon(args)))
    return calls


def canon(args: Any) -> str:
    return json.dumps(args, sort_keys=True, ensure_ascii=False)


def read_corpus(data: Path = DATA) -> Iterator[dict[str, Any]]:
    for path in sorted(data.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                yield json.loads(line)


@dataclass
class Row:
    """One reply, read by both readers."""

    rec: dict[str, Any]
    strict: list[Call] | None
    """The strict reader's calls; None when it refuses the reply."""
    why_not: str
    status: str
    calls: list[Call]
    attempted: bool
    codes: list[str]

    @property
    def agree(self) -> bool:
        pythonic_strict = self.calls if self.status == "strict" else []
        return pythonic_strict == (self.strict or [])

    @property
    def silent_miss(self) -> bool:
        """The strict reader reads a call; pythonic saw no attempt at one."""
        return bool(self.strict) and not self.calls and not self.attempted


def tooldefs(functions: list[dict[str, Any]] | None) -> list[Any]:
    from toolbench.bfcl.convert import json_schema
    from toolbench.tools import ToolDef

    out = []
    for f in functions or []:
        params = json_schema(f.get("parameters") or {"type": "dict", "properties": {}})
        out.append(ToolDef(name=f["name"], description=f.get("description", ""), parameters=params))
    return out


def read_all(data: Path = DATA, limit: int | None = None) -> list[Row]:
    """Every reply of the corpus (the first ``limit``), read by the strict reader and by
    ``pythonic``."""
    from toolbench.formats.format_registry import get_format

    fmt = get_format("pythonic")
    rows = []
    for rec in itertools.islice(read_corpus(data), limit):
        try:
            strict: list[Call] | None = strict_calls(rec["reply"])
            why = ""
        except NotStrict as exc:
            strict, why = None, str(exc)
        got = fmt.parse(rec["reply"], tooldefs(rec.get("tools")))
        calls = [(c.name, canon(c.arguments)) for c in got.calls]
        rows.append(Row(rec, strict, why, got.status, calls, got.attempted, got.codes()))
    return rows


def _dotted(text: str) -> bool:
    return re.search(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+\s*\(", text) is not None


def _json_literal(text: str) -> bool:
    return re.search(r"=\s*(true|false|null)\b", text) is not None


def _bare_name(text: str) -> bool:
    """A keyword argument whose value is a bare name other than a literal's spelling."""
    names = re.findall(r"\w=\s*([A-Za-z_]\w*)\s*[,)]", text)
    return any(n not in ("true", "false", "null", "True", "False", "None") for n in names)


CAUSES: list[tuple[str, str]] = [
    (
        "bfcl_decoder_fails",
        "BFCL's decoder fails on the reply (text before the list, two lists, a trailing "
        "token, a Python keyword as argument name) and counts it as no call; toolbench "
        "reads the calls (leniently, repaired, where the text is not a strict list)",
    ),
    (
        "json_literal",
        "true/false/null in a call: BFCL's decoder reads them as the strings "
        "'true'/'false'/'null' and its type check fails; toolbench reads booleans (repaired)",
    ),
    (
        "bare_name_value",
        "a bare name as an argument value (data=my_data): BFCL reads it as the string "
        "'my_data'; toolbench refuses the call (args.not_literal)",
    ),
    (
        "decode_failure_in_irrelevance",
        "an attempted call that does not decode: BFCL counts it as no call (correct), "
        "toolbench as a failed attempt (not an abstention)",
    ),
    ("dotted_name_unread", "pythonic reads no call where the call's name has a dot"),
    ("checker", "both read the same calls; the matchers differ"),
]
"""Why toolbench's verdict differs from BFCL's: the first cause that applies."""


def classify(row: Row) -> str:
    reply, decoded = row.rec["reply"], row.rec.get("bfcl_decoded_calls")
    bfcl_failed = row.rec.get("bfcl_error_type") == "ast_decoder:decoder_failed" or (
        row.rec["category"] in ("irrelevance", "live_irrelevance") and decoded is None
    )
    if bfcl_failed and row.calls:
        return "bfcl_decoder_fails"
    if _json_literal(reply) and decoded is not None:
        return "json_literal"
    if _bare_name(reply) and "args.not_literal" in row.codes:
        return "bare_name_value"
    no_call = row.rec["category"] in ("irrelevance", "live_irrelevance")
    if no_call and row.attempted and not row.calls:
        return "decode_failure_in_irrelevance"
    if _dotted(reply) and not row.calls:
        return "dotted_name_unread"
    return "checker"


def toolbench_verdicts(rows: list[Row], bfcl_dir: Path = BFCL_DIR) -> list[tuple[Row, bool]]:
    """toolbench's verdict on every reply that carries BFCL's (entries that import)."""
    from toolbench.bfcl.convert import SkipEntry
    from toolbench.bfcl.importer import entry_scenario
    from toolbench.formats.base import ModelReply
    from toolbench.formats.format_registry import get_format
    from toolbench.results import TurnRecord
    from toolbench.scenarios.model import Scenario
    from toolbench.scoring import score_trial

    fmt = get_format("pythonic")
    cache: dict[str, dict[str, dict[str, Any]]] = {}

    def entries(name: str) -> dict[str, dict[str, Any]]:
        if name not in cache:
            path = bfcl_dir / name
            lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
            cache[name] = {(r := json.loads(x))["id"]: r for x in lines if x.strip()}
        return cache[name]

    out = []
    for row in rows:
        rec = row.rec
        if "bfcl_valid" not in rec:
            continue
        cat = rec["category"]
        q = entries(f"BFCL_v4_{cat}.json").get(rec["id"])
        a = entries(f"possible_answer/BFCL_v4_{cat}.json").get(rec["id"])
        if q is None:
            continue
        try:
            sc = Scenario.model_validate(entry_scenario(cat, q, a, "", ""))
        except SkipEntry:
            continue
        parsed = fmt.parse(rec["reply"], sc.tools)
        turn = TurnRecord(request={}, reply=ModelReply(text=rec["reply"]), parsed=parsed)
        values = score_trial(sc, fmt, [turn]).values
        key = "no_call_correct" if sc.expect.no_call else "call_accuracy"
        out.append((row, values[key].value is True))
    return out


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({n / d:.2%})" if d else "0/0"


def main(show: int, limit: int | None = None) -> None:
    rows = read_all(limit=limit)
    print(
        f"{len(rows)} real replies, {len({r.rec['model'] for r in rows})} models, "
        f"{len({r.rec['source'] for r in rows})} sources ({DATA.relative_to(ROOT)})\n"
    )
    by_model: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        by_model[r.rec["model"]].append(r)
    print(f"{'model':<40} {'replies':>7} {'strict list':>11} {'agree':>16} {'silent miss':>11}")
    for model, rs in sorted(by_model.items()):
        agree = sum(r.agree for r in rs)
        print(
            f"{model:<40} {len(rs):>7} {sum(r.strict is not None for r in rs):>11} "
            f"{_pct(agree, len(rs)):>16} {sum(r.silent_miss for r in rs):>11}"
        )
    agree = sum(r.agree for r in rows)
    print(
        f"{'all':<40} {len(rows):>7} {sum(r.strict is not None for r in rows):>11} "
        f"{_pct(agree, len(rows)):>16} {sum(r.silent_miss for r in rows):>11}\n"
    )
    kinds = Counter(
        ("strict list" if r.strict is not None else "not strict", r.status)
        for r in rows
        if not r.agree
    )
    print("disagreements (strict reader, pythonic status):", dict(kinds) or "none")
    for r in [r for r in rows if not r.agree][:show]:
        print(
            f"  {r.rec['model']} {r.rec['id']}: pythonic {r.status} {r.codes} "
            f"strict {'refuses: ' + r.why_not if r.strict is None else 'reads'}: "
            f"{r.rec['reply'][:110]!r}"
        )

    judged = toolbench_verdicts(rows)
    same = sum(ok == r.rec["bfcl_valid"] for r, ok in judged)
    print(f"\ncall_accuracy / no_call_correct equal to BFCL's verdict: {_pct(same, len(judged))}")
    causes = Counter(classify(r) for r, ok in judged if ok != r.rec["bfcl_valid"])
    for key, text in CAUSES:
        if causes[key]:
            print(f"  {causes[key]:>4}  {key}: {text}")
    diffs = [(r, ok) for r, ok in judged if ok != r.rec["bfcl_valid"]]
    for r, ok in diffs[:show]:
        print(
            f"  {r.rec['model']} {r.rec['id']}: toolbench {ok} bfcl {r.rec['bfcl_valid']} "
            f"[{classify(r)}] {r.rec['reply'][:100]!r}"
        )


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--show", type=int, default=10, help="disagreements shown (default 10)")
    ap.add_argument("--tiny", action="store_true", help="the first 100 replies only")
    args = ap.parse_args()
    main(args.show, 100 if args.tiny else None)
