"""Matching the calls of one reply against one expected round.

A made call *matches* an expected call when the tool name is the same, every expected
argument passes its matcher (see :mod:`toolbench.scoring.matchers`), and no other argument
was given (unless ``allow_extra_args``). A round matches when the calls can be paired
one-to-one with the expected calls:

* ``order: sequence``: position by position. When the same calls were made but in
  another order, the round fails with ``call.wrong_order`` alone.
* ``order: any``: any one-to-one pairing. It is found with a maximum bipartite matching
  (augmenting paths), because a greedy choice can take the one call a later expected call
  needed (two calls to the same tool with a loose and a strict matcher).

When a round does not match, the reasons come from pairing what is left over: a made call
with an unmatched expected call of the same tool gives its argument errors
(``args.mismatch``, ``args.missing_required``, ``args.unexpected``); otherwise by
position, ``call.wrong_tool``; then ``call.missing`` for expected calls no call was made
for and ``call.extra`` for calls beyond them.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolbench import codes
from toolbench.formats.base import ToolCall
from toolbench.scenarios.model import ExpectedCall, Round
from toolbench.scoring.matchers import Problem, check_arg


def call_problems(expected: ExpectedCall, call: ToolCall) -> list[Problem]:
    """Everything wrong with ``call`` as an attempt at ``expected`` (empty: it matches)."""
    if call.name != expected.name:
        return [(codes.CALL_WRONG_TOOL, f"expected a call to {expected.name}, got {call.name}")]
    out: list[Problem] = []
    for arg, matcher in expected.arguments.items():
        problem = check_arg(arg, matcher, call.arguments)
        if problem is not None:
            out.append(problem)
    if not expected.allow_extra_args:
        for arg in call.arguments:
            if arg not in expected.arguments:
                out.append((codes.ARGS_UNEXPECTED, f"unexpected argument '{arg}'"))
    return out


def max_matching(ok: Sequence[Sequence[bool]], n_right: int) -> dict[int, int]:
    """Maximum bipartite matching (Kuhn): left index -> right index along ``ok`` edges."""
    right_of: dict[int, int] = {}
    left_of: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in range(n_right):
            if ok[i][j] and j not in seen:
                seen.add(j)
                if j not in left_of or augment(left_of[j], seen):
                    left_of[j] = i
                    right_of[i] = j
                    return True
        return False

    for i in range(len(ok)):
        augment(i, set())
    return right_of


def _ordered_matching(ok: Sequence[Sequence[bool]], n_right: int) -> dict[int, int]:
    """The largest order-preserving pairing (longest common subsequence over ``ok``)."""
    n = len(ok)
    best = [[0] * (n_right + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(n_right - 1, -1, -1):
            if ok[i][j]:
                best[i][j] = 1 + best[i + 1][j + 1]
            else:
                best[i][j] = max(best[i + 1][j], best[i][j + 1])
    pairs: dict[int, int] = {}
    i = j = 0
    while i < n and j < n_right:
        if ok[i][j] and best[i][j] == 1 + best[i + 1][j + 1]:
            pairs[i] = j
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def _label(i: int, total: int) -> str:
    return f"call {i + 1}: " if total > 1 else ""


def match_round(expected: Round, calls: Sequence[ToolCall]) -> list[Problem]:
    """The problems of ``calls`` as the calls of ``expected`` (empty: the round matches)."""
    exp = expected.calls
    problems = [[call_problems(e, c) for c in calls] for e in exp]
    ok = [[not p for p in row] for row in problems]
    n_exp, n_got = len(exp), len(calls)
    out: list[Problem] = []
    if expected.order == "any":
        pairs = max_matching(ok, n_got)
    else:
        pairs = _ordered_matching(ok, n_got)
        unordered = max_matching(ok, n_got)
        if len(unordered) > len(pairs):
            order = ", ".join(c.name for c in calls)
            want = ", ".join(e.name for e in exp)
            out.append(
                (codes.CALL_WRONG_ORDER, f"calls made in the order {order}; expected {want}")
            )
            pairs = unordered
    if len(pairs) == n_exp == n_got:
        return out
    left_exp = [i for i in range(n_exp) if i not in pairs]
    used = set(pairs.values())
    left_got = [j for j in range(n_got) if j not in used]
    # Same tool first: its argument errors are the most useful reason.
    for i in list(left_exp):
        j = next((j for j in left_got if calls[j].name == exp[i].name), None)
        if j is None:
            continue
        left_exp.remove(i)
        left_got.remove(j)
        out.extend((code, _label(j, n_got) + why) for code, why in problems[i][j])
    for i, j in zip(list(left_exp), list(left_got), strict=False):
        left_exp.remove(i)
        left_got.remove(j)
        out.extend((code, _label(j, n_got) + why) for code, why in problems[i][j])
    for i in left_exp:
        what = f"expected call {i + 1} ({exp[i].name})" if n_exp > 1 else f"a call to {exp[i].name}"
        out.append((codes.CALL_MISSING, f"{what} was not made"))
    for j in left_got:
        out.append((codes.CALL_EXTRA, f"{_label(j, n_got)}extra call to {calls[j].name}"))
    return out
