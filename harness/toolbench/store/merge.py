"""``toolbench merge``: several run directories of one matrix into one run, each trial once.

Runs of the same matrix (the same models, formats, scenarios and samples, and the same
settings that change what a trial measures) can be written in parts: on two machines,
after a ``--budget`` stop, or again for the trials a provider failed. Merging them gives
one run every report reads as usual.

Which line a trial keeps: the first run given that holds it, except that a trial that
reached the model (status ``ok``) replaces one that did not (an infra, cassette or
harness error), so re-running failed trials and merging the re-run repairs a run.
Runs whose matrices differ are refused, naming the field and both runs; so are runs
written by different toolbench versions or from scenario files whose contents differ
(``run.json`` ``scenario_files``: their SHA-256 by path relative to the run's scenario
directory, compared when both runs recorded them). Trials keep
their ``run_id`` (the run that produced them); the merged ``run.json`` lists the runs
in ``merged_from``. Output order: run by run as given, each in its file order.

Shards (``run --shard K/N``): every shard 1..N of one N must be given (a shard given
twice is a re-run: its trials are duplicates, resolved as above), and each must hold all
the trials of its part (``run.json`` ``shard.trials``); a partial shard (killed, or
stopped by ``--budget``) is refused with the ``--resume`` command that completes it. The
merge of every shard is a whole run (no ``shard`` in its ``run.json``). Runs without a
shard may be given beside shards (a re-run of failed trials).

Nothing is written half: the merged run is built in a temporary directory next to
``-o`` and renamed into place when complete.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePath
from typing import Any

from toolbench.errors import UserError
from toolbench.outpath import prepare_dir
from toolbench.results import RunInfo
from toolbench.store.run_reader import (
    TrialKey,
    info_path,
    iter_trials_at,
    read_info,
    read_projected,
    results_path,
    trial_key,
)
from toolbench.store.shards import shard_of
from toolbench.store.writer import NewResults, write_info
from toolbench.version import __version__

MATRIX_FIELDS: tuple[str, ...] = (
    "models",
    "formats",
    "scenarios",
    "samples",
    "max_turns",
    "retry_on_parse_error",
)
"""``run.json`` fields two merged runs must agree on (lists compared as sets)."""
MATRIX_PARAMS: tuple[str, ...] = ("temperature", "local_max_tokens")
"""``run.json`` ``params`` that change a trial's reply, so they must agree too."""


@dataclass
class MergeSummary:
    out_dir: Path
    runs: int = 0
    trials: int = 0
    duplicates: int = 0
    """Trials held by more than one run (each written once)."""
    replaced: int = 0
    """Of those, failed trials replaced by a later run's ``ok`` trial."""
    held: list[int] = field(default_factory=list)
    """Per run given, how many distinct trials it holds."""

    def render(self) -> str:
        return (
            f"merged {self.trials} trials from {self.runs} runs into {self.out_dir}\n"
            f"  {self.duplicates} trial(s) held by more than one run written once "
            f"({self.replaced} non-ok replaced by an ok trial)"
        )


def _matrix(info: RunInfo) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in MATRIX_FIELDS:
        value = getattr(info, name)
        out[name] = sorted(value) if isinstance(value, list) else value
    for name in MATRIX_PARAMS:
        out[f"params.{name}"] = info.params.get(name)
    return out


def _show(value: Any) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else repr(value)


def check_same_matrix(infos: Sequence[tuple[Path, RunInfo]]) -> None:
    """Raise a one-line :class:`UserError` at the first field two runs disagree on."""
    (first_dir, first), *rest = infos
    want = _matrix(first)
    for run_dir, info in rest:
        got = _matrix(info)
        for name, value in want.items():
            if got[name] != value:
                raise UserError(
                    f"merge: {info_path(run_dir)}: {name} ({_show(got[name])}) differs from "
                    f"{info_path(first_dir)} ({_show(value)}); only runs of one matrix merge"
                )


def check_same_origin(infos: Sequence[tuple[Path, RunInfo]]) -> None:
    """Refuse runs of different toolbench versions or different scenario file contents."""
    (first_dir, first), *rest = infos
    for run_dir, info in rest:
        if info.toolbench_version != first.toolbench_version:
            raise UserError(
                f"merge: {info_path(run_dir)}: toolbench_version ({info.toolbench_version}) "
                f"differs from {info_path(first_dir)} ({first.toolbench_version}); "
                "merge runs of one toolbench version"
            )
        a, b = scenario_contents(first), scenario_contents(info)
        if a and b and a != b:
            path = next(p for p in sorted(a.keys() | b.keys()) if a.get(p) != b.get(p))
            raise UserError(
                f"merge: {info_path(run_dir)}: scenario_files differ from "
                f"{info_path(first_dir)} (first at {path}); merge runs of the same scenario files"
            )


def scenario_contents(info: RunInfo) -> dict[str, str]:
    """The run's scenario files (tool sets included) as path -> SHA-256, each path relative
    to the directory that holds them all: runs made in different checkouts (shards on
    several machines) name the same files alike, whatever their absolute paths."""
    paths = [PurePath(f.path) for f in info.scenario_files]
    if not paths:
        return {}
    root = PurePath(os.path.commonpath([p.parent for p in paths]))
    return {
        p.relative_to(root).as_posix(): f.sha256
        for p, f in zip(paths, info.scenario_files, strict=True)
    }


def check_shards(infos: Sequence[tuple[Path, RunInfo]]) -> None:
    """Shards given must be of one N, and every part 1..N must be there."""
    shards = [(d, i.shard) for d, i in infos if i.shard is not None]
    if not shards:
        return
    first_dir, first = shards[0]
    for run_dir, s in shards[1:]:
        if s.count != first.count:
            raise UserError(
                f"merge: {info_path(run_dir)}: shard {s.label} is not a part of the "
                f"{first.count} shards of {info_path(first_dir)} ({first.label})"
            )
    missing = sorted(set(range(1, first.count + 1)) - {s.index for _, s in shards})
    if missing:
        names = ", ".join(f"{k}/{first.count}" for k in missing)
        raise UserError(f"merge: shard(s) {names} missing; give every shard of the run")


def check_complete(infos: Sequence[tuple[Path, RunInfo]], held: Sequence[int]) -> None:
    """A shard run must hold every trial of its part (``shard.trials``)."""
    for (run_dir, info), n in zip(infos, held, strict=True):
        s = info.shard
        if s is not None and s.trials is not None and n < s.trials:
            raise UserError(
                f"merge: {run_dir}: shard {s.label} is partial ({n} of {s.trials} trials); "
                f"complete it with toolbench run --resume --out {run_dir}"
            )


def _infos(runs: Sequence[Path]) -> list[tuple[Path, RunInfo]]:
    out: list[tuple[Path, RunInfo]] = []
    seen: dict[Path, Path] = {}
    for run in runs:
        run_dir = results_path(run).parent
        real = run_dir.resolve()
        if real in seen:
            raise UserError(f"merge: {run} is given twice (as {seen[real]})")
        seen[real] = run
        if not results_path(run).is_file():
            raise UserError(f"{results_path(run)}: no results file (is '{run}' a run directory?)")
        info = read_info(run_dir)
        if info is None:
            raise UserError(f"{info_path(run_dir)}: no run.json (merge needs each run's matrix)")
        out.append((run_dir, info))
    return out


def merge_runs(runs: Sequence[str | Path], out_dir: str | Path) -> MergeSummary:
    """Merge ``runs`` (two or more run directories of one matrix) into ``out_dir``."""
    paths = [Path(r) for r in runs]
    out = Path(out_dir)
    if len(paths) < 2:
        raise UserError("merge: give at least two runs")
    infos = _infos(paths)
    check_same_matrix(infos)
    check_same_origin(infos)
    check_shards(infos)
    _check_out(out, infos)
    summary = MergeSummary(out, runs=len(paths))
    picks = _pick(infos, summary)
    check_complete(infos, summary.held)
    first = infos[0][1]
    info = first.model_copy(
        update={
            "run_id": out.name,
            "toolbench_version": __version__,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "merged_from": [i.run_id for _, i in infos],
            "shard": None,  # every shard is given (check_shards): a whole run
        }
    )
    prepare_dir(out.parent)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.merging-", dir=out.parent))
    try:
        with NewResults(tmp) as sink:
            for (run_dir, _), (offsets, lines) in zip(infos, picks, strict=True):
                for trial in iter_trials_at(results_path(run_dir), offsets, lines):
                    sink.write(trial)
            summary.trials = sink.written
        write_info(tmp, info)
        _check_out(out, infos)  # still free after the writing
        os.rename(tmp, out)  # onto nothing or an empty directory: atomic
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return summary


def _check_out(out: Path, infos: Sequence[tuple[Path, RunInfo]]) -> None:
    if any(out.resolve() == d.resolve() for d, _ in infos):
        raise UserError(f"-o: '{out}' is one of the runs being merged; choose a new directory")
    if results_path(out).exists():
        raise UserError(f"-o: {results_path(out)} already exists; choose a new directory")
    if out.exists() and not out.is_dir():
        raise UserError(f"-o: {out} is a file; choose a new directory")
    if out.is_dir() and any(out.iterdir()):
        raise UserError(f"-o: {out} is not empty; choose a new directory")


def _pick(
    infos: Sequence[tuple[Path, RunInfo]], summary: MergeSummary
) -> list[tuple[list[int], list[int]]]:
    """Which line of which run each trial keeps: per run, (byte offsets, line numbers).

    A first pass over keys and statuses only (the projected reader), so merging large
    runs never holds their trials in memory; the second pass validates what it writes.
    """
    won: dict[TrialKey, tuple[int, int, int, bool]] = {}  # run index, offset, line, ok
    for i, (run_dir, info) in enumerate(infos):
        read = read_projected(run_dir, lambda d: (trial_key(d), d.get("status", "ok") == "ok"))
        summary.held.append(len(read.rows))
        if info.shard is not None:
            _check_in_shard(run_dir, info, [k for k, _ in read.rows])
        for (key, ok), off, n in zip(read.rows, read.offsets, read.lines, strict=True):
            old = won.get(key)
            if old is None:
                won[key] = (i, off, n, ok)
                continue
            summary.duplicates += 1
            if ok and not old[3]:
                won[key] = (i, off, n, ok)
                summary.replaced += 1
    picks: list[tuple[list[int], list[int]]] = [([], []) for _ in infos]
    for i, off, n, _ in sorted(won.values()):
        picks[i][0].append(off)
        picks[i][1].append(n)
    return picks


def _check_in_shard(run_dir: Path, info: RunInfo, keys: Sequence[TrialKey]) -> None:
    """Every trial of a shard run hashes into its shard (else it is not the run it says)."""
    s = info.shard
    assert s is not None
    for model, fmt, scenario_id, sample in keys:
        if shard_of(model, fmt, scenario_id, sample, s.count) != s.index:
            raise UserError(
                f"merge: {results_path(run_dir)}: trial {model} / {fmt} / {scenario_id} "
                f"#{sample} is not in shard {s.label} its run.json names"
            )
