"""``--executor`` and ``--address`` refused through the CLI: one line naming the option,
exit 2, before any call and without a run directory."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from toolbench.cli.app import run_cli


def _refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    out = tmp_path / "run"
    argv = ["run", "--models", "openai/fake", "--out", str(out), "--quiet", *extra]
    assert run_cli(argv) == 2
    assert not out.exists()
    (line,) = capsys.readouterr().err.strip().splitlines()
    return line


def test_unknown_executor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _refused(tmp_path, capsys, "--executor", "dask")
    assert line == "error: --executor: must be one of local, ray (got 'dask')"


def test_address_without_ray(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _refused(tmp_path, capsys, "--address", "10.0.0.1:6379")
    assert line == "error: --address: only with --executor ray (the local executor has no cluster)"


def test_ray_not_installed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray: ImportError
    line = _refused(tmp_path, capsys, "--executor", "ray")
    assert line == (
        "error: --executor: ray is not installed; install the extra: "
        "pip install 'toolbench-harness[ray]'"
    )


def test_no_cluster_at_address(tmp_path: Path) -> None:
    """Through the CLI in its own process: this test package's shared Ray instance
    (``conftest.cluster``) is connected in the pytest process, where the executor would
    rightly use it instead of the address."""
    pytest.importorskip("ray", reason="the ray extra is not installed")
    out = tmp_path / "run"
    with socket.socket() as s:  # a port nothing listens on: bound, never listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        argv = ["run", "--models", "openai/fake", "--out", str(out), "--quiet",
                "--executor", "ray", "--address", f"127.0.0.1:{port}"]  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "toolbench", *argv], capture_output=True, text=True,
            timeout=120, cwd=tmp_path,
        )  # fmt: skip
    want = f"error: --address: no Ray cluster at 127.0.0.1:{port} (Connection refused)\n"
    assert (done.returncode, done.stderr) == (2, want)
    assert not out.exists()


def test_address_not_host_port(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("ray", reason="the ray extra is not installed")
    line = _refused(tmp_path, capsys, "--executor", "ray", "--address", "cluster")
    assert line == "error: --address: 'cluster' is not HOST:PORT, ray://HOST:PORT or auto"
