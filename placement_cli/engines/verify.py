"""`execute --verify N`: a split is adopted only when it is measured faster.

The candidates (`candidates`) are every single-engine way (the tool's plan whole on
each engine, and the query as written on each engine the probe ran it on) and the
model's N best splits (at least one cut, within the budget, by predicted latency; the
artifact's own choice among them). `execute_many` checks each one's rows and times
them in interleaved rounds, so the r-th runs of two ways were measured side by side.

The rule (`judge`): the fastest single-engine way is the one of least median. The best
split (least median) is adopted only when it beat that way in every paired round, or
in enough of them that a one-sided sign test gives p < 0.05, and its median is at
least 5% below. Otherwise the fastest single-engine way is kept.

Five rounds separate ways far apart, not ways a few per cent apart on a run of 20 ms.
So, after them, up to `EXTRA_ROUNDS` more interleaved rounds of every candidate run
while two ways or more are still in question (`contenders`): the fastest single-engine
way; every other single-engine way whose median is within `CLOSE` of its, or that it
has not yet beaten in enough paired rounds for a one-sided sign test below `ALPHA` (a
way whose runs fall in two groups, as DataFusion's do on some queries, has a median
that moves); and the best split while it is faster than that way but not yet adopted
by the rule. Every candidate runs in every round, so that each is timed among the same
others (a way timed among fewer runs in warmer caches). The evidence (rounds,
paired wins, medians, p, gain, CPU) goes into the report and the decision into
the tree artifact written by `--placed-out` (`tree.decision`, rule `verified`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import median
from typing import Any

from placement_cli.core.diagnostics import Diagnostic
from placement_cli.engines.measure import Outcome, Way
from placement_cli.engines.placements import allowed, n_cuts, predicted
from placement_cli.ir.tree.model import INF, Tree

MIN_ROUNDS = 5
MIN_GAIN = 0.05
ALPHA = 0.05
CLOSE = 0.10
EXTRA_ROUNDS = 10


def single_ways(tree: Tree, written: dict[str, float], native: bool) -> list[Way]:
    """Every single-engine way in engine order: the plan whole on the engine (where it
    runs every node), then the query as written there (`written`: engine -> the probe's
    median, ms). A native query's one node is the query as written: its plan way is it."""
    out: list[Way] = []
    for e, name in enumerate(tree.engines):
        whole = (e,) * tree.n
        if all(tree.time[v][e] != INF for v in range(tree.n)):
            out.append(Way(whole))
        if name in written and not native:
            out.append(Way(whole, written=True, predicted_ms=written[name]))
    return out


def candidates(
    tree: Tree,
    budget: int,
    n: int,
    written: dict[str, float],
    native: bool,
    chosen: Way | None,
    cost: Callable[[tuple[int, ...]], float] | None = None,
) -> list[Way]:
    """The single-engine ways, then the model's `n` best splits (module doc) by `cost`
    (a placement's predicted latency; default the critical path), the artifact's choice
    first when it is a split (ties: enumeration order)."""
    ways = single_ways(tree, written, native)
    splits = [a for a in allowed(tree, budget) if n_cuts(tree, a) > 0]
    # Stable: equal predictions keep the enumeration's order (input positions).
    splits.sort(key=cost or (lambda a: predicted(tree, a).latency))
    top = [Way(a) for a in splits[:n]]
    if chosen is not None and not chosen.written and n_cuts(tree, chosen.assignment) > 0:
        top = [chosen, *(w for w in top if w.assignment != chosen.assignment)][: max(n, 1)]
    return ways + top


def sign_p(wins: int, pairs: int) -> float:
    """One-sided sign test: P(at least `wins` of `pairs` fair coin flips), exact.

    >>> sign_p(5, 5), round(sign_p(8, 10), 4), sign_p(0, 0)
    (0.03125, 0.0547, 1.0)
    """
    if pairs <= 0:
        return 1.0
    return sum(math.comb(pairs, k) for k in range(wins, pairs + 1)) / 2**pairs


def _ms(o: Outcome) -> list[float]:
    return [r.seconds * 1000.0 for r in o.runs]


def _paired(ms: list[float], base: list[float]) -> tuple[int, int]:
    """(rounds `ms` was faster than `base` in, rounds both ran): runs paired by round."""
    return sum(1 for a, b in zip(ms, base, strict=False) if a < b), min(len(ms), len(base))


def _passes(ms: list[float], base: list[float]) -> tuple[int, int, float, float, bool]:
    """A split's runs against the fastest single way's, paired by round: (wins, pairs,
    gain, p, whether the rule adopts it)."""
    wins, pairs = _paired(ms, base)
    gain = 1.0 - median(ms) / median(base)
    p = sign_p(wins, pairs)
    return wins, pairs, gain, p, (wins == pairs or p < ALPHA) and gain >= MIN_GAIN


def _beaten(fast: list[float], other: list[float]) -> bool:
    """Whether the fastest way's runs beat `other`'s in enough paired rounds that a
    one-sided sign test gives p < ALPHA (every one of 5; 12 of 15)."""
    return sign_p(*_paired(fast, other)) < ALPHA


def contenders(outcomes: Sequence[Outcome], singles: int) -> list[int]:
    """The ways worth another round (module doc), by index: none when one way is left."""
    ok = [i for i, o in enumerate(outcomes) if o.status == "ok" and o.runs]
    single = [i for i in ok if i < singles]
    if not single:
        return []
    fast = min(single, key=lambda i: median(_ms(outcomes[i])))
    base = _ms(outcomes[fast])
    near = [
        i
        for i in single
        if median(_ms(outcomes[i])) <= median(base) * (1.0 + CLOSE)
        or not _beaten(base, _ms(outcomes[i]))
    ]
    split = [i for i in ok if i >= singles]
    if split:
        best = min(split, key=lambda i: median(_ms(outcomes[i])))
        ms = _ms(outcomes[best])
        if median(ms) < median(base) and not _passes(ms, base)[4]:
            near.append(best)
    return near if len(near) > 1 else []


def judge(
    labels: Sequence[str], outcomes: Sequence[Outcome], singles: int
) -> tuple[dict[str, Any], int | None, list[Diagnostic]]:
    """The evidence and the decision (module doc) over `outcomes`, whose first `singles`
    are the single-engine ways: (the report's `verify` section, the index of the
    adopted way or None when nothing ran, the diagnostic saying what was decided)."""
    ok = [i for i, o in enumerate(outcomes) if o.status == "ok" and o.runs]
    single = [i for i in ok if i < singles]
    split = [i for i in ok if i >= singles]
    evidence: dict[str, Any] = {
        "candidates": len(outcomes),
        "single_ways": singles,
        "splits": len(outcomes) - singles,
        "min_gain": MIN_GAIN,
        "alpha": ALPHA,
    }
    if not single:
        evidence["adopted"] = None
        evidence["reason"] = "no single-engine way ran, so nothing is verified"
        return evidence, None, []
    fast = min(single, key=lambda i: median(_ms(outcomes[i])))
    base = _ms(outcomes[fast])
    evidence["fastest_single"] = labels[fast]
    evidence["fastest_single_ms"] = round(median(base), 3)
    best = min(split, key=lambda i: median(_ms(outcomes[i])), default=None)
    adopted = fast
    if best is not None:
        i = best
        wins, pairs, gain, p, passes = _passes(_ms(outcomes[i]), base)
        evidence["best_split"] = labels[i]
        evidence["best_split_ms"] = round(median(_ms(outcomes[i])), 3)
        evidence["wins"] = wins
        evidence["pairs"] = pairs
        evidence["p"] = round(p, 6)
        evidence["gain"] = round(gain, 4)
        if passes:
            adopted = i
        what = (
            f"the best split {labels[i]} beat the fastest single-engine way {labels[fast]} "
            f"in {wins} of {pairs} paired rounds (sign test p = {p:.3g}); its median is "
            + (f"{gain:.1%} faster" if gain >= 0 else f"{-gain:.1%} slower")
        )
        why = what + (
            ": adopted"
            if passes
            else f" (needs every round or p < {ALPHA:g}, and at least {MIN_GAIN:.0%}): kept "
            f"{labels[fast]}"
        )
    else:
        why = f"no split ran: kept {labels[fast]}"
    evidence["adopted"] = labels[adopted]
    evidence["reason"] = why
    said = (
        Diagnostic("info", "split-adopted", why)
        if adopted != fast
        else Diagnostic("info", "split-rejected", why)
    )
    return evidence, adopted, [said]


def decision(
    tree: Tree,
    labels: Sequence[str],
    outcomes: Sequence[Outcome],
    evidence: dict[str, Any],
    adopted: int,
) -> dict[str, Any]:
    """The tree artifact's `decision` (rule `verified`) for the adopted way, with every
    candidate's measured runs (ms) and the evidence."""
    o = outcomes[adopted]
    if n_cuts(tree, o.assignment) > 0:
        chosen: dict[str, Any] = {
            "kind": "split",
            "engines": {tree.ids[v]: tree.engines[o.assignment[v]] for v in range(tree.n)},
        }
    else:
        chosen = {
            "kind": "single",
            "engine": tree.engines[o.assignment[tree.root]],
            "sql": "as-written" if o.written else "plan",
        }
    ways = []
    for label, w in zip(labels, outcomes, strict=True):
        ms = _ms(w)
        cpu = [r.cpu * 1000.0 for r in w.runs]
        ways.append(
            {
                "label": label,
                "status": w.status,
                **(
                    {
                        "median": round(median(ms), 3),
                        "min": round(min(ms), 3),
                        "max": round(max(ms), 3),
                        "runs": [round(x, 3) for x in ms],
                        "cpu_median": round(median(cpu), 3),
                    }
                    if ms
                    else {}
                ),
            }
        )
    return {
        "rule": "verified",
        "chosen": chosen,
        "reason": evidence["reason"],
        "evidence": evidence,
        "ways": ways,
    }
