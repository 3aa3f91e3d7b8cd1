"""Load, verify, prune and scc on generated plans of 1k, 10k, 50k and 100k blocks.

    python -m benchmarks.bench_foundation [--quick]

Each size runs in a fresh subprocess so peak memory (ru_maxrss) belongs to that size
alone. `--help` start-up time is measured the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

from benchmarks.generate import generate_plan

RESULTS = Path(__file__).resolve().parent / "results"


def _measure(path: str) -> dict[str, float]:
    import gc

    from placement_cli.algorithms.prune import prune
    from placement_cli.algorithms.scc import scc
    from placement_cli.core.io import dumps, read_bytes
    from placement_cli.formats.plan import Plan
    from placement_cli.ir.graph import build_graph
    from placement_cli.ir.normalize import normalize

    gc.disable()
    t0 = time.perf_counter()
    data = read_bytes(path)
    plan = Plan.model_validate_json(data)
    t1 = time.perf_counter()
    g = build_graph(plan)
    t2 = time.perf_counter()
    pr = prune(g)
    t3 = time.perf_counter()
    sc = scc(g)
    t4 = time.perf_counter()
    out = dumps({"plan": normalize(g), "prune": pr.to_json(g), "scc": sc.to_json(g)})
    t5 = time.perf_counter()
    return {
        "blocks": g.n_blocks,
        "edges": g.n_edges,
        "load_s": t1 - t0,
        "verify_s": t2 - t1,
        "prune_s": t3 - t2,
        "scc_s": t4 - t3,
        "load_prune_scc_s": t4 - t0,
        "write_artifact_s": t5 - t4,
        "artifact_mb": len(out) / 1e6,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="only 1k and 10k")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        sys.stdout.write(json.dumps(_measure(a.child)))
        return
    sizes = [1000, 10000] if a.quick else [1000, 10000, 50000, 100000]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            f = Path(tmp) / f"plan{n}.json"
            f.write_bytes(orjson.dumps(generate_plan(n, 3, seed=7)))
            r = subprocess.run(
                [sys.executable, "-m", "benchmarks.bench_foundation", "--child", str(f)],
                capture_output=True,
                check=True,
                cwd=Path(__file__).resolve().parent.parent,
            )
            row = json.loads(r.stdout)
            row["file_mb"] = f.stat().st_size / 1e6
            rows.append(row)
    starts = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "placement_cli", "--help"], capture_output=True, check=True
        )
        starts.append(time.perf_counter() - t)
    help_s = min(starts)

    print(
        f"{'blocks':>8} {'edges':>8} {'file MB':>8} {'load':>7} {'verify':>7} {'prune':>7} {'scc':>7} {'l+p+s':>7} {'write':>7} {'peak MB':>8}"
    )
    for r in rows:
        print(
            f"{r['blocks']:>8} {r['edges']:>8} {r['file_mb']:>8.1f} {r['load_s']:>7.2f} {r['verify_s']:>7.2f} "
            f"{r['prune_s']:>7.2f} {r['scc_s']:>7.2f} {r['load_prune_scc_s']:>7.2f} {r['write_artifact_s']:>7.2f} {r['peak_rss_mb']:>8.0f}"
        )
    print(f"placement --help: {help_s * 1000:.0f} ms (best of 5, including interpreter start)")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "foundation.json").write_text(
        json.dumps(
            {
                "rows": rows,
                "help_start_s": help_s,
                "python": sys.version.split()[0],
                "cpus": os.cpu_count(),
            },
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
