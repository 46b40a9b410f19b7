"""Import of BFCL's whole single-turn set (``toolbench import bfcl``), wall time.

Run: ``python benchmarks/bench_bfcl_import.py [BFCL_DIR]`` (default ``../shared/bfcl``);
``--tiny`` imports the test fixture (``tests/data/bfcl/fixture``) instead, in a moment.
Target: under 30 s. Also checks that a second import is byte-identical and reports the
time ``scenarios validate`` needs to load the result.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from toolbench.bfcl.importer import import_bfcl
from toolbench.scenarios.loader import validate_paths

TINY = Path(__file__).resolve().parents[1] / "tests" / "data" / "bfcl" / "fixture"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("bfcl_dir", nargs="?", type=Path, default=Path("../shared/bfcl"))
    ap.add_argument("--tiny", action="store_true", help=f"import {TINY} (checks it runs)")
    args = ap.parse_args()
    src = TINY if args.tiny else args.bfcl_dir
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        report = import_bfcl(src, Path(tmp) / "a")
        took = time.perf_counter() - t0
        import_bfcl(src, Path(tmp) / "b")
        a = {p.name: p.read_bytes() for p in (Path(tmp) / "a").iterdir()}
        b = {p.name: p.read_bytes() for p in (Path(tmp) / "b").iterdir()}
        t1 = time.perf_counter()
        errors = validate_paths([Path(tmp) / "a"])
        loaded = time.perf_counter() - t1
    total = sum(report.counts.values())
    print(f"import              : {took:6.1f} s for {total} scenarios in {report.files} files")
    print(f"byte-identical again: {a == b}")
    print(f"validate the output : {loaded:6.1f} s, {len(errors)} errors")


if __name__ == "__main__":
    main()
