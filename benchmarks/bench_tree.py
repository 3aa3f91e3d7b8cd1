"""Benchmark of `placement tree`: the fast DP against the literal seed pseudocode.

    .venv/bin/python -m benchmarks.bench_tree            # 10k and 100k nodes
    .venv/bin/python -m benchmarks.bench_tree --quick    # 1k and 2k nodes only

Trees come from a seeded generator shaped like query plans: joins (two inputs), unary
operators (filter, project, aggregate, sort), scans at the leaves; engine0 (a slow
interpreter) runs everything, each other engine misses ~15% of the operators; every ordered engine pair has a linear transfer
model (fixed + per row + per byte) with probability 0.9. Shape `plan` grows the tree
at a random open input half of the time and at the newest one otherwise (left-deep
stretches; depth about 125 at 100k nodes); shape `chain` is one operator per level,
the worst case (every subtree has more edges than K, so nothing is short).

`fast` is `place` (DP plus argmin reconstruction), `literal` is `reference_dp` (DP
only), both on the same already-built tree, in the same run; `load` is validating the
file and building the tree. Wall-clock and CPU seconds are both shown: on a shared
machine CPU time is the fairer comparison, and the speedup uses it. The literal one
runs only where its estimated work fits `--literal-limit` (inner-loop iterations), and
where it runs its answer must equal the fast one's, else the benchmark stops.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

from placement_cli.io import gc_paused
from placement_cli.passes import tree as tp

RESULTS = Path(__file__).resolve().parent / "results" / "tree.json"
KS = (1, 4, 16, 64)
ENGINE_COUNTS = (2, 4, 8)


def generate(n: int, n_engines: int, seed: int, shape: str = "plan") -> dict[str, Any]:
    """A tree file (dict) with n operators on n_engines engines; same seed, same file."""
    rng = random.Random(seed)
    engines = [f"engine{i}" for i in range(n_engines)]
    speed = [3.0] + [rng.uniform(0.5, 2.0) for _ in engines[1:]]
    nodes: list[dict[str, Any]] = []
    open_slots: list[int] = []  # parents (node index) with a free input
    for i in range(n):
        if i > 0:
            if not open_slots:
                # every branch ended: give some leaf one more input
                open_slots.append(rng.randrange(i))
            if shape == "chain" or rng.random() < 0.5:
                p = open_slots.pop()
            else:
                j = rng.randrange(len(open_slots))
                open_slots[j], open_slots[-1] = open_slots[-1], open_slots[j]
                p = open_slots.pop()
            nodes[p]["children"].append(f"op{i}")
        r = rng.random()
        arity = 1 if shape == "chain" else (2 if r < 0.35 else 1 if r < 0.8 else 0)
        open_slots.extend([i] * arity)
        work = rng.uniform(1, 50)
        # engine0 is the slow interpreter that runs everything, so every budget is feasible
        time_ = {e: round(work * speed[k] * rng.uniform(0.5, 1.5), 3) for k, e in enumerate(engines) if k == 0 or rng.random() > 0.15}
        nodes.append({"id": f"op{i}", "children": [], "time": time_, "rows": float(int(10 ** rng.uniform(0, 6))), "row_width": float(rng.choice([8, 16, 32, 64, 128, 256]))})
    linear: dict[str, dict[str, Any]] = {}
    for s in engines:
        for d in engines:
            if s != d and rng.random() < 0.9:
                linear.setdefault(s, {})[d] = {
                    "fixed": round(rng.uniform(0.5, 5), 3),
                    "per_row": round(rng.uniform(1e-5, 1e-4), 7),
                    "per_byte": round(rng.uniform(1e-7, 1e-6), 9),
                }
    return {"version": 1, "name": f"{shape}-{n}-{n_engines}-{seed}", "engines": engines, "budget": 1, "nodes": nodes, "transfer": {"linear": linear}}


def depth(tree: tp.Tree) -> int:
    d = [0] * tree.n
    for v in reversed(tp.children_first(tree)):
        for u in tree.children[v]:
            d[u] = d[v] + 1
    return max(d) + 1


def literal_work(tree: tp.Tree, k: int) -> int:
    """Inner-loop iterations of the literal pseudocode (lines 14 and 30)."""
    n_e = len(tree.engines)
    return (tree.n - 1) * n_e * ((k + 1) * n_e + (k + 1) * (k + 2) // 2)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_tree", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="only 1k and 2k nodes")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--literal-limit", type=float, default=2.5e8, help="skip the literal DP above this many inner iterations")
    ap.add_argument("--no-chain", action="store_true", help="skip the chain (worst-case) rows")
    ap.add_argument("--out", default=str(RESULTS), help="where to write the JSON results")
    args = ap.parse_args(argv)

    sizes = (1_000, 2_000) if args.quick else (10_000, 100_000)
    shapes = ("plan",) if args.no_chain else ("plan", "chain")
    rows: list[dict[str, Any]] = []
    header = (
        f"{'shape':<6} {'nodes':>7} {'depth':>6} {'E':>2} {'K':>3} {'load s':>7} {'fast s':>7} {'fast cpu':>8} "
        f"{'literal s':>9} {'lit cpu':>8} {'speedup':>8} {'latency':>14} {'cuts':>4}"
    )
    print(header)
    print("-" * len(header))
    for shape in shapes:
        for n in sizes:
            engine_counts = ENGINE_COUNTS if shape == "plan" else (8,)
            for n_e in engine_counts:
                spec = generate(n, n_e, args.seed, shape)
                t0 = time.perf_counter()
                tree = tp.build_tree(tp.parse_tree(spec))[0]
                load = time.perf_counter() - t0
                dep = depth(tree)
                for k in KS:
                    t0, c0 = time.perf_counter(), time.process_time()
                    res = tp.place(tree, k)
                    fast, fast_cpu = time.perf_counter() - t0, time.process_time() - c0
                    lit = lit_cpu = None
                    if literal_work(tree, k) <= args.literal_limit:
                        t0, c0 = time.perf_counter(), time.process_time()
                        with gc_paused():  # as `place` does, so both run alike
                            ref = tp.reference_dp(tree, k)
                        lit, lit_cpu = time.perf_counter() - t0, time.process_time() - c0
                        want = min(ref[tree.root][e][k] for e in range(n_e))
                        if want != res.latency:
                            raise SystemExit(f"mismatch: literal {want} != fast {res.latency} ({shape} n={n} E={n_e} K={k})")
                    row = {
                        "shape": shape, "nodes": n, "depth": dep, "engines": n_e, "budget": k,
                        "load_s": round(load, 4), "fast_s": round(fast, 4), "fast_cpu_s": round(fast_cpu, 4),
                        "literal_s": None if lit is None else round(lit, 4),
                        "literal_cpu_s": None if lit_cpu is None else round(lit_cpu, 4),
                        "speedup_cpu": None if lit_cpu is None else round(lit_cpu / fast_cpu, 1),
                        "latency": res.latency, "cuts_used": res.cuts_used,
                    }
                    rows.append(row)
                    sp = "-" if lit_cpu is None else f"{lit_cpu / fast_cpu:.1f}x"
                    print(
                        f"{shape:<6} {n:>7} {dep:>6} {n_e:>2} {k:>3} {load:>7.3f} {fast:>7.3f} {fast_cpu:>8.3f} "
                        f"{_fmt(lit):>9} {_fmt(lit_cpu):>8} {sp:>8} {res.latency:>14.3f} {res.cuts_used:>4}",
                        flush=True,
                    )
    out = {
        "benchmark": "tree",
        "command": "python -m benchmarks.bench_tree" + (" --quick" if args.quick else ""),
        "seed": args.seed,
        "python": sys.version.split()[0],
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "rows": rows,
    }
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(out, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
