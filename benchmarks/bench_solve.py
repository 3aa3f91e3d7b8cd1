"""Benchmark of `solve`: time and cost on generated plans.

    .venv/bin/python -m benchmarks.bench_solve            # 1k, 10k, 100k blocks; 3 and 8 targets; large loops
    .venv/bin/python -m benchmarks.bench_solve --quick    # small sizes only

Plans come from `benchmarks/generate.py` (seeded). For each plan the pipeline's earlier
stages (parse, prune, scc) run once and are timed apart (`prep_s`); then `solve` runs
with `--method heuristic` (the seed algorithm) and `--method auto` (heuristic, then the
exact method with the time left), each timed on the `solve(...)` call alone, the
pass's own instance building included. Reported per run: wall time, cost, proven lower
bound, gap, whether optimality was proven and by what, and the solver counters. When
`auto` proves the optimum, `heur_gap_to_opt` is the heuristic's distance to it.
Results go to `benchmarks/results/solve.json`.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import time
from pathlib import Path
from typing import Any

from benchmarks.generate import generate_plan
from placement_cli.algorithms.prune import prune
from placement_cli.algorithms.scc import scc
from placement_cli.algorithms.solve.driver import SolveOptions, solve
from placement_cli.pipeline.run import parse_plan

RESULTS = Path(__file__).resolve().parent / "results" / "solve.json"

Case = tuple[int, int, int | None, int]  # blocks, targets, loop size (None: generator's mix), seed


def cases(quick: bool) -> list[Case]:
    if quick:
        return [(1000, 3, None, 1), (1000, 8, None, 1), (2000, 3, 60, 3)]
    out: list[Case] = [(n, k, None, 1) for n in (1000, 10_000, 100_000) for k in (3, 8)]
    out += [(2000, 3, 60, 3), (2000, 8, 60, 3), (5000, 3, 100, 2)]
    return out


def run_case(case: Case, methods: list[str], time_limit: float) -> list[dict[str, Any]]:
    n, k, loop, seed = case
    t0 = time.perf_counter()
    plan = generate_plan(n, k, seed, loop)
    g = parse_plan(plan)
    domains = prune(g).domains
    comps = scc(g)
    prep = time.perf_counter() - t0
    biggest = max(len(c.blocks) for c in comps.components)
    rows = []
    for method in methods:
        gc.collect()
        t = time.perf_counter()
        res = solve(g, domains, comps, SolveOptions(method=method, time_limit=time_limit))
        dt = time.perf_counter() - t
        st = res.stats
        rows.append(
            {
                "blocks": g.n_blocks,
                "targets": k,
                "loop_size": loop,
                "seed": seed,
                "largest_scc": biggest,
                "prep_s": round(prep, 3),
                "method": method,
                "solve_s": round(dt, 3),
                "status": res.status,
                "cost": None if res.cost is None else res.cost.total,
                "lower_bound": res.lower_bound,
                "gap": res.gap,
                "optimal": res.optimal,
                "method_used": res.method_used,
                "proved_by": res.proved_by,
                "forward_cost": st.get("forward_cost"),
                "backtracks": st.get("backtracks"),
                "rounds": st.get("rounds"),
                "csp_solves": st.get("csp_solves"),
                "csp_nodes": st.get("csp_nodes"),
                "cache_hits": st.get("cache_hits"),
                "fallback_used": st.get("fallback_used"),
            }
        )
    by = {r["method"]: r for r in rows}
    if "heuristic" in by and "auto" in by and by["auto"]["optimal"] and by["auto"]["cost"]:
        opt = by["auto"]["cost"]
        by["heuristic"]["heur_gap_to_opt"] = (by["heuristic"]["cost"] - opt) / opt
    return rows


def _fmt(x: Any, spec: str = "") -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    return format(x, spec)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="small sizes only")
    ap.add_argument(
        "--methods",
        default="heuristic,auto",
        help="comma-separated methods (default: heuristic,auto)",
    )
    ap.add_argument(
        "--time-limit", type=float, default=5.0, help="solve's --time-limit (default 5)"
    )
    ap.add_argument("--out", default=str(RESULTS), help=f"results file (default {RESULTS})")
    a = ap.parse_args(argv)
    methods = [m for m in a.methods.split(",") if m]
    head = (
        f"{'blocks':>7} {'K':>2} {'loop':>4} {'scc':>4} {'prep s':>7} {'method':>9} {'solve s':>8} "
        f"{'cost':>11} {'lower bd':>11} {'gap':>7} {'opt':>4} {'by':>8} {'fwd cost':>11} {'bt':>3} "
        f"{'csp nodes':>9} {'hits':>6} {'vs opt':>7}"
    )
    print(head)
    print("-" * len(head))
    rows: list[dict[str, Any]] = []
    for case in cases(a.quick):
        for r in run_case(case, methods, a.time_limit):
            rows.append(r)
            print(
                f"{r['blocks']:>7} {r['targets']:>2} {_fmt(r['loop_size']):>4} {r['largest_scc']:>4} "
                f"{r['prep_s']:>7.2f} {r['method']:>9} {r['solve_s']:>8.3f} {_fmt(r['cost'], '.0f'):>11} "
                f"{_fmt(r['lower_bound'], '.0f'):>11} {_fmt(r['gap'], '.2%'):>7} {_fmt(r['optimal']):>4} "
                f"{_fmt(r['proved_by']):>8} {_fmt(r['forward_cost'], '.0f'):>11} {_fmt(r['backtracks']):>3} "
                f"{_fmt(r['csp_nodes']):>9} {_fmt(r['cache_hits']):>6} {_fmt(r.get('heur_gap_to_opt'), '.2%'):>7}",
                flush=True,
            )
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "benchmark": "solve",
        "command": "python -m benchmarks.bench_solve" + (" --quick" if a.quick else ""),
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
        },
        "time_limit": a.time_limit,
        "rows": rows,
    }
    out.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
