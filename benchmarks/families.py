"""Seeded generators of plan families for the exact-solver benchmark.

* `structured`: lowered query programs (if/else, switch, nested loops with break and
  continue, early exits to a shared exit block, graph reads) over HashQL-like targets
  (interpreter, postgres, embedding, and a fourth store when asked) whose per-edge
  matrices follow HashQL's terminator placement rules (reference-hashql.md §2.4): same
  target free; interpreter fallback; goto/switch allow every pair; graph reads are
  interpreter-only; nothing enters postgres; postgres is not used inside loops; fixed
  backend-switch overheads plus the live-data size of the destination.
* `structured_open`: the same control flow with every target allowed almost everywhere,
  so the solver faces the control flow's full treewidth.
* `random_cyclic`: random digraphs with cycles, 2 to 8 targets, random domains, costs and
  forbidden pairs (some instances are infeasible).
* `dense_loop`: state machines: a dispatcher loop over many cases that jump to each other,
  with nested inner loops; the width grows with the number of cross jumps.

Every generator takes `(n_blocks, seed, n_targets)` and returns a plan dict (format v1).
"""

from __future__ import annotations

import argparse
import random
import sys
from typing import Any

import orjson

from placement_cli.ir.cfg import tarjan

INTERP, PG, EMB = 0, 1, 2
HASHQL_NAMES = ["interpreter", "postgres", "embedding", "cache"]
# Fixed backend-switch overhead per (source, destination) pair, on top of the transfer.
OVERHEAD = {
    (PG, INTERP): 8,
    (PG, EMB): 12,
    (INTERP, EMB): 4,
    (EMB, INTERP): 4,
    (INTERP, 3): 4,
    (3, INTERP): 4,
    (EMB, 3): 6,
    (3, EMB): 6,
    (PG, 3): 12,
}


class _Cfg:
    """A CFG under construction: per block its statement support and costs, its
    terminator kind and successors."""

    def __init__(self, rng: random.Random, k: int, weights: tuple[int, ...] = (3, 4, 2, 1)) -> None:
        self.rng = rng
        self.k = k
        self.weights = weights
        self.support: list[int] = []  # bitset of targets that can run the block
        self.stmt_cost: list[list[float]] = []
        self.premium: list[dict[int, int]] = []
        self.kind: list[str] = []
        self.succ: list[list[int]] = []
        self.live_size: list[int] = []

    def block(self, flavour: str | None = None) -> int:
        rng = self.rng
        k = self.k
        i = len(self.kind)
        flavour = flavour or rng.choices(("pg", "mixed", "vector", "interp"), self.weights)[0]
        n_stmt = rng.randrange(1, 5)
        support = (1 << k) - 1
        cost = [0.0] * k
        for _ in range(n_stmt):
            m = 1 << INTERP
            cost[INTERP] += 8
            p_pg = {"pg": 0.97, "mixed": 0.6, "vector": 0.2, "interp": 0.0}[flavour]
            p_e = {"pg": 0.6, "mixed": 0.8, "vector": 0.97, "interp": 0.0}[flavour]
            if rng.random() < p_pg:
                m |= 1 << PG
                cost[PG] += 4
            if k > EMB and rng.random() < p_e:
                m |= 1 << EMB
                cost[EMB] += 4
            if k > 3 and rng.random() < 0.8:
                m |= 1 << 3
                cost[3] += rng.choice((3, 5, 6))
            support &= m
        premium: dict[int, int] = {}
        if rng.random() < 0.3:  # reads vertex properties: cheap only where they live (postgres)
            size = rng.choice((6, 12, 40))
            for t in range(k):
                if t != PG:
                    premium[t] = premium.get(t, 0) + size
        if k > EMB and flavour == "vector" and rng.random() < 0.5:  # reads the embedding vectors
            for t in range(k):
                if t != EMB:
                    premium[t] = premium.get(t, 0) + 96
        self.support.append(support)
        self.stmt_cost.append(cost)
        self.premium.append(premium)
        self.kind.append("return")
        self.succ.append([])
        self.live_size.append(rng.choice((1, 1, 2, 2, 3, 4, 6, 16)))
        return i

    def link(self, u: int, vs: list[int], kind: str | None = None) -> None:
        self.succ[u] = list(vs)
        self.kind[u] = kind or ("goto" if len(vs) == 1 else "switch")


def _hashql_plan(cfg: _Cfg, name: str) -> dict[str, Any]:
    """Emit a plan whose matrices follow HashQL's per-edge rules (§2.4)."""
    rng = cfg.rng
    k = cfg.k
    n = len(cfg.kind)
    targets = HASHQL_NAMES[:k] if k <= 4 else HASHQL_NAMES + [f"store{i}" for i in range(4, k)]
    comps = tarjan(n, cfg.succ)
    comp_size = [0] * n
    for c in comps:
        for b in c:
            comp_size[b] = len(c)
    # Terminator support: graph reads are interpreter-only, returns run on interpreter or
    # postgres, an embedding store cannot branch on most values.
    term: list[dict[str, float | None]] = []
    for u in range(n):
        kind = cfg.kind[u]
        if kind == "graph_read":
            tc = {t: (8.0 if t == INTERP else None) for t in range(k)}
        elif kind == "return":
            tc = {t: (8.0 if t == INTERP else 2.0 if t == PG else None) for t in range(k)}
        elif kind == "switch":
            tc = {
                t: (8.0 if t == INTERP else 2.0 if t == PG or rng.random() < 0.6 else None)
                for t in range(k)
            }
        else:
            tc = {t: 0.0 for t in range(k)}
        term.append(tc)
    dom = [
        cfg.support[u] & sum(1 << t for t in range(k) if term[u][t] is not None) for u in range(n)
    ]
    blocks = []
    for u in range(n):
        in_loop = comp_size[u] > 1 or u in cfg.succ[u]
        succs = []
        for v in cfg.succ[u]:
            transfer = cfg.live_size[v]
            du, dv = dom[u], dom[v]
            m: dict[tuple[int, int], int] = {}
            for t in range(k):
                if du >> t & 1 and dv >> t & 1:
                    m[(t, t)] = 0
            if cfg.kind[u] == "graph_read":
                m = {(INTERP, INTERP): 0} if du & dv & 1 else {}
            else:
                for s in range(k):
                    if not du >> s & 1:
                        continue
                    for t in range(k):
                        if dv >> t & 1 and s != t:
                            m[(s, t)] = transfer
            for s, t in list(m):
                if t == PG and s != PG:
                    del m[(s, t)]
                elif in_loop and PG in (s, t):
                    del m[(s, t)]
            rows: dict[str, dict[str, float]] = {}
            for (s, t), c in sorted(m.items()):
                rows.setdefault(targets[s], {})[targets[t]] = c + (
                    OVERHEAD.get((s, t), 5) if s != t else 0
                )
            succs.append({"block": f"bb{v}", "transitions": rows})
        cost = cfg.stmt_cost[u]
        block: dict[str, Any] = {
            "id": f"bb{u}",
            "statements": [
                {"cost": {targets[t]: cost[t] for t in range(k) if cfg.support[u] >> t & 1}}
            ],
            "terminator": {
                "kind": cfg.kind[u],
                "successors": succs,
                "cost": {targets[t]: c for t, c in term[u].items()},
            },
        }
        if cfg.premium[u]:
            block["premium"] = {targets[t]: c for t, c in sorted(cfg.premium[u].items())}
        blocks.append(block)
    return {"version": 1, "name": name, "targets": targets, "blocks": blocks}


def structured(n_blocks: int, seed: int = 0, n_targets: int = 3) -> dict[str, Any]:
    """A structured query program of about `n_blocks` blocks over HashQL-like targets.

    >>> p = structured(200, seed=1)
    >>> len(p["blocks"]) >= 200, p["targets"]
    (True, ['interpreter', 'postgres', 'embedding'])
    """
    rng = random.Random(f"structured-{n_blocks}-{seed}-{n_targets}")
    cfg = _Cfg(rng, n_targets)
    entry = _structured_cfg(cfg, n_blocks)
    plan = _hashql_plan(cfg, f"structured-{n_blocks}-{n_targets}-{seed}")
    plan["entry"] = f"bb{entry}"
    return plan


def structured_open(n_blocks: int, seed: int = 0, n_targets: int = 4) -> dict[str, Any]:
    """The same structured control flow with none of HashQL's restrictions: every target
    runs most blocks and most transitions are allowed, so pruning leaves the control
    flow's own treewidth (up to about 6) for the solver.

    >>> p = structured_open(100, seed=1)
    >>> len(p["blocks"]) >= 100, len(p["targets"])
    (True, 4)
    """
    rng = random.Random(f"open-{n_blocks}-{seed}-{n_targets}")
    cfg = _Cfg(rng, n_targets)
    entry = _structured_cfg(cfg, n_blocks)
    targets = [f"t{i}" for i in range(n_targets)]
    over = [
        [0 if s == t else rng.randrange(2, 9) for t in range(n_targets)] for s in range(n_targets)
    ]
    blocks = []
    for u in range(len(cfg.kind)):
        dom = [t for t in targets if t == "t0" or rng.random() < 0.85]
        succs = []
        for v in cfg.succ[u]:
            transfer = cfg.live_size[v]
            rows = {
                targets[s]: {
                    targets[t]: (0 if s == t else over[s][t] + transfer)
                    for t in range(n_targets)
                    if s == t or rng.random() < 0.9
                }
                for s in range(n_targets)
            }
            succs.append({"block": f"bb{v}", "transitions": rows})
        kind = "switch" if cfg.kind[u] == "graph_read" else cfg.kind[u]
        blocks.append(
            {
                "id": f"bb{u}",
                "domain": dom,
                "cost": {t: rng.randrange(0, 30) for t in dom},
                "terminator": {"kind": kind, "successors": succs},
            }
        )
    return {
        "version": 1,
        "name": f"structured-open-{n_blocks}-{n_targets}-{seed}",
        "targets": targets,
        "entry": f"bb{entry}",
        "blocks": blocks,
    }


def _structured_cfg(cfg: _Cfg, n_blocks: int) -> int:
    """Fill `cfg` with a structured program of about `n_blocks` blocks; returns the entry."""
    rng = cfg.rng
    exit_block = cfg.block("interp")

    def region(budget: int, depth: int, loop: tuple[int, int] | None) -> tuple[int, int]:
        """A single-entry region of about `budget` blocks; returns (entry, last)."""
        first = cfg.block()
        last = first
        used = 1
        while used < budget:
            r = rng.random()
            left = budget - used
            if depth < 7 and left >= 4 and r < 0.22:  # if / else
                a_in, a_out = region(rng.randrange(1, max(2, min(left // 2, 30))), depth + 1, loop)
                if rng.random() < 0.25:
                    b_in = b_out = None
                else:
                    b_in, b_out = region(
                        rng.randrange(1, max(2, min(left // 3, 30))), depth + 1, loop
                    )
                join = cfg.block()
                cfg.link(last, [a_in, b_in if b_in is not None else join], "switch")
                cfg.link(a_out, [join])
                if b_out is not None:
                    cfg.link(b_out, [join])
                last = join
            elif depth < 7 and left >= 8 and r < 0.30:  # switch
                arms = rng.randrange(3, 6)
                outs = []
                ins = []
                for _ in range(arms):
                    a_in, a_out = region(
                        rng.randrange(1, max(2, min(left // (arms + 1), 12))), depth + 1, loop
                    )
                    ins.append(a_in)
                    outs.append(a_out)
                join = cfg.block()
                cfg.link(last, ins, "switch")
                for o in outs:
                    cfg.link(o, [join])
                last = join
            elif depth < 7 and left >= 4 and r < 0.42:  # while loop with break / continue
                head = cfg.block()
                after = cfg.block()
                body_in, body_out = region(
                    rng.randrange(2, max(3, min(left, 40))), depth + 1, (head, after)
                )
                cfg.link(last, [head])
                cfg.link(head, [after, body_in], "switch")
                cfg.link(body_out, [head])
                last = after
            elif left >= 3 and r < 0.50:  # early exit, break or continue out of a guarded block
                guard = cfg.block()
                nxt = cfg.block()
                cfg.link(last, [guard])
                choices = [exit_block]
                if loop is not None:
                    choices += [loop[0], loop[1]]
                cfg.link(guard, [nxt, rng.choice(choices)], "switch")
                last = nxt
            elif r < 0.53:  # graph read (effectful, interpreter-only edge)
                nxt = cfg.block()
                cfg.link(last, [nxt], "graph_read")
                last = nxt
            else:
                nxt = cfg.block()
                cfg.link(last, [nxt])
                last = nxt
            used = len(cfg.kind) - first
        return first, last

    entry, tail = region(n_blocks - 1, 0, None)
    cfg.link(tail, [exit_block])
    return entry


def dense_loop(n_blocks: int, seed: int = 0, n_targets: int = 3) -> dict[str, Any]:
    """A state-machine loop: a dispatcher switching over cases that fall through to or
    jump into other cases, continue, break, or run a small inner loop.

    >>> p = dense_loop(60, seed=2)
    >>> len(p["blocks"]) >= 60
    True
    """
    rng = random.Random(f"dense-{n_blocks}-{seed}-{n_targets}")
    # Loop bodies that the stores can run: postgres is barred from loops anyway.
    cfg = _Cfg(rng, n_targets, (0, 5, 4, 1))
    entry = cfg.block("pg")
    exit_block = cfg.block("interp")
    prev = entry
    while len(cfg.kind) < n_blocks:
        disp = cfg.block()
        after = cfg.block()
        cases = []
        for _ in range(rng.randrange(6, 16)):
            c_in = cfg.block()
            c_out = c_in
            for _ in range(rng.randrange(0, 3)):
                nxt = cfg.block()
                if rng.random() < 0.3:  # an inner loop around c_out
                    cfg.link(c_out, [nxt, c_out], "switch")
                    if rng.random() < 0.5:
                        cfg.link(nxt, [c_out])
                        nxt2 = cfg.block()
                        cfg.link(c_out, [nxt2, nxt], "switch")
                        nxt = nxt2
                else:
                    cfg.link(c_out, [nxt])
                c_out = nxt
            cases.append((c_in, c_out))
        cfg.link(disp, [c for c, _ in cases] + [after], "switch")
        for _c_in, c_out in cases:
            jumps = [disp]
            for _ in range(rng.randrange(1, 4)):
                jumps.append(rng.choice(cases)[0])
            if rng.random() < 0.2:
                jumps.append(after)
            if rng.random() < 0.1:
                jumps.append(exit_block)
            cfg.link(c_out, jumps)
        cfg.link(prev, [disp])
        prev = after
    cfg.link(prev, [exit_block])
    return _hashql_plan(cfg, f"dense-{n_blocks}-{n_targets}-{seed}")


def random_cyclic(n_blocks: int, seed: int = 0, n_targets: int | None = None) -> dict[str, Any]:
    """A random digraph with cycles: a spine, forward and back edges, 2 to 8 targets,
    random domains, costs and matrices (forbidden pairs included, so some instances are
    infeasible).

    >>> p = random_cyclic(30, seed=3)
    >>> 2 <= len(p["targets"]) <= 8
    True
    """
    rng = random.Random(f"random-{n_blocks}-{seed}-{n_targets}")
    k = n_targets if n_targets is not None else rng.randrange(2, 9)
    targets = [f"t{i}" for i in range(k)]
    blocks = []
    for i in range(n_blocks):
        dom = [t for t in targets if rng.random() < 0.75] or [rng.choice(targets)]
        succ = [i + 1] if i + 1 < n_blocks else []
        while rng.random() < 0.35 and len(succ) < 3:
            succ.append(rng.randrange(n_blocks))
        edges = []
        for s in succ:
            rows: dict[str, dict[str, int]] = {}
            for a in targets:
                row = {
                    b: (0 if a == b else rng.randrange(1, 12))
                    for b in targets
                    if a == b or rng.random() < 0.9
                }
                rows[a] = row
            edges.append({"block": f"b{s}", "transitions": rows})
        blocks.append(
            {
                "id": f"b{i}",
                "domain": dom,
                "cost": {t: rng.randrange(0, 25) for t in dom},
                "terminator": {"kind": "switch", "successors": edges}
                if edges
                else {"kind": "return"},
            }
        )
    return {
        "version": 1,
        "name": f"random-{n_blocks}-{k}-{seed}",
        "targets": targets,
        "blocks": blocks,
    }


FAMILIES = {
    "structured": structured,
    "structured_open": structured_open,
    "random": random_cyclic,
    "dense_loop": dense_loop,
}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("family", choices=sorted(FAMILIES))
    ap.add_argument("blocks", type=int)
    ap.add_argument("--targets", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    gen = FAMILIES[a.family]
    plan = gen(a.blocks, a.seed) if a.targets is None else gen(a.blocks, a.seed, a.targets)
    sys.stdout.buffer.write(orjson.dumps(plan))


if __name__ == "__main__":
    main()
