"""Warm start vs cold start of `solve` after a small edit.

    .venv/bin/python -m benchmarks.bench_warm [--blocks 100000] [--targets 3] [--frac 0.01]

A generated plan (`benchmarks/generate.py`, seeded) is solved once (`auto`); then a
fraction `--frac` of its statements get new costs, and the edited plan is solved cold and
warm (`SolveOptions.warm_start` = the first answer, blocks matched by id). Each time is
the `solve(...)` call alone; both runs must prove the optimum and agree on it. Results
go to `benchmarks/results/warm.json`.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import platform
import random
import time
from pathlib import Path
from typing import Any

from benchmarks.generate import generate_plan
from placement_cli.algorithms.prune import prune
from placement_cli.algorithms.scc import scc
from placement_cli.algorithms.solve.driver import SolveOptions, solve
from placement_cli.pipeline.run import parse_plan

RESULTS = Path(__file__).resolve().parent / "results" / "warm.json"


def edit(plan: dict[str, Any], frac: float, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    out = copy.deepcopy(plan)
    stmts = [s for b in out["blocks"] for s in b.get("statements", [])]
    for s in rng.sample(stmts, max(1, int(len(stmts) * frac))):
        for t in list(s["cost"]):
            if s["cost"][t] is not None:
                s["cost"][t] = rng.choice((1, 2, 3, 5, 8, 13))
    return out


def timed(g: Any, opts: SolveOptions) -> tuple[Any, float]:
    d, c = prune(g).domains, scc(g)
    gc.collect()
    t = time.perf_counter()
    r = solve(g, d, c, opts)
    return r, time.perf_counter() - t


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--blocks", type=int, default=100_000)
    ap.add_argument("--targets", type=int, default=3)
    ap.add_argument("--frac", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--time-limit", type=float, default=300.0)
    a = ap.parse_args(argv)
    plan = generate_plan(a.blocks, a.targets, seed=a.seed)
    g0 = parse_plan(plan)
    r0, t0 = timed(g0, SolveOptions(time_limit=a.time_limit))
    prev = tuple(r0.to_json(g0)["assignment"].items())
    g = parse_plan(edit(plan, a.frac, a.seed))
    rows = []
    for method in ("auto", "heuristic"):
        cold, tc = timed(g, SolveOptions(method=method, time_limit=a.time_limit))
        warm, tw = timed(g, SolveOptions(method=method, time_limit=a.time_limit, warm_start=prev))
        rows.append(
            {
                "method": method,
                "cold_s": round(tc, 3),
                "warm_s": round(tw, 3),
                "cold_cost": cold.cost.total,
                "warm_cost": warm.cost.total,
                "cold_optimal": cold.optimal,
                "warm_optimal": warm.optimal,
                "warm_matched": warm.stats.get("warm_matched"),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    out = {
        "benchmark": "warm",
        "command": "python -m benchmarks.bench_warm",
        "blocks": g.n_blocks,
        "targets": a.targets,
        "edited_fraction": a.frac,
        "first_solve_s": round(t0, 3),
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        "rows": rows,
    }
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
