"""``run.json`` records ``--batch`` (schema 8), so ``--resume`` completes a batch run as
a batch without the flag and a live run live; a ``run.json`` from before it (schema 7)
reads as not batch, and ``--resume --batch`` of it is taken as the command line says.
A batch run resumed replay-only sends nothing. Against the fake batch server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runner.conftest import run_fake, trials_by_id
from tests.support.fake_batch import FakeBatchServer
from toolbench import codes
from toolbench.providers.fake import Fault, by_last_user
from toolbench.store import read_info, results_path
from toolbench.store.schema import CURRENT

pytestmark = pytest.mark.usefixtures("openai_key")

SCENARIOS = "scenarios:\n" + "".join(
    f"""  - id: {w}
    messages:
      - {{role: user, content: "Say {w}."}}
    expect:
      no_call: true
"""
    for w in ("alpha", "beta")
)
SLOW_DOWN = Fault(429, b'{"error": {"message": "slow down"}}')


@pytest.fixture
def two(tmp_path: Path) -> Path:
    path = tmp_path / "two.yaml"
    path.write_text(SCENARIOS, encoding="utf-8")
    return path


def _failed_batch_run(server: FakeBatchServer, tmp_path: Path, two: Path) -> dict[str, str]:
    """A batch run whose batch answered beta 429 (submitted again by a batch resume)."""
    assert run_fake(server, tmp_path, two, "--batch") == 0
    trials = trials_by_id(tmp_path / "run")
    assert {s: t.error_code for s, t in trials.items()} == {
        "alpha": None, "beta": codes.INFRA_BATCH_FAILED,
    }  # fmt: skip
    return {s: t.model_dump_json() for s, t in trials.items()}


def _as_schema_7(run: Path) -> None:
    """Rewrite the run's run.json as the previous toolbench wrote it: no ``batch``."""
    path = run / "run.json"
    info = json.loads(path.read_text(encoding="utf-8"))
    info.pop("batch")
    path.write_text(json.dumps({**info, "schema_version": 7}), encoding="utf-8")


def test_run_json_records_whether_the_run_is_a_batch(tmp_path: Path, two: Path) -> None:
    with FakeBatchServer(by_last_user({}, default="Fine.")) as server:
        assert run_fake(server, tmp_path, two, "--batch", out="batch") == 0
        assert run_fake(server, tmp_path, two, out="live", formats="xml") == 0
    for name, batch in (("batch", True), ("live", False)):
        written = json.loads((tmp_path / name / "run.json").read_text(encoding="utf-8"))
        assert (written["schema_version"], written["batch"]) == (CURRENT, batch) == (8, batch)
        info = read_info(tmp_path / name)
        assert info is not None and info.batch is batch


def test_plain_resume_of_a_batch_run_submits_again_as_a_batch(tmp_path: Path, two: Path) -> None:
    table = {"Say beta.": SLOW_DOWN}
    with FakeBatchServer(by_last_user(table, default="Fine.")) as server:
        before = _failed_batch_run(server, tmp_path, two)
        table.clear()
        assert run_fake(server, tmp_path, two, "--resume", models=None, formats=None) == 0
        assert sorted(server.batches) == ["batch_0", "batch_1"]
        assert len(server.batches["batch_1"]["_requests"]) == 1
        assert "Say beta." in json.dumps(server.batches["batch_1"]["_requests"])
        assert server.live == []  # as a batch, not live
    trials = trials_by_id(tmp_path / "run")
    assert {t.status for t in trials.values()} == {"ok"}
    assert trials["alpha"].model_dump_json() == before["alpha"]


def test_a_schema_7_run_json_reads_as_not_batch(tmp_path: Path, two: Path) -> None:
    """Before schema 8 a batch run's run.json said nothing of it: a plain --resume is a
    live run's (a batch's faults count as written), --resume --batch a batch run's."""
    table = {"Say beta.": SLOW_DOWN}
    with FakeBatchServer(by_last_user(table, default="Fine.")) as server:
        before = _failed_batch_run(server, tmp_path, two)
        _as_schema_7(tmp_path / "run")
        info = read_info(tmp_path / "run")
        assert info is not None and info.schema_version == CURRENT and info.batch is None
        table.clear()
        assert run_fake(server, tmp_path, two, "--resume", models=None, formats=None) == 0
        assert sorted(server.batches) == ["batch_0"] and server.live == []
        assert {s: t.model_dump_json() for s, t in trials_by_id(tmp_path / "run").items()} == (
            before
        )
        assert run_fake(server, tmp_path, two, "--resume", "--batch",
                        models=None, formats=None) == 0  # fmt: skip
        assert sorted(server.batches) == ["batch_0", "batch_1"] and server.live == []
    assert {t.status for t in trials_by_id(tmp_path / "run").values()} == {"ok"}


def test_a_batch_run_resumed_replay_only_sends_nothing(tmp_path: Path, two: Path) -> None:
    """--record none given to resume a batch run replays: nothing to batch, no refusal
    of a --batch the user did not type; the batch's faults stay as written."""
    with FakeBatchServer(by_last_user({"Say beta.": SLOW_DOWN}, default="Fine.")) as server:
        before = _failed_batch_run(server, tmp_path, two)
        rc = run_fake(server, tmp_path, two, "--resume", "--record", "none",
                      models=None, formats=None)  # fmt: skip
        assert rc == 0
        assert sorted(server.batches) == ["batch_0"] and server.live == []
    lines = results_path(tmp_path / "run").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    assert {s: t.model_dump_json() for s, t in trials_by_id(tmp_path / "run").items()} == before
