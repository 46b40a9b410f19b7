"""Regenerate ``scenarios/bfcl-smoke/``: about 100 imported BFCL entries, tagged ``bfcl-smoke``.

    PYTHONPATH=harness python tests/data/bfcl/make_smoke.py BFCL_DATA_DIR scenarios/bfcl-smoke

Entries are spread evenly over each category (every k-th line), so the selection is the
same on every run and covers each category in proportion to what a small CI replay can
carry. The folder is not part of the default suite: ``run --scenarios bfcl-smoke``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from toolbench.bfcl.importer import convert

PER_CATEGORY = {
    "simple_python": 15,
    "multiple": 12,
    "parallel": 10,
    "parallel_multiple": 10,
    "irrelevance": 10,
    "live_simple": 12,
    "live_multiple": 15,
    "live_parallel": 4,
    "live_parallel_multiple": 4,
    "live_irrelevance": 8,
}


def main(argv: list[str]) -> int:
    files, _ = convert(Path(argv[0]))
    by_cat: dict[str, list[dict[str, object]]] = {}
    for name in sorted(files):
        cat = name.rsplit("-", 1)[0]
        by_cat.setdefault(cat, []).extend(yaml.safe_load(files[name])["scenarios"])
    picked = []
    for cat, n in PER_CATEGORY.items():
        items = by_cat.get(cat, [])
        step = max(1, len(items) // n)
        for sc in items[::step][:n]:
            sc["tags"] = [*sc["tags"], "bfcl-smoke"]  # type: ignore[misc]
            picked.append(sc)
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    text = yaml.dump({"scenarios": picked}, sort_keys=False, allow_unicode=True, width=1_000_000)
    header = (
        "# bfcl-smoke: BFCL v4 entries imported by `toolbench import bfcl` (Apache-2.0,\n"
        "# ShishirPatil/gorilla); regenerate with tests/data/bfcl/make_smoke.py.\n"
    )
    (out / "bfcl-smoke.yaml").write_text(header + text, encoding="utf-8")
    print(f"{len(picked)} scenarios")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
