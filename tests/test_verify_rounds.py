"""`execute --verify`'s extra rounds: which ways are still in question after a round
(`verify.contenders`), against the rule as the docs state it (docs/execute.md), on
random runs: the fastest single-engine way, every other single-engine way whose median
is within 10% of its or that it has not beaten in enough paired rounds for a one-sided
sign test below 0.05, and the best split while faster than it but not adopted by the rule
(every paired round won, or a one-sided sign test below 0.05, and 5% faster); none
when one way is left. The engines' own run of the rounds is
`tests/test_execute_verify.py`."""

from __future__ import annotations

import itertools
import statistics

from hypothesis import given
from hypothesis import strategies as st

from placement_cli.engines.measure import Outcome
from placement_cli.engines.runs import Run
from placement_cli.engines.verify import contenders


def _adopted(split: list[float], single: list[float]) -> bool:
    n = min(len(split), len(single))
    wins = sum(1 for a, b in zip(split, single, strict=False) if a < b)
    p = sum(1 for s in itertools.product((0, 1), repeat=n) if sum(s) >= wins) / 2**n
    return (wins == n or p < 0.05) and 1 - statistics.median(split) / statistics.median(
        single
    ) >= 0.05


def _sure(fast: list[float], other: list[float]) -> bool:
    """`fast` beat `other` in enough paired rounds: p < 0.05, counted over every
    sequence of fair coin flips."""
    n = min(len(fast), len(other))
    wins = sum(1 for a, b in zip(fast, other, strict=False) if a < b)
    return sum(1 for s in itertools.product((0, 1), repeat=n) if sum(s) >= wins) / 2**n < 0.05


def _restated(runs: list[list[float] | None], singles: int) -> list[int]:
    med = statistics.median
    ok = [i for i, r in enumerate(runs) if r]
    single = [i for i in ok if i < singles]
    if not single:
        return []
    fast = min(single, key=lambda i: (med(runs[i]), i))  # type: ignore[arg-type]
    near = [
        i
        for i in single
        if med(runs[i]) <= med(runs[fast]) * 1.1  # type: ignore[arg-type]
        or not _sure(runs[fast], runs[i])  # type: ignore[arg-type]
    ]
    split = [i for i in ok if i >= singles]
    if split:
        best = min(split, key=lambda i: (med(runs[i]), i))  # type: ignore[arg-type]
        b, f = runs[best], runs[fast]
        if med(b) < med(f) and not _adopted(b, f):  # type: ignore[arg-type]
            near.append(best)
    return near if len(near) > 1 else []


def _outcome(ms: list[float] | None) -> Outcome:
    o = Outcome((0,), [], None)  # type: ignore[arg-type]
    if ms is None:
        o.status = "not-executable"
    else:
        o.runs = [Run(x / 1000.0, (), ()) for x in ms]
    return o


# Medians on a coarse grid, so that ties and the 10% border occur.
_ms = st.lists(st.integers(10, 40).map(float), min_size=5, max_size=8)


@given(
    singles=st.integers(1, 4),
    runs=st.lists(st.one_of(st.none(), _ms), min_size=1, max_size=7),
)
def test_the_ways_in_question_are_the_documented_ones(
    singles: int, runs: list[list[float] | None]
) -> None:
    want = _restated(runs, singles)
    got = contenders([_outcome(r) for r in runs], singles)
    assert got == want


def test_two_close_single_ways_and_a_split_not_yet_proven_are_in_question() -> None:
    runs = [
        [20.0, 21, 19, 20, 22],  # the fastest single-engine way
        [21.0, 21, 22, 20, 23],  # 5% slower: in question
        [30.0, 31, 29, 30, 32],  # 50% slower, every run: settled
        [19.0, 22, 18, 21, 19],  # a split 5% faster, 3 of 5 rounds: not proven
    ]
    assert contenders([_outcome(r) for r in runs], 3) == [0, 1, 3]
    # Proven (every round, 10% faster): the rule decides; the singles are 5% apart.
    runs[3] = [18.0, 18, 17, 18, 19]
    assert contenders([_outcome(r) for r in runs], 3) == [0, 1]
    # A way slower by its median but faster in two of the five rounds: bimodal.
    runs[1] = [25.0, 25, 25, 20, 19]
    assert contenders([_outcome(r) for r in runs], 3) == [0, 1]
    # One way left: no more rounds.
    runs[1] = [25.0, 25, 25, 25, 25]
    assert contenders([_outcome(r) for r in runs], 3) == []
