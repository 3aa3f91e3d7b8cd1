"""Seeded generator of small plans that are hard to decide: graph colouring in CFG form.

Every edge requires its two blocks to run on different targets (a transfer cost for
each allowed pair), and the blocks form one big loop, so a plan is feasible exactly when
its undirected block graph can be coloured with the plan's targets. Near the colouring
threshold arc consistency proves nothing and every search has to branch; with enough
edges there is no colouring at all. These are the plans on which the seed's fallback
used to run for minutes (before 2026-11-26).
"""

from __future__ import annotations

import argparse
import random
import sys
from typing import Any

import orjson


def colouring_plan(
    n_blocks: int = 50, n_targets: int = 7, seed: int = 0, degree: float = 24.0
) -> dict[str, Any]:
    """A loop of `n_blocks` blocks where neighbours must differ, with about `degree`
    neighbours per block (denser: more likely infeasible).

    >>> p = colouring_plan(10, 3, seed=1, degree=4)
    >>> len(p["blocks"]), p["targets"]
    (10, ['t0', 't1', 't2'])
    """
    rng = random.Random(f"colouring-{n_blocks}-{n_targets}-{seed}-{degree}")
    targets = [f"t{i}" for i in range(n_targets)]
    p = min(1.0, degree / max(1, n_blocks - 1))
    succ: list[list[int]] = [[(i + 1) % n_blocks] for i in range(n_blocks)]
    for i in range(n_blocks):
        for j in range(i + 2, n_blocks):
            if rng.random() < p and not (i == 0 and j == n_blocks - 1):
                if rng.random() < 0.5:
                    succ[i].append(j)
                else:
                    succ[j].append(i)
    blocks = []
    for i in range(n_blocks):
        edges = []
        for j in succ[i]:
            m = {s: {d: rng.randrange(1, 10) for d in targets if d != s} for s in targets}
            edges.append({"block": f"b{j}", "transitions": m})
        blocks.append(
            {
                "id": f"b{i}",
                "cost": {t: rng.randrange(0, 20) for t in targets},
                "terminator": {"kind": "switch", "successors": edges},
            }
        )
    return {
        "version": 1,
        "name": f"colouring-{n_blocks}-{n_targets}-{seed}",
        "targets": targets,
        "blocks": blocks,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("blocks", type=int)
    ap.add_argument("--targets", type=int, default=7)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--degree", type=float, default=24.0)
    a = ap.parse_args(argv)
    sys.stdout.buffer.write(orjson.dumps(colouring_plan(a.blocks, a.targets, a.seed, a.degree)))


if __name__ == "__main__":
    main()
