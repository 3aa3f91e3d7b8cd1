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
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from placement_cli.algorithms import tree as tp
from placement_cli.core.io import gc_paused
from placement_cli.ir.tree.build import build_tree
from placement_cli.ir.tree.model import Tree, children_first
from placement_cli.ir.tree.read import parse_tree
from tests.tree_reference import reference_dp

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
            if shape in ("chain", "deep") or rng.random() < 0.5:
                p = open_slots.pop()
            else:
                j = rng.randrange(len(open_slots))
                open_slots[j], open_slots[-1] = open_slots[-1], open_slots[j]
                p = open_slots.pop()
            nodes[p]["children"].append(f"op{i}")
        r = rng.random()
        if shape == "chain":
            arity = 1
        elif (
            shape == "deep"
        ):  # long unary stretches grown depth first (depth about 30k at 100k nodes)
            arity = 2 if r < 0.0003 else 1 if r < 0.9997 else 0
        else:
            arity = 2 if r < 0.35 else 1 if r < 0.8 else 0
        open_slots.extend([i] * arity)
        work = rng.uniform(1, 50)
        # engine0 is the slow interpreter that runs everything, so every budget is feasible
        time_ = {
            e: round(work * speed[k] * rng.uniform(0.5, 1.5), 3)
            for k, e in enumerate(engines)
            if k == 0 or rng.random() > 0.15
        }
        nodes.append(
            {
                "id": f"op{i}",
                "children": [],
                "time": time_,
                "rows": float(int(10 ** rng.uniform(0, 6))),
                "row_width": float(rng.choice([8, 16, 32, 64, 128, 256])),
            }
        )
    linear: dict[str, dict[str, Any]] = {}
    for s in engines:
        for d in engines:
            if s != d and rng.random() < 0.9:
                linear.setdefault(s, {})[d] = {
                    "fixed": round(rng.uniform(0.5, 5), 3),
                    "per_row": round(rng.uniform(1e-5, 1e-4), 7),
                    "per_width": round(rng.uniform(1e-4, 1e-3), 6),
                    "per_byte": round(rng.uniform(1e-7, 1e-6), 9),
                }
    return {
        "version": 1,
        "name": f"{shape}-{n}-{n_engines}-{seed}",
        "engines": engines,
        "budget": 1,
        "nodes": nodes,
        "transfer": {"linear": linear},
    }


def binary_explicit(n: int, n_engines: int, seed: int) -> dict[str, Any]:
    """A complete binary tree of n operators with an explicit transfer for every edge
    and ordered engine pair (the bulky input of the tree goals: 10k nodes, 8 engines, 34+ MB)."""
    rng = random.Random(seed)
    spec = generate(n, n_engines, seed, "plan")
    for i, nd in enumerate(spec["nodes"]):
        nd["children"] = [f"op{c}" for c in (2 * i + 1, 2 * i + 2) if c < n]
    engines = spec["engines"]
    spec["transfer"]["explicit"] = [
        {"child": f"op{i}", "from": s, "to": d, "cost": round(rng.uniform(0.5, 50), 3)}
        for i in range(1, n)
        for s in engines
        for d in engines
        if s != d
    ]
    return spec


def whole_process(quick: bool, seed: int) -> list[dict[str, Any]]:
    """`placement tree FILE --budget 64` as a new process per file: wall and CPU seconds
    (the child's own rusage, so imports, parsing, checking, the DP and writing count)."""
    n = 10_000 if quick else 100_000
    cases: list[tuple[str, dict[str, Any], tuple[str, ...]]] = [
        ("plan", generate(n, 8, seed, "plan"), ()),
        ("deep", generate(n, 8, seed, "deep"), ()),
        ("chain", generate(n, 8, seed, "chain"), ()),
        ("binary+explicit", binary_explicit(n // 10, 8, seed), ()),
        ("binary+explicit", binary_explicit(n // 10, 8, seed), ("--include-input",)),
    ]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for shape, spec, extra in cases:
            src = Path(tmp) / f"{shape}.json"
            src.write_bytes(orjson.dumps(spec))
            out = Path(tmp) / "out.json"
            tree = build_tree(parse_tree(spec))[0]
            cmd = [
                sys.executable,
                "-m",
                "placement_cli",
                "tree",
                str(src),
                "--budget",
                "64",
                "-o",
                str(out),
                "--quiet",
                *extra,
            ]
            t0 = time.perf_counter()
            proc = subprocess.Popen(cmd, stderr=subprocess.PIPE)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            err = proc.stderr.read().decode() if proc.stderr else ""
            if os.waitstatus_to_exitcode(status) != 0:
                raise SystemExit(f"{shape}: exit {os.waitstatus_to_exitcode(status)}: {err}")
            row = {
                "shape": shape,
                "nodes": tree.n,
                "depth": depth(tree),
                "engines": 8,
                "budget": 64,
                "options": " ".join(extra),
                "input_mb": round(src.stat().st_size / 1e6, 1),
                "artifact_mb": round(out.stat().st_size / 1e6, 2),
                "wall_s": round(wall, 2),
                "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            }
            rows.append(row)
            print(
                f"{shape:<16} {row['options']:<16} {tree.n:>7} {row['depth']:>6} {row['input_mb']:>8} {row['artifact_mb']:>8} "
                f"{row['wall_s']:>7} {row['cpu_s']:>7}",
                flush=True,
            )
    return rows


def depth(tree: Tree) -> int:
    d = [0] * tree.n
    for v in reversed(children_first(tree)):
        for u in tree.children[v]:
            d[u] = d[v] + 1
    return max(d) + 1


def literal_work(tree: Tree, k: int) -> int:
    """Inner-loop iterations of the literal pseudocode (lines 14 and 30)."""
    n_e = len(tree.engines)
    return (tree.n - 1) * n_e * ((k + 1) * n_e + (k + 1) * (k + 2) // 2)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.bench_tree", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--quick", action="store_true", help="only 1k and 2k nodes")
    ap.add_argument(
        "--sizes",
        type=lambda x: tuple(int(v) for v in x.split(",")),
        default=None,
        help="node counts of the DP table, e.g. 2000,100000",
    )
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--literal-limit",
        type=float,
        default=2.5e8,
        help="skip the literal DP above this many inner iterations",
    )
    ap.add_argument("--no-chain", action="store_true", help="skip the chain (worst-case) rows")
    ap.add_argument("--out", default=str(RESULTS), help="where to write the JSON results")
    ap.add_argument("--no-dp", action="store_true", help="skip the DP table (fast vs literal)")
    ap.add_argument("--no-process", action="store_true", help="skip the whole-process table")
    args = ap.parse_args(argv)

    sizes = args.sizes or ((1_000, 2_000) if args.quick else (10_000, 100_000))
    shapes = ("plan",) if args.no_chain else ("plan", "deep", "chain")
    rows: list[dict[str, Any]] = []
    header = (
        f"{'shape':<6} {'nodes':>7} {'depth':>6} {'E':>2} {'K':>3} {'load s':>7} {'fast s':>7} {'fast cpu':>8} "
        f"{'literal s':>9} {'lit cpu':>8} {'speedup':>8} {'latency':>14} {'cuts':>4}"
    )
    if not args.no_dp:
        print(header)
        print("-" * len(header))
    for shape in () if args.no_dp else shapes:
        for n in sizes:
            engine_counts = ENGINE_COUNTS if shape == "plan" else (8,)
            for n_e in engine_counts:
                spec = generate(n, n_e, args.seed, shape)
                t0 = time.perf_counter()
                tree = build_tree(parse_tree(spec))[0]
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
                            ref = reference_dp(tree, k)
                        lit, lit_cpu = time.perf_counter() - t0, time.process_time() - c0
                        want = min(ref[tree.root][e][k] for e in range(n_e))
                        if want != res.latency:
                            raise SystemExit(
                                f"mismatch: literal {want} != fast {res.latency} ({shape} n={n} E={n_e} K={k})"
                            )
                    row = {
                        "shape": shape,
                        "nodes": n,
                        "depth": dep,
                        "engines": n_e,
                        "budget": k,
                        "load_s": round(load, 4),
                        "fast_s": round(fast, 4),
                        "fast_cpu_s": round(fast_cpu, 4),
                        "literal_s": None if lit is None else round(lit, 4),
                        "literal_cpu_s": None if lit_cpu is None else round(lit_cpu, 4),
                        "speedup_cpu": None if lit_cpu is None else round(lit_cpu / fast_cpu, 1),
                        "latency": res.latency,
                        "cuts_used": res.cuts_used,
                    }
                    rows.append(row)
                    sp = "-" if lit_cpu is None else f"{lit_cpu / fast_cpu:.1f}x"
                    print(
                        f"{shape:<6} {n:>7} {dep:>6} {n_e:>2} {k:>3} {load:>7.3f} {fast:>7.3f} {fast_cpu:>8.3f} "
                        f"{_fmt(lit):>9} {_fmt(lit_cpu):>8} {sp:>8} {res.latency:>14.3f} {res.cuts_used:>4}",
                        flush=True,
                    )
    processes: list[dict[str, Any]] = []
    if not args.no_process:
        print(
            f"\nwhole process: placement tree FILE --budget 64, E = 8\n{'shape':<16} {'options':<16} {'nodes':>7} {'depth':>6} {'input MB':>8} {'out MB':>8} {'wall s':>7} {'cpu s':>7}"
        )
        processes = whole_process(args.quick, args.seed)
    out = {
        "benchmark": "tree",
        "command": "python -m benchmarks.bench_tree "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "seed": args.seed,
        "python": sys.version.split()[0],
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "rows": rows,
        "whole_process": processes,
    }
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(out, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
