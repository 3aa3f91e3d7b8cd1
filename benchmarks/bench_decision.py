"""Is the tool's choice ever slower than the fastest single engine? The decision flow
on TPC-H, judged against a ground truth measured afterwards.

    .venv/bin/python -m benchmarks.bench_decision --sf 0.1                  # TPC-H, all 22
    .venv/bin/python -m benchmarks.bench_decision --sf 1 --queries 1,3,5,6,9,10,12,14,18
    .venv/bin/python -m benchmarks.bench_decision --bench tpcds --sf 0.1 --queries 3,7,19,42,52,55
    make bench-decisions                       # TPC-H, all 22, at SF 0.1 and SF 1

Per query, each step a `placement` process as a user runs it (DuckDB and DataFusion):
`import sql --probe --repeat 3 --transfer PROFILE` (a profile `calibrate measure` +
`calibrate fit` made once per run; with `--in-pipeline`, that flag too), `tree --budget 1` (the model's decision:
`tree.decision`, latency `auto`), `execute --verify 3 --repeat 5 --placed-out` (the
decision by measurement). Then the ground truth: `execute` on each decision's artifact
with `--repeat 7` runs the chosen way and every single-engine way (the plan whole and
the query as written, each engine) in 7 interleaved rounds; the chosen way's median
over the fastest single-engine way's median is the decision's regret (1.0: it is the
fastest; below 1: it beat every single engine).

`--threads N` gives every step `--threads N`; `--forks K` gives the verify and both
ground-truth runs `--forks K` (each measured in K fresh processes, their runs pooled;
the probe stays one process).

Recorded per query: each decision, the verify evidence (wins, p, gain), the seconds
each step took, the ground-truth medians and ratios, the machine's other load. JSON to
`benchmarks/results/decision_tpch-sfX_DATE.json` (or `-o`) and a markdown table on
stdout.
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from benchmarks.sweep_engines import _cli, _last, make_data, measuring_options

RESULTS = Path(__file__).resolve().parent / "results"


def _json(path: Path) -> Any:
    return orjson.loads(path.read_bytes())


def _step(out: dict[str, Any], name: str, args: list[str], cwd: Path) -> bool:
    t0 = time.perf_counter()
    r = _cli(*args, cwd=cwd, timeout=3600)
    out["steps"][name] = {
        "exit": r.returncode,
        "seconds": round(time.perf_counter() - t0, 2),
        **({"stderr": _last(r.stderr)} if r.returncode else {}),
    }
    return r.returncode == 0


def _truth(report: Path, label: str | None = None) -> dict[str, Any]:
    """What an independent run says of a decision: the decided way's median (`label`,
    else the report's chosen) over the fastest single-engine way's; and, when the run
    had splits, the best split and whether it beat every single-engine way by 10% or
    more in every paired round (a gain the decision should have captured)."""
    sec = _json(report)["execute"]
    ways = [p for p in sec["placements"] if p["measured"]]
    singles = [p for p in ways if p["single_engine"]]
    splits = [p for p in ways if not p["single_engine"]]
    label = label or sec["summary"]["chosen"]
    chosen = next((p for p in ways if p["label"] == label), None)
    best = min(singles, key=lambda p: p["measured"]["median"])
    out: dict[str, Any] = {
        "chosen": label,
        "chosen_ms": chosen["measured"]["median"] if chosen else None,
        "best_single": best["label"],
        "best_single_ms": best["measured"]["median"],
        "ratio": round(chosen["measured"]["median"] / best["measured"]["median"], 4)
        if chosen
        else None,
        "singles": {p["label"]: p["measured"]["median"] for p in singles},
        "machine": sec.get("machine"),
    }
    if splits:
        top = min(splits, key=lambda p: p["measured"]["median"])
        rounds = list(zip(*(p["measured"]["runs"] for p in [top, *singles]), strict=False))
        clear = bool(rounds) and all(r[0] <= 0.9 * min(r[1:]) for r in rounds)
        out["best_split"] = top["label"]
        out["best_split_ms"] = top["measured"]["median"]
        out["split_beats_every_single_by_10pct_every_round"] = clear
        if clear and chosen:
            gain = best["measured"]["median"] - top["measured"]["median"]
            got = best["measured"]["median"] - chosen["measured"]["median"]
            out["captured"] = round(got / gain, 3)
    return out


def _clear(t: dict[str, Any]) -> str:
    """Whether the independent run saw a split beat every single way by 10% in every
    round, and how much of its gain the decision captured."""
    if not t.get("split_beats_every_single_by_10pct_every_round"):
        return "no"
    return f"yes ({t.get('best_split')}), captured {t.get('captured')}"


def one(
    nr: int, sql: str, work: Path, db: Path, profile: Path, a: argparse.Namespace
) -> dict[str, Any]:
    """One query's steps, with the run's `--in-pipeline`, `--threads` and `--forks` (`a`)."""
    q = work / f"q{nr:02d}"
    q.mkdir(parents=True, exist_ok=True)
    (q / "q.sql").write_text(sql)
    out: dict[str, Any] = {"query": nr, "steps": {}}
    src = ["--db", str(db), "--threads", str(a.threads), "--caches", a.caches]
    # The verify and the judge's runs alike, in `forks` processes each.
    fk = ["--forks", str(a.forks)] if a.forks > 1 else []
    ok = _step(out, "import", ["import", "sql", "q.sql", "--probe", *(["--in-pipeline"] if a.in_pipeline else []), *src, "--engines", "duckdb,datafusion", "--repeat", "3", "--transfer", str(profile), "-q", "-o", "tree.json"], q)  # fmt: skip
    ok = ok and _step(out, "tree", ["tree", "tree.json", "--budget", "1", "-q", "-o", "placed.json"], q)  # fmt: skip
    ok = ok and _step(out, "verify", ["execute", "placed.json", *src, *fk, "--verify", "3", "--repeat", "5", "--placed-out", "final.json", "-q", "-o", "verify.json"], q)  # fmt: skip
    if not ok:
        return out
    placed = _json(q / "placed.json")["tree"]
    out["dp"] = {
        "latency": placed["latency"],
        "cuts": placed["cuts_used"],
        "model": placed.get("latency_model"),
    }
    out["model_decision"] = {k: placed["decision"][k] for k in ("chosen", "reason", "error")}
    v = _json(q / "verify.json")["execute"]["verify"]
    out["verified"] = v
    ok = _step(out, "truth_model", ["execute", "placed.json", *src, *fk, "--repeat", "7", "-q", "-o", "truth_model.json"], q)  # fmt: skip
    # Independent of the decision's own runs: the model's three best splits and every
    # single-engine way again, 7 interleaved rounds.
    ok = _step(out, "truth_verified", ["execute", "final.json", *src, *fk, "--verify", "3", "--repeat", "7", "-q", "-o", "truth_verified.json"], q) and ok  # fmt: skip
    if ok:
        out["truth_model"] = _truth(q / "truth_model.json")
        out["truth_verified"] = _truth(q / "truth_verified.json", v.get("adopted"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", choices=("tpch", "tpcds"), default="tpch")
    ap.add_argument("--sf", type=float, default=0.1)
    ap.add_argument("--queries", help="N,N,... (default: all)")
    ap.add_argument(
        "--data", type=Path, default=Path(tempfile.gettempdir()) / "placement-bench-data"
    )
    ap.add_argument(
        "--in-pipeline",
        action="store_true",
        help="probe with `--in-pipeline` (then `tree`'s `auto` is the measured model)",
    )
    measuring_options(ap, "the verify and the ground truth")
    ap.add_argument("-o", "--output", type=Path)
    a = ap.parse_args(argv)
    db, texts = make_data(a.bench, a.sf, a.data)
    wanted = [int(x) for x in a.queries.split(",")] if a.queries else sorted(texts)
    work = Path(tempfile.mkdtemp(prefix="placement-decision-"))
    prof: dict[str, Any] = {"steps": {}}
    _step(
        prof,
        "measure",
        ["calibrate", "measure", "--db", str(db), "--threads", str(a.threads), "-q", "-o", "h.csv"],
        work,
    )
    _step(prof, "fit", ["calibrate", "fit", "h.csv", "-q", "-o", "profile.json"], work)
    rows = []
    for n in wanted:
        rows.append(one(n, texts[n], work, db, work / "profile.json", a))
        ratio = (rows[-1].get("truth_verified") or {}).get("ratio")
        print(f"Q{n}: verified / fastest single {ratio}", file=sys.stderr, flush=True)
    date = datetime.date.today().isoformat()
    path = a.output or RESULTS / f"decision_{a.bench}-sf{a.sf:g}_{date}.json"
    doc = {
        "bench": a.bench,
        "sf": a.sf,
        "date": date,
        "probe": "interleaved rounds" + (", in-pipeline" if a.in_pipeline else ""),
        "threads": a.threads,
        "forks": a.forks,
        "caches": a.caches,
        "work": str(work),
        "calibration": prof,
        "queries": rows,
    }
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
    print(
        "| query | model's choice | ratio | verified choice | wins/pairs, gain | ratio | "
        "a split 10% faster every round | probe s | verify s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    ratios: dict[str, list[float]] = {"model": [], "verified": []}
    for r in rows:
        tm, tv, v = (
            r.get("truth_model") or {},
            r.get("truth_verified") or {},
            r.get("verified") or {},
        )
        for k, t in (("model", tm), ("verified", tv)):
            if t.get("ratio") is not None:
                ratios[k].append(t["ratio"])
        print(
            f"| Q{r['query']} | {tm.get('chosen')} | {tm.get('ratio')} | {tv.get('chosen')} | "
            f"{v.get('wins')}/{v.get('pairs')}, {v.get('gain')} | {tv.get('ratio')} | "
            f"{_clear(tv)} | {r['steps'].get('import', {}).get('seconds')} | "
            f"{r['steps'].get('verify', {}).get('seconds')} |"
        )
    for k, xs in ratios.items():
        if xs:
            within = sum(1 for x in xs if x <= 1.05)
            print(
                f"{k}: median ratio {statistics.median(xs):.3f}, max {max(xs):.3f}, within 1.05x on {within}/{len(xs)}"
            )
    print(f"results: {path}")
    failed = [r["query"] for r in rows if any(s["exit"] not in (0,) for s in r["steps"].values())]
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
