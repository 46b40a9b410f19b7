"""The bfcl-eval copy the multi-turn tests read: the one configured or cached, else the
pinned wheel fetched once per session (network); skipped with the reason when neither."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolbench.bfcl.package import cache_root, fetch, package_dir
from toolbench.errors import UserError


@pytest.fixture(scope="session")
def bfcl_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    saved = os.environ.get("TOOLBENCH_BFCL_DIR")
    root = cache_root()
    if package_dir(root) is None:
        root = tmp_path_factory.mktemp("bfcl") / "copy"
        try:
            fetch(root)
        except UserError as exc:
            pytest.skip(f"bfcl-eval is not cached and cannot be fetched: {exc}")
    os.environ["TOOLBENCH_BFCL_DIR"] = str(root)
    try:
        yield root
    finally:
        if saved is None:
            os.environ.pop("TOOLBENCH_BFCL_DIR", None)
        else:
            os.environ["TOOLBENCH_BFCL_DIR"] = saved
