"""Regenerate ``verdicts.jsonl``: BFCL's own ``ast_checker`` verdicts on answers and perturbations.

Run outside toolbench's environment dependencies (see README.md beside this file):

    python tests/data/bfcl/make_verdicts.py BFCL_DATA_DIR BFCL_EVAL_SRC OUT.jsonl [--every N]

``BFCL_EVAL_SRC`` is the folder holding the unpacked ``bfcl_eval`` package (the wheel
unzipped, no dependencies installed): only ``ast_checker`` and what it imports are loaded;
``bfcl_eval.constants.model_config`` (which imports every model handler) is replaced by a
stub whose models are all prompt-mode ones without ``underscore_to_dot``: function names
are shown and expected as BFCL's data writes them, dots included (``math.gcd``), as
toolbench imports them; the native format's provider-safe renaming is its own, undone
before scoring.
Every ``--every``-th entry of each category is kept (1 = all; the committed corpus uses 8).
"""

from __future__ import annotations

import copy
import json
import sys
import types
from pathlib import Path
from typing import Any

CATEGORIES = [
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
]


def load_checker(src: Path) -> Any:
    sys.path.insert(0, str(src))
    stub = types.ModuleType("bfcl_eval.constants.model_config")

    class _Cfg:
        underscore_to_dot = False

    class _All(dict[str, Any]):
        def __missing__(self, key: str) -> Any:
            return _Cfg()

    stub.MODEL_CONFIG_MAPPING = _All()  # type: ignore[attr-defined]
    sys.modules["bfcl_eval.constants.model_config"] = stub
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    def check(functions: Any, output: Any, answer: Any, category: str) -> bool:
        try:
            res = ast_checker(functions, output, answer, Language.PYTHON, category, "m")
        except Exception:  # BFCL's checker crashes on some shapes; that is a refusal
            return False
        return bool(res["valid"])

    return check


def first_values(args: dict[str, Any], drop_optional: bool, nested: bool = True) -> dict[str, Any]:
    """The first acceptable value of each argument (answers of a dict's keys, one level)."""
    out: dict[str, Any] = {}
    for k, alts in args.items():
        if not isinstance(alts, list):
            out[k] = copy.deepcopy(alts)
            continue
        vals = [a for a in alts if a != ""]
        if not vals or (drop_optional and "" in alts):
            continue
        v = vals[0]
        if nested and isinstance(v, dict):
            v = first_values(v, drop_optional, False)
        elif nested and isinstance(v, list) and v and all(isinstance(d, dict) for d in v):
            v = [first_values(d, drop_optional, False) for d in v]
        out[k] = copy.deepcopy(v)
    return out


def shout(text: str) -> str:
    return text.upper().replace(" ", "-") + "."


def perturb_value(v: Any) -> list[tuple[str, Any]]:
    if isinstance(v, bool):
        return [("wrong_value", not v), ("wrong_type", "true" if v else "false")]
    if isinstance(v, int):
        return [("wrong_value", v + 1), ("wrong_type", str(v)), ("int_as_float", float(v))]
    if isinstance(v, float):
        out: list[tuple[str, Any]] = [("wrong_value", v + 1.5), ("wrong_type", str(v))]
        if v.is_integer():
            out.append(("float_as_int", int(v)))
        return out
    if isinstance(v, str):
        return [("wrong_value", v + " zz"), ("wrong_type", 7), ("case_punct", shout(v))]
    if isinstance(v, list):
        out = [("wrong_value", [*v, v[0]] if v else ["zz"]), ("wrong_type", "x")]
        if len(v) > 1:
            out.append(("swapped_items", list(reversed(v))))
        if any(isinstance(x, str) for x in v):
            out.append(("case_punct", [shout(x) if isinstance(x, str) else x for x in v]))
        out += [(f"nested_{label}", items) for label, items in perturb_items(v)]
        if v and isinstance(v[0], dict):
            out += [(f"nested_item_{label}", [d, *v[1:]]) for label, d in perturb_dict(v[0])]
        return out
    if isinstance(v, dict):
        out = [("wrong_value", {**v, "zz_extra": 1}), ("wrong_type", "x")]
        return out + [(f"nested_{label}", d) for label, d in perturb_dict(v)]
    return []


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_num(x: Any) -> bool:
    return _is_int(x) or isinstance(x, float)


def perturb_items(v: list[Any]) -> list[tuple[str, list[Any]]]:
    """The items of a list with their types changed (BFCL checks item types one level
    deep: ``type_error:nested``)."""
    out: list[tuple[str, list[Any]]] = []
    if any(_is_int(x) for x in v):
        out.append(("int_as_float", [float(x) if _is_int(x) else x for x in v]))
    if any(isinstance(x, float) and x.is_integer() for x in v):
        whole = [int(x) if isinstance(x, float) and x.is_integer() else x for x in v]
        out.append(("float_as_int", whole))
    if any(isinstance(x, bool) for x in v):
        out.append(("bool_as_int", [int(x) if isinstance(x, bool) else x for x in v]))
    if any(_is_num(x) for x in v):
        out.append(("number_as_string", [str(x) if _is_num(x) else x for x in v]))
    return out


def perturb_dict(d: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A dict's values with their types or spelling changed, one key at a time (BFCL's
    ``dict_checker`` compares values with ``in``: no type check inside a dict)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for k, x in d.items():
        if isinstance(x, bool):
            out.append((f"bool_as_int:{k}", {**d, k: int(x)}))
        elif isinstance(x, int):
            out.append((f"int_as_float:{k}", {**d, k: float(x)}))
            out.append((f"number_as_string:{k}", {**d, k: str(x)}))
        elif isinstance(x, float):
            if x.is_integer():
                out.append((f"float_as_int:{k}", {**d, k: int(x)}))
            out.append((f"number_as_string:{k}", {**d, k: str(x)}))
        elif isinstance(x, str):
            out.append((f"case_punct:{k}", {**d, k: shout(x)}))
            out.append((f"wrong_type:{k}", {**d, k: 7}))
        out.append((f"missing:{k}", {kk: vv for kk, vv in d.items() if kk != k}))
    return out


def cases(entry: dict[str, Any], answer: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    base = [{n: first_values(a, False)} for call in answer for n, a in call.items()]
    out: list[tuple[str, Any]] = [("answer", base)]
    mini = [{n: first_values(a, True)} for call in answer for n, a in call.items()]
    if mini != base:
        out.append(("missing_optional", mini))
    # Every alternative of every argument of the first call.
    ((fname, fargs),) = answer[0].items()
    for k, alts in fargs.items():
        for i, alt in enumerate(alts[1:], 1):
            if alt == "":
                continue
            c = copy.deepcopy(base)
            c[0][fname][k] = alt
            out.append((f"alternative:{k}:{i}", c))
    args0 = base[0][fname]
    for k, v in args0.items():
        for label, new in perturb_value(v):
            c = copy.deepcopy(base)
            c[0][fname][k] = new
            out.append((f"{label}:{k}", c))
        c = copy.deepcopy(base)
        del c[0][fname][k]
        out.append((f"missing:{k}", c))
    c = copy.deepcopy(base)
    c[0][fname]["zz_extra"] = 1
    out.append(("extra_argument", c))
    c = copy.deepcopy(base)
    c[0] = {fname + "_x": args0}
    out.append(("wrong_name", c))
    if len(base) > 1:
        out.append(("swapped_order", list(reversed(base))))
        out.append(("one_call_missing", base[:-1]))
    out.append(("extra_call", [*base, base[0]]))
    out.append(("no_call", []))
    return out


def main(argv: list[str]) -> int:
    data, src, dest = Path(argv[0]), Path(argv[1]), Path(argv[2])
    every = int(argv[argv.index("--every") + 1]) if "--every" in argv else 1
    check = load_checker(src)
    lines = []
    for cat in CATEGORIES:
        qfile = next(data.glob(f"BFCL_v*_{cat}.json"), None)
        if qfile is None:
            continue
        answers = {}
        for line in (qfile.parent / "possible_answer" / qfile.name).read_text().splitlines():
            obj = json.loads(line)
            answers[obj["id"]] = obj["ground_truth"]
        for n, line in enumerate(qfile.read_text().splitlines()):
            if n % every:
                continue
            q = json.loads(line)
            gt = answers[q["id"]]
            verdicts = [
                {"case": label, "output": out, "bfcl": check(q["function"], out, gt, cat)}
                for label, out in cases(q, gt)
            ]
            rec = {
                "id": q["id"],
                "category": cat,
                "question": q["question"],
                "function": q["function"],
                "ground_truth": gt,
                "cases": verdicts,
            }
            lines.append(json.dumps(rec, ensure_ascii=False, sort_keys=True))
    dest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} entries, {sum(len(json.loads(x)['cases']) for x in lines)} cases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
