"""Build the real-reply corpus (``*.jsonl`` beside this file) from copied source chunks.

    python tests/data/real_replies/build.py RAW_DIR BFCL_DATA_DIR BFCL_EVAL_SRC OUT_DIR

``RAW_DIR`` holds the chunks copied by hand from public BFCL result files (see README.md
beside this file): ``<prefix>.<n>.jsonstr``, each a JSON string whose value is the
copied lines (one ``{"id": ..., "result": ...}`` object a line, the source's other
fields dropped). ``SOURCES`` names, for every prefix, where the lines come from.

Every reply gets the functions BFCL offered with its question (``tools``, from the
question files in ``BFCL_DATA_DIR``) and **BFCL's own verdict on it**: the prompt-mode
decoder (``default_decode_ast_prompting``) and the checker (``ast_checker``; for the
irrelevance categories the relevance rule of ``eval_runner``) of the unpacked
``bfcl_eval`` wheel in ``BFCL_EVAL_SRC``, against BFCL's answers in ``BFCL_DATA_DIR``,
exactly as ``bfcl evaluate`` judges a prompt-mode model (model settings stubbed: names
are shown and expected as the data writes them, dots included). Run with toolbench's
environment, which has the few packages the imported modules need; the Java and
JavaScript parsers (tree-sitter) are replaced by stubs, as only Python is judged.
"""

from __future__ import annotations

import json
import os
import re
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Source = dict[str, str]

HUANZHI = "HuanzhiMao/gorilla"
PV_PATH = (
    "berkeley-function-call-leaderboard/result/{dir}/prompt_variation/BFCL_v3_{cat}_result"
    "_function_doc_format_json_has_available_tools_tag_False_has_tool_call_tag_False"
    "_prompt_format_{fmt}_prompt_style_{style}_return_format_Python.json"
)


def pv(model: str, cat: str, commit: str, fmt: str = "plaintext", style: str = "classic") -> Source:
    """A result file of BFCL's prompt-variation study (Python call lists asked for)."""
    return {
        "source": f"bfcl-prompt-variation:{fmt}:{style}",
        "model": model,
        "repo": HUANZHI,
        "path": PV_PATH.format(dir=model.replace("/", "_"), cat=cat, fmt=fmt, style=style),
        "commit": commit,
    }


def v4(model: str, repo: str, path: str, commit: str, source: str, **more: str) -> Source:
    return {"source": source, "model": model, "repo": repo, "path": path, "commit": commit, **more}


GORILLA = "ShishirPatil/gorilla"
LB = "berkeley-function-call-leaderboard/"
SOURCES: dict[str, Source] = {
    "pv_gpt-4o-2024-11-20_live_multiple": pv(
        "gpt-4o-2024-11-20", "live_multiple", "53cf440622f9ae60ea1e782b5709a910c845ec44"
    ),
    "pvmd_gpt-4o-2024-11-20_simple": pv(
        "gpt-4o-2024-11-20", "simple", "653bce213ad790c789b5678173049ae8a87b6784", fmt="markdown"
    ),
    "pv_claude-3-7-sonnet-20250219_simple": pv(
        "claude-3-7-sonnet-20250219", "simple", "1026d1f8b2a1fb5692fe59a0fd60bf0ac8a6d555"
    ),
    "pvexp_claude-3-7-sonnet-20250219_live_multiple": pv(
        "claude-3-7-sonnet-20250219",
        "live_multiple",
        "653bce213ad790c789b5678173049ae8a87b6784",
        style="experimental",
    ),
    "pv_mistral-large-2411_parallel": pv(
        "mistral-large-2411", "parallel", "3e1bbec8990ad9d6d249ab61c8b2c6f32283c06b"
    ),
    "pv_gemini-2.0-flash-001_simple": pv(
        "gemini-2.0-flash-001", "simple", "1026d1f8b2a1fb5692fe59a0fd60bf0ac8a6d555"
    ),
    "pv_grok-3-mini-beta_multiple": pv(
        "grok-3-mini-beta", "multiple", "5bf07b1a14ebb703582fee9ad5ddbd59ae32502e"
    ),
    "pv_gpt-4o-mini-2024-07-18_live_simple": pv(
        "gpt-4o-mini-2024-07-18", "live_simple", "15a8934af83f85d90523301ada2767e293eddfa6"
    ),
    "pv_claude-3-5-haiku-20241022_live_parallel": pv(
        "claude-3-5-haiku-20241022", "live_parallel", "3e1bbec8990ad9d6d249ab61c8b2c6f32283c06b"
    ),
    "pv_BitAgent-8B_live_multiple": pv(
        "BitAgent/BitAgent-8B", "live_multiple", "143abef66338efe3476f60db7559546092be067e"
    ),
    "airev_simple_python": v4(
        "airev-ai/AIREV-Agent-0.8B",
        GORILLA,
        LB + "result/airev-ai/AIREV-Agent-0.8B/BFCL_v4_simple_python_result.json",
        "41bbf803f27b548957b5f0b79d0e95b8987e57da",
        "bfcl-v4-submission",
    ),
    "airev_irrelevance": v4(
        "airev-ai/AIREV-Agent-0.8B",
        GORILLA,
        LB + "result/airev-ai/AIREV-Agent-0.8B/BFCL_v4_irrelevance_result.json",
        "7a7e2f5210119e21d589d279f109f53cd631befe",
        "bfcl-v4-submission",
    ),
    "v4_gemma4-e4b-toolcall-v02_parallel": v4(
        "roshangrewal/gemma4-e4b-toolcall-v02",
        GORILLA,
        LB + "result/roshangrewal_gemma4-e4b-toolcall-v02/non_live/BFCL_v4_parallel_result.json",
        "c46a818b53da53fcde8150b1da020d62bb633985",
        "bfcl-v4-submission",
    ),
    "airev_live_irrelevance": v4(
        "airev-ai/AIREV-Agent-0.8B",
        GORILLA,
        LB + "result/airev-ai/AIREV-Agent-0.8B/BFCL_v4_live_irrelevance_result.json",
        "7a7e2f5210119e21d589d279f109f53cd631befe",
        "bfcl-v4-submission",
    ),
    "v1_claude-3-haiku-20240307_parallel": v4(
        "claude-3-haiku-20240307",
        "BoundaryML/berkeley-gorilla",
        LB + "result/claude-3-haiku-20240307/"
        "gorilla_openfunctions_v1_test_parallel_function_result.json",
        "d43310a3bfe930e9b4ceb94bbe22abee499798fa",
        "bfcl-v1-fork",
        idx_category="parallel",
    ),
}
"""Every raw chunk prefix and where its lines were copied from (repository, path, commit)."""

NO_CALL = {"irrelevance", "live_irrelevance"}


def category(entry_id: str) -> str:
    """BFCL v4's category of an id (v3's ``simple_N`` is v4's ``simple_python_N``)."""
    cat = re.sub(r"_\d+(-\d+)*$", "", entry_id)
    return "simple_python" if cat == "simple" else cat


def v4_id(entry_id: str) -> str:
    return re.sub(r"^simple_(\d)", r"simple_python_\1", entry_id)


def read_jsonl(path: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                out[rec["id"]] = rec
    return out


@dataclass
class Bfcl:
    """BFCL's own pieces, as ``bfcl evaluate`` uses them for a prompt-mode model."""

    decode: Callable[[str], Any]
    is_empty: Callable[[Any], bool]
    is_call_format: Callable[[Any], bool]
    check: Callable[[Any, Any, Any, str], dict[str, Any]]


def load_bfcl(src: Path) -> Bfcl:
    """BFCL's decoder, emptiness test, format test and checker from the wheel in ``src``."""
    sys.path.insert(0, str(src))
    os.environ.setdefault("BFCL_PROJECT_ROOT", "/tmp/bfcl-project-root")
    for name, attr in (
        ("java_parser", "parse_java_function_call"),
        ("js_parser", "parse_javascript_function_call"),
    ):
        stub = types.ModuleType(f"bfcl_eval.model_handler.parser.{name}")
        setattr(stub, attr, _not_python)
        sys.modules[stub.__name__] = stub
    config = types.ModuleType("bfcl_eval.constants.model_config")

    class _Cfg:
        underscore_to_dot = False

    class _All(dict[str, Any]):
        def __missing__(self, key: str) -> Any:
            return _Cfg()

    config.MODEL_CONFIG_MAPPING = _All()  # type: ignore[attr-defined]
    sys.modules[config.__name__] = config
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
    from bfcl_eval.model_handler.utils import default_decode_ast_prompting
    from bfcl_eval.utils import is_empty_output, is_function_calling_format_output

    def check(functions: Any, decoded: Any, answer: Any, cat: str) -> dict[str, Any]:
        result: dict[str, Any] = ast_checker(functions, decoded, answer, Language.PYTHON, cat, "m")
        return result

    return Bfcl(
        default_decode_ast_prompting, is_empty_output, is_function_calling_format_output, check
    )


def _not_python(text: str) -> Any:
    raise ValueError("only Python is judged here")


def bfcl_verdict(
    bfcl: Bfcl, cat: str, reply: str, functions: Any, answer: Any
) -> tuple[bool, str, int | None]:
    """(valid, error type, calls decoded or None) as ``bfcl evaluate`` judges one reply:
    ``_evaluate_single_ast_entry`` and ``_evaluate_single_relevance_entry`` of its
    ``eval_runner``."""
    try:
        decoded = bfcl.decode(reply)
    except Exception:  # BFCL's own rule: any decoder failure
        if cat in NO_CALL:
            return True, "", None
        return False, "ast_decoder:decoder_failed", None
    ok_format = bfcl.is_call_format(decoded)
    n = len(decoded) if ok_format else None
    if cat in NO_CALL:
        called = not bfcl.is_empty(decoded)
        return (not called), ("irrelevance_error:decoder_success" if called else ""), n
    if not ok_format:
        return False, "ast_decoder:decoder_wrong_output_format", n
    try:
        res = bfcl.check(functions, decoded, answer, cat)
    except Exception:  # the checker crashes on some shapes: a refusal
        return False, "checker_crash", n
    return bool(res["valid"]), "" if res["valid"] else str(res.get("error_type", "")), n


def source_lines(raw: Path, prefix: str) -> list[dict[str, Any]]:
    """The copied lines of one source: its chunks, or (to judge the committed corpus
    again, e.g. with a newer checker) the replies of its ``.jsonl`` when ``raw`` holds no
    chunk of it."""
    chunks = sorted(raw.glob(f"{prefix}.*.jsonstr"))
    if not chunks and (raw / f"{prefix}.jsonl").exists():
        recs = read_jsonl(raw / f"{prefix}.jsonl").values()
        return [{"id": r["id"], "result": r["reply"]} for r in recs]
    out = []
    for chunk in chunks:
        text = json.loads(chunk.read_text(encoding="utf-8"))
        out.extend(json.loads(line) for line in text.splitlines() if line.strip())
    return out


class Bench:
    """BFCL's questions and answers by category, read once."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self.questions: dict[str, dict[str, dict[str, Any]]] = {}
        self.answers: dict[str, dict[str, dict[str, Any]]] = {}

    def entry(self, cat: str, eid: str) -> tuple[dict[str, Any] | None, Any, bool]:
        """(question, ground truth, whether BFCL judges the entry) for one id."""
        if cat not in self.questions:
            self.questions[cat] = read_jsonl(self.data / f"BFCL_v4_{cat}.json")
            path = self.data / "possible_answer" / f"BFCL_v4_{cat}.json"
            self.answers[cat] = read_jsonl(path)
        q = self.questions[cat].get(eid)
        answer = self.answers[cat].get(eid)
        judged = q is not None and (cat in NO_CALL or answer is not None)
        return q, (answer or {}).get("ground_truth"), judged


def record(bfcl: Bfcl, bench: Bench, meta: Source, src_rec: dict[str, Any]) -> dict[str, Any]:
    """One corpus line: the reply, the functions offered, and BFCL's verdict on it."""
    # BFCL v1 numbers a category's lines (idx) where later versions name them (id)
    v1 = "idx" in src_rec
    eid = f"{meta['idx_category']}_{src_rec['idx']}" if v1 else v4_id(src_rec["id"])
    cat = category(eid)
    q, answer, judged = bench.entry(cat, eid)
    text = src_rec["result"]
    rec: dict[str, Any] = {
        "source": meta["source"],
        "model": meta["model"],
        "id": eid,
        "category": cat,
        "tools": q["function"] if q else None,
        "reply": text,
    }
    if q is not None and judged:
        valid, err, n = bfcl_verdict(bfcl, cat, text, q["function"], answer)
        rec.update(bfcl_valid=valid, bfcl_error_type=err, bfcl_decoded_calls=n)
    # an id mapped to the wrong question shows as calls to functions not offered
    named = q is not None and any(f["name"] in text for f in q["function"])
    if q and cat not in NO_CALL and "(" in text and not named:
        print(f"  {meta['model']} {eid}: the reply names none of the offered functions")
    return rec


def main(raw: Path, data: Path, src: Path, out: Path) -> None:
    bfcl, bench = load_bfcl(src), Bench(data)
    for prefix, meta in SOURCES.items():
        rows = [record(bfcl, bench, meta, line) for line in source_lines(raw, prefix)]
        if not rows:
            continue
        path = out / f"{prefix}.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for rec in rows:
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        print(f"{path.name}: {len(rows)} replies")


if __name__ == "__main__":
    main(*(Path(a) for a in sys.argv[1:5]))
