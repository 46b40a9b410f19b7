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
    za = NormalDist().inv_cdf(1 - alpha / 2)
    zb = NormalDist().inv_cdf(power)
    steps = 10_000
    for i in range(1, steps + 1):
        d = i / steps
        p = max(psi, d)
        need = (za * math.sqrt(p) + zb * math.sqrt(max(p - d * d, 0.0))) ** 2 / (d * d)
        if need <= n:
            return d
    return None
