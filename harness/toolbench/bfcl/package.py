"""BFCL's multi-turn data and backends, used from the ``bfcl-eval`` wheel without its
dependency tree.

``bfcl-eval`` (Apache-2.0) declares heavy dependencies (torch through
sentence-transformers, faiss, a pinned numpy), but its multi-turn backends need only the
standard library and mpmath, and its data is plain JSON. So toolbench never installs it:
:func:`fetch` downloads the pinned wheel alone (``pip download --no-deps``) and
:func:`unpack` keeps the files the multi-turn suite needs in a cache folder; a copy the
user already has (a ``.whl``, an unpacked or installed ``bfcl_eval`` folder) is unpacked
the same way. :func:`load_module` then imports a module of that copy by its file path,
with the packages above it stood in by empty modules, so ``bfcl_eval/__init__.py``
(which imports the heavy dependencies) never runs.

Where the copy is: ``$TOOLBENCH_BFCL_DIR`` when set, else
``$XDG_CACHE_HOME/toolbench/bfcl/<version>`` (``~/.cache`` by default). A trial that needs
a backend where there is none is ``environment.unavailable``, naming the command that
fetches it.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import types
import zipfile
from pathlib import Path

from toolbench.errors import UserError

PINNED_VERSION = "2026.3.23"
"""The ``bfcl-eval`` release whose data and backends toolbench imports and checks."""

PACKAGE = "bfcl_eval"
BACKENDS = f"{PACKAGE}.eval_checker.multi_turn_eval.func_source_code"

KEPT = (
    f"{PACKAGE}/eval_checker/multi_turn_eval/",
    f"{PACKAGE}/constants/executable_backend_config.py",
    f"{PACKAGE}/data/BFCL_v4_multi_turn_",
    f"{PACKAGE}/data/possible_answer/BFCL_v4_multi_turn_",
    f"{PACKAGE}/data/multi_turn_func_doc/",
)
"""What the multi-turn suite needs of the package (path prefixes inside it)."""

FETCH_COMMAND = "toolbench import bfcl --multi-turn -o DIR"


def cache_root() -> Path:
    """Where unpacked copies live: ``$TOOLBENCH_BFCL_DIR``, else the user's cache."""
    env = os.environ.get("TOOLBENCH_BFCL_DIR")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "toolbench" / "bfcl" / PINNED_VERSION


def package_dir(root: Path | None = None) -> Path | None:
    """The unpacked ``bfcl_eval`` folder, None when there is none."""
    folder = (root or cache_root()) / PACKAGE
    return folder if (folder / "eval_checker" / "multi_turn_eval").is_dir() else None


def _kept(name: str) -> bool:
    return name.startswith(KEPT) and not name.endswith("/")


def unpack(source: Path, root: Path | None = None) -> Path:
    """Copy what the multi-turn suite needs from ``source`` (a ``.whl``, or a folder that
    is or holds ``bfcl_eval``) into ``root`` (default: :func:`cache_root`); the folder
    holding ``bfcl_eval``. Written to a temporary folder and renamed: never half there."""
    root = root or cache_root()
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".bfcl-", dir=root.parent))
    try:
        if source.is_file() and source.suffix == ".whl":
            with zipfile.ZipFile(source) as whl:
                names = [n for n in whl.namelist() if _kept(n)]
                if not names:
                    raise UserError(f"{source}: not a bfcl-eval wheel (no {PACKAGE}/ inside)")
                for name in names:
                    target = tmp / name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(whl.read(name))
        else:
            pkg = source if source.name == PACKAGE else source / PACKAGE
            if not pkg.is_dir():
                raise UserError(f"{source}: no {PACKAGE} folder here (nor a .whl file)")
            for path in sorted(pkg.rglob("*")):
                rel = f"{PACKAGE}/{path.relative_to(pkg).as_posix()}"
                if path.is_file() and _kept(rel):
                    (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, tmp / rel)
        if package_dir(tmp) is None:
            raise UserError(f"{source}: holds no multi-turn backends ({KEPT[0]})")
        if root.exists():
            shutil.rmtree(root)
        tmp.rename(root)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return root


def fetch(root: Path | None = None, version: str = PINNED_VERSION) -> Path:
    """Download the pinned wheel alone (no dependencies) and :func:`unpack` it."""
    with tempfile.TemporaryDirectory(prefix="toolbench-bfcl-") as where:
        command = [sys.executable, "-m", "pip", "download", f"bfcl-eval=={version}",
                   "--no-deps", "--only-binary=:all:", "--quiet", "-d", where]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        wheels = sorted(Path(where).glob("bfcl_eval-*.whl"))
        if done.returncode != 0 or not wheels:
            last = (done.stderr.strip().splitlines() or ["no wheel downloaded"])[-1]
            raise UserError(f"could not download bfcl-eval=={version}: {last}")
        return unpack(wheels[0], root)


def _stand_in(name: str, folder: Path) -> None:
    """An empty package module called ``name`` whose submodules are read from ``folder``."""
    if name in sys.modules:
        return
    module = types.ModuleType(name)
    module.__path__ = [str(folder)]
    module.__package__ = name
    sys.modules[name] = module


def load_module(dotted: str, root: Path | None = None) -> types.ModuleType:
    """Import ``bfcl_eval.<...>`` from the unpacked copy by file path, its parent
    packages stood in by empty modules (their ``__init__`` never runs). A ``bfcl_eval``
    imported already (the user installed it) is used as it is."""
    pkg = package_dir(root)
    if pkg is None and PACKAGE not in sys.modules:
        raise FileNotFoundError(f"no unpacked bfcl-eval in {root or cache_root()}")
    if pkg is not None:
        parts = dotted.split(".")[:-1]
        for depth in range(1, len(parts) + 1):
            _stand_in(".".join(parts[:depth]), pkg.joinpath(*parts[1:depth]))
    return importlib.import_module(dotted)
