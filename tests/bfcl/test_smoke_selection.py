"""The ``bfcl-smoke`` selection: committed, opt-in, never part of the default run."""

from __future__ import annotations

from collections import Counter

import pytest

from toolbench.errors import UnknownNameError
from toolbench.scenarios.loader import bundled_dir, opt_in_suites, select_scenarios


def test_default_selection_is_the_34_bundled_scenarios_only() -> None:
    default = select_scenarios(None)
    assert len(default) == 34
    assert not any("bfcl-smoke" in sc.tags for sc in default)
    assert all(sc.source and "bfcl-smoke" not in sc.source for sc in default)


def test_bfcl_smoke_is_selected_by_name() -> None:
    root = bundled_dir()
    assert opt_in_suites() == {"bfcl-smoke": root / "bfcl-smoke", "streaming": root / "streaming"}
    smoke = select_scenarios(["bfcl-smoke"])
    assert len(smoke) == 100
    assert all("bfcl-smoke" in sc.tags and "bfcl" in sc.tags for sc in smoke)
    cats = Counter(
        next(t for t in sc.tags if t.startswith("bfcl-") and t != "bfcl-smoke") for sc in smoke
    )
    assert len(cats) == 10  # every imported category is represented
    both = select_scenarios(["bfcl-smoke", "single"])
    assert len(both) == 100 + len(select_scenarios(["single"]))


def test_a_misspelt_suite_gets_a_did_you_mean() -> None:
    with pytest.raises(UnknownNameError, match="Did you mean 'bfcl-smoke'"):
        select_scenarios(["bfcl-smok"])
