"""Streamed against non-streamed replay: trials per second of the same matrix.

Records the bundled suite against the in-process fake OpenAI server (tests/support), once
for ``xml`` and ``native`` and once for ``xml:stream`` and ``native:stream`` (the fake
streams every reply in deltas of 4 characters, as OpenAI's chunk format does), then
replays each set offline and reports trials per second and the cost of streaming per
trial. Run from the repository root: ``python benchmarks/bench_stream_replay.py``;
``--tiny``: one scenario (checks it still runs).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from toolbench.cli.app import run_cli
from toolbench.store import load_results

ROOT = Path(__file__).resolve().parents[1]

REPLY = (
    'I\'ll check.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}'
    "</tool_call>\nDone."
)


def _run(
    base: str, tmp: Path, out: str, formats: str, record: str, extra: tuple[str, ...] = ()
) -> float:
    t0 = time.perf_counter()
    rc = run_cli([
        "run", "--models", "openai/fake", "--formats", formats, "--api-base", base,
        "--out", str(tmp / out), "--cassettes", str(tmp / "cas"), "--quiet", "--no-report",
        "--record", record, "--concurrency", "8", *extra,
    ])  # fmt: skip
    elapsed = time.perf_counter() - t0
    if rc not in (0, 3):
        raise SystemExit(f"run {out} exited {rc}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tiny", action="store_true", help="one scenario")
    extra = ("--scenarios", "calculate-product") if ap.parse_args().tiny else ()
    os.environ.setdefault("OPENAI_API_KEY", "bench-key-not-secret-0000")
    sys.path.insert(0, str(ROOT))  # the fake server lives in tests/support
    from tests.support.fake_openai import FakeOpenAI

    from toolbench.providers.litellm_api import litellm

    litellm()  # LiteLLM's import (about 4 s) is not replay time
    with tempfile.TemporaryDirectory() as d, FakeOpenAI(default=REPLY) as fake:
        tmp = Path(d)
        for name, formats in (("plain", "xml,native"), ("stream", "xml:stream,native:stream")):
            _run(fake.base_url, tmp, f"rec-{name}", formats, "new", extra)
        results = {}
        for name, formats in (("plain", "xml,native"), ("stream", "xml:stream,native:stream")):
            elapsed = _run(fake.base_url, tmp, f"rep-{name}", formats, "none", extra)
            n = sum(1 for r in load_results(tmp / f"rep-{name}") if r.status == "ok")
            results[name] = (n, elapsed)
            rate = n / elapsed
            print(f"{name:7s} replay: {n} ok trials in {elapsed:.2f} s = {rate:.1f} trials/s")
        (n_p, t_p), (n_s, t_s) = results["plain"], results["stream"]
        extra = (t_s / max(n_s, 1) - t_p / max(n_p, 1)) * 1000
        print(f"streaming costs {extra:+.1f} ms per trial on replay")


if __name__ == "__main__":
    main()
