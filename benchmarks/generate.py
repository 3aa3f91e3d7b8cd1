"""Seeded generator of structured placement plans (the benchmark and test workload).

The CFGs look like lowered query programs: sequences of statements, if/else diamonds,
switches, loops (postgres never inside one), early exits to a shared return block.
Targets after the HashQL model: target 0 is an interpreter that can run everything,
target 1 a postgres-like source nothing can enter, the rest specialised stores.
"""

from __future__ import annotations

import argparse
import random
import sys
from typing import Any

import orjson


def _targets(k: int) -> list[str]:
    base = ["interpreter", "postgres", "embedding"]
    return base[:k] if k <= 3 else base + [f"store{i}" for i in range(3, k)]


def _matrix(
    targets: list[str], rng: random.Random, in_loop: bool, transfer: int
) -> dict[str, dict[str, int]]:
    m: dict[str, dict[str, int]] = {}
    for s in targets:
        row: dict[str, int] = {}
        for d in targets:
            if s == d:
                if not (in_loop and d == "postgres"):
                    row[d] = 0
            elif d == "postgres":
                continue  # nothing enters postgres
            elif in_loop and s == "postgres":
                continue
            else:
                over = 8 if s == "postgres" else 4
                row[d] = over + transfer + (rng.randrange(4) if d != "interpreter" else 0)
        if row:
            m[s] = row
    return m


def generate_plan(
    n_blocks: int,
    n_targets: int = 3,
    seed: int = 0,
    loop_size: int | None = None,
    distinct: bool = False,
) -> dict[str, Any]:
    """A plan with about `n_blocks` blocks. `loop_size` forces loops of that many blocks.
    `distinct` gives every edge with a transfer a matrix of its own (a foreign plan, as a
    compiler other than `lower` may write it: the k-th edge's transfers cost k more),
    where otherwise about a hundred matrices repeat.

    >>> p = generate_plan(50, 3, seed=1)
    >>> len(p["blocks"]) >= 50, p["targets"]
    (True, ['interpreter', 'postgres', 'embedding'])
    """
    rng = random.Random(seed)
    targets = _targets(n_targets)
    blocks: list[dict[str, Any]] = []
    in_loop_flags: list[bool] = []

    def new_block(in_loop: bool) -> int:
        i = len(blocks)
        stmts = []
        for _ in range(rng.randrange(1, 4)):
            cost: dict[str, int | None] = {"interpreter": 8}
            for t in targets[1:]:
                if rng.random() < 0.55:
                    cost[t] = rng.choice((2, 3, 4, 5))
            stmts.append({"cost": cost})
        blocks.append({"id": f"bb{i}", "statements": stmts, "terminator": {"kind": "return"}})
        in_loop_flags.append(in_loop)
        return i

    n_edges = [0]

    def link(u: int, vs: list[int], kind: str) -> None:
        succ = []
        for v in vs:
            m = _matrix(targets, rng, in_loop_flags[u], rng.randrange(1, 6))
            if distinct:
                n_edges[0] += 1
                m = {
                    s: {d: c + n_edges[0] if c else c for d, c in row.items()}
                    for s, row in m.items()
                }
            succ.append({"block": f"bb{v}", "transitions": m})
        blocks[u]["terminator"] = {"kind": kind, "successors": succ}

    def region(budget: int, in_loop: bool, depth: int) -> tuple[int, int]:
        """Build a single-entry single-exit region of about `budget` blocks."""
        first = new_block(in_loop)
        last = first
        remaining = budget - 1
        while remaining > 0:
            r = rng.random()
            if depth < 6 and remaining >= 4 and r < 0.3:
                size = rng.randrange(1, max(2, min(remaining // 2, 40)))
                a_in, a_out = region(size, in_loop, depth + 1)
                b_in, b_out = region(
                    max(
                        1,
                        remaining // 4
                        if remaining < 8
                        else rng.randrange(1, min(remaining // 2, 40)),
                    ),
                    in_loop,
                    depth + 1,
                )
                join = new_block(in_loop)
                link(last, [a_in, b_in], "switch")
                link(a_out, [join], "goto")
                link(b_out, [join], "goto")
                last = join
                remaining = budget - (len(blocks) - first)
            elif depth < 6 and remaining >= 3 and r < 0.4:
                size = loop_size or rng.randrange(2, max(3, min(remaining, 12)))
                head = new_block(True)
                body_in, body_out = region(max(1, size - 2), True, depth + 1)
                exit_ = new_block(in_loop)
                link(last, [head], "goto")
                link(head, [exit_, body_in], "switch")
                link(body_out, [head], "goto")
                last = exit_
                remaining = budget - (len(blocks) - first)
            else:
                nxt = new_block(in_loop)
                link(last, [nxt], "goto")
                last = nxt
                remaining -= 1
        return first, last

    entry, tail = region(n_blocks, False, 0)
    ret = new_block(False)
    link(tail, [ret], "goto")
    blocks[ret]["terminator"] = {
        "kind": "return",
        "cost": {t: (8 if t == "interpreter" else None) for t in targets},
    }
    return {
        "version": 1,
        "name": f"generated-{n_blocks}-{n_targets}-{seed}",
        "targets": targets,
        "blocks": blocks,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("blocks", type=int)
    ap.add_argument("--targets", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--loop-size", type=int, default=None)
    ap.add_argument(
        "--distinct-matrices", action="store_true", help="a matrix of its own on every edge"
    )
    ap.add_argument("--indent", action="store_true", help="indented JSON")
    a = ap.parse_args(argv)
    plan = generate_plan(a.blocks, a.targets, a.seed, a.loop_size, a.distinct_matrices)
    sys.stdout.buffer.write(orjson.dumps(plan, option=orjson.OPT_INDENT_2 if a.indent else 0))


if __name__ == "__main__":
    main()
