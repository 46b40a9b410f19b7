"""The paired test every comparison uses, and what its pairs could detect.

``compare``, ``recommend`` and the workload ranking all pair trials (same scenario and
sample) and ask one question: do the discordant pairs lean one way more than chance
would? The exact McNemar test (the exact sign test on the discordant pairs) answers it,
and Connor's (1987) sample size formula says how small a difference that many pairs
could have seen, so a "not significant" is read against it.
"""

from __future__ import annotations

import math
from statistics import NormalDist

ALPHA = 0.05
"""Two-sided significance level of every paired test."""
POWER = 0.8
"""The power the detectable difference is stated at."""


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` and ``c`` discordant pairs."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return float(min(1.0, 2 * tail))


def detectable_difference(
    n: int, psi: float, alpha: float = ALPHA, power: float = POWER
) -> float | None:
    """The smallest difference McNemar's test detects with ``n`` pairs (Connor 1987).

    ``psi`` is the observed share of discordant pairs; a difference ``delta`` needs a
    share of at least ``delta``, so ``max(psi, delta)`` is used. None when not even a
    difference of 100 points could be detected (fewer than 4 pairs, or none).
    """
    if n <= 0:
        return None
    steps = 10_000
    for i in range(1, steps + 1):
        d = i / steps
        if pairs_needed(d, psi, alpha, power) <= n:
            return d
    return None


def pairs_needed(delta: float, psi: float, alpha: float = ALPHA, power: float = POWER) -> float:
    """Pairs McNemar's test needs to detect a difference ``delta`` (Connor 1987).

    ``psi`` is the expected share of discordant pairs (at least ``delta``: a difference
    of ``delta`` needs that many pairs to disagree). Not rounded: callers round up.
    """
    za = NormalDist().inv_cdf(1 - alpha / 2)
    zb = NormalDist().inv_cdf(power)
    p = max(psi, delta)
    return (za * math.sqrt(p) + zb * math.sqrt(max(p - delta * delta, 0.0))) ** 2 / (delta**2)


def samples_needed(delta: float, psi: float, scenarios: int) -> int | None:
    """Samples per scenario for ``scenarios`` paired scenarios to detect ``delta``
    (each sample of each scenario one pair; None when there are no scenarios)."""
    if scenarios <= 0:
        return None
    return max(1, math.ceil(pairs_needed(delta, psi) / scenarios))
