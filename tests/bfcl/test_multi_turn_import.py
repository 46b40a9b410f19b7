"""BFCL's multi-turn categories imported from the bfcl-eval wheel, without its dependencies."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolbench.bfcl.backends import backend_class
from toolbench.bfcl.convert import BadInput, SkipEntry
from toolbench.bfcl.multi_turn import (
    ADDED_FUNCTIONS,
    CATEGORIES,
    convert_multi_turn,
    entry_scenario,
    ground_call,
    import_multi_turn,
)
from toolbench.bfcl.package import PACKAGE, package_dir, unpack
from toolbench.environments import EnvironmentUnavailable, Session
from toolbench.scenarios import load_scenarios
from toolbench.scenarios.model import Scenario


def entries(root: Path, cat: str, n: int = 3) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    data = root / PACKAGE / "data"
    qs = [json.loads(x) for x in (data / f"BFCL_v4_{cat}.json").read_text().splitlines()[:n]]
    answers = {}
    for line in (data / "possible_answer" / f"BFCL_v4_{cat}.json").read_text().splitlines():
        a = json.loads(line)
        answers[a["id"]] = a
    return [(q, answers[q["id"]]) for q in qs]


def test_the_package_init_never_runs(bfcl_root: Path) -> None:
    code = (
        "import sys; from toolbench.bfcl.backends import backend_class;"
        "backend_class('GorillaFileSystem'); backend_class('MathAPI');"
        "m = sys.modules['bfcl_eval']; print(getattr(m, '__file__', None));"
        "print(sorted(k for k in sys.modules if k.split('.')[0] in"
        " ('torch', 'numpy', 'sentence_transformers', 'faiss')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split("\n")  # fmt: skip
    assert out[0] == "None"  # a stand-in: bfcl_eval/__init__.py was not executed
    assert out[1] == "[]"


def test_unpack_keeps_only_what_the_suite_needs(bfcl_root: Path, tmp_path: Path) -> None:
    copy = unpack(bfcl_root, tmp_path / "again")  # from an unpacked folder this time
    pkg = package_dir(copy)
    assert pkg is not None
    kept = {p.relative_to(pkg).parts[0] for p in pkg.rglob("*") if p.is_file()}
    assert kept == {"constants", "data", "eval_checker"}
    assert not (pkg / "model_handler").exists()
    with pytest.raises(BadInput.__mro__[1]):  # UserError: not a bfcl-eval source
        unpack(tmp_path, tmp_path / "none")


def test_ground_truth_calls_are_named_by_the_backend_signature(bfcl_root: Path) -> None:
    import inspect

    cls = backend_class("GorillaFileSystem")
    sig = inspect.signature(cls.sort)
    methods = {"sort": sig.replace(parameters=list(sig.parameters.values())[1:])}
    assert ground_call("sort('final_report.pdf')", methods) == {
        "name": "sort", "arguments": {"file_name": "final_report.pdf"}}  # fmt: skip
    for bad in ("sort(", "x.sort('a')", "nope('a')", "sort(1, 2, 3)", "sort(name=f())"):
        with pytest.raises(SkipEntry):
            ground_call(bad, methods)


@pytest.mark.parametrize("cat", CATEGORIES)
def test_each_category_converts(bfcl_root: Path, cat: str) -> None:
    data = bfcl_root / PACKAGE / "data"
    for q, a in entries(bfcl_root, cat):
        sc = Scenario.model_validate(entry_scenario(cat, q, a, data))
        assert sc.expect.kind == "loop" and sc.expect.max_turns == 20
        assert len(sc.expect.turns or []) == len(q["question"])
        assert [e.name for e in sc.environment] == [f"bfcl.{c}" for c in q["involved_classes"]]
        assert all(bool(e.state.get("long_context")) == (cat.endswith("long_context"))
                   for e in sc.environment)  # fmt: skip
        held = {int(k): v for k, v in (q.get("missed_function") or {}).items()}
        for n, names in held.items():
            assert not set(names) & {t.name for t in sc.tools}
            assert {t.name for t in sc.turns[n - 1].tools} == set(names)
            assert sc.turns[n - 1].messages[0].content == ADDED_FUNCTIONS
        asks = [n for n, t in enumerate(sc.expect.turns or []) if t.ask]
        empty = [n for n, calls in enumerate(a["ground_truth"]) if not calls]
        assert asks == (empty if cat in ("multi_turn_miss_func", "multi_turn_miss_param") else [])


def _trimmed(root: Path, tmp: Path, n: int, edit: Any = None) -> Path:
    """A copy whose category files hold their first ``n`` entries."""
    out = tmp / "trim"
    shutil.copytree(root / PACKAGE, out / PACKAGE)
    data = out / PACKAGE / "data"
    for cat in CATEGORIES:
        for f in (data / f"BFCL_v4_{cat}.json", data / "possible_answer" / f"BFCL_v4_{cat}.json"):
            lines = f.read_text().splitlines()[:n]
            if edit is not None:
                lines = [edit(f, line) for line in lines]
            f.write_text("\n".join(lines) + "\n")
    return out


def test_one_command_imports_loadable_files(
    bfcl_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLBENCH_BFCL_DIR", str(tmp_path / "cache"))
    source = _trimmed(bfcl_root, tmp_path, 2)
    report = import_multi_turn(source, tmp_path / "out")
    assert report.counts == dict.fromkeys(CATEGORIES, 2)
    scs = load_scenarios([tmp_path / "out"])
    assert len(scs) == 8 and all(sc.expect.kind == "loop" for sc in scs)
    assert package_dir(tmp_path / "cache") is not None  # the copy the backends run from
    s = Session.open([(e.name, e.state) for e in scs[0].environment])
    assert s.snapshot()


def test_a_ground_truth_calling_a_held_out_function_early_is_a_bad_entry(
    bfcl_root: Path, tmp_path: Path
) -> None:
    def edit(f: Path, line: str) -> str:
        obj = json.loads(line)
        if "possible_answer" in str(f) and obj["id"] == "multi_turn_miss_func_0":
            obj["ground_truth"][0].append("sort('final_report.pdf')")  # held out until 3
        return json.dumps(obj)

    root = _trimmed(bfcl_root, tmp_path, 1, edit)
    with pytest.raises(BadInput, match="held out until a later turn"):
        convert_multi_turn(root)
    files, report = convert_multi_turn(root, skip_bad=True)
    assert report.bad and "multi_turn_miss_func_0" in report.bad[0]
    assert report.counts["multi_turn_miss_func"] == 0 and files


def test_without_a_copy_the_backend_is_unavailable(
    bfcl_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLBENCH_BFCL_DIR", str(tmp_path / "empty"))
    monkeypatch.delitem(sys.modules, "bfcl_eval", raising=False)
    for name in [m for m in sys.modules if m.startswith("bfcl_eval.")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(EnvironmentUnavailable) as err:
        Session.open([("bfcl.TicketAPI", {"config": {}})])
    assert err.value.code == "environment.unavailable"
    assert "toolbench import bfcl --multi-turn" in str(err.value)
