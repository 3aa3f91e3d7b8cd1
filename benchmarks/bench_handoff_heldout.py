"""Does `calibrate fit`'s transfer model, fitted on `calibrate measure`'s hand-offs,
predict the hand-offs `execute --calibrate-out` measures? Two checkouts compared (e.g.
before and after a change of the PostgreSQL route), on one server, in one run.

    cd /work/main && .venv/bin/python -m tests.servers -- \\
        .venv/bin/python -m benchmarks.bench_handoff_heldout --before /work/wt-before --after /work/wt-after

Reads `PLACEMENT_TEST_PG` (DSN) and `PLACEMENT_TEST_TPCH` (DuckDB file, TPC-H SF 0.1)
from the environment (`tests.servers` sets both). Each side runs as
`python -m placement_cli ...` with cwd and PYTHONPATH set to its checkout (checked:
`placement_cli.__file__` must lie inside it). Per side:

1. `calibrate measure --pairs duckdb:postgres,postgres:duckdb,datafusion:postgres,
   postgres:datafusion --repeat 3` (default rows and widths) -> m.csv;
2. `calibrate fit m.csv` -> profile.json (its stderr lines, with the held-out median
   error, kept);
3. per TPC-H query (3, 5, 10; text from DuckDB's `tpch_queries()`): `import sql --probe
   --engines duckdb,datafusion,postgres --repeat 1 --transfer profile.json`, then
   `execute --all --budget 1 --repeat 3 --calibrate-out qN.h.csv`. A query whose import
   + execute exceed `--query-timeout` seconds (default 240) is killed and dropped.
4. The profile's model T = a + b*R + c*W + d*R*W evaluated on every row of every
   qN.h.csv; relative error |T - ms| / ms per row; per direction: n, median, p90
   (numpy's linear-interpolation percentile). Directions without a model in the profile
   (duckdb <-> datafusion cuts) are counted apart.

The steps are interleaved (measure before, measure after, fit both, then per query
before, after) so that a change of load on the shared machine hits both sides alike.
The load average (/proc/loadavg) is recorded at the start and the end.

Result: JSON in `benchmarks/results/handoff-heldout_before-after_DATE.json` (or `-o`),
a markdown summary on stdout. Intermediate files stay in `--work` (default: a fresh
folder under /tmp).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PAIRS = "duckdb:postgres,postgres:duckdb,datafusion:postgres,postgres:datafusion"
QUERIES = (3, 5, 10)
ENGINES = "duckdb,datafusion,postgres"
FIT_LINE = re.compile(
    r"^(?P<src>\w+) -> (?P<dst>\w+): n=(?P<n>\d+).*?"
    r"(?:held-out median error (?P<ho>[\d.]+)% \((?P<hon>\d+) points\)|no held-out check)"
)


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


class Side:
    def __init__(self, label: str, checkout: Path, work: Path, env: dict[str, str]) -> None:
        self.label = label
        self.dir = checkout.resolve()
        self.work = work / label
        self.work.mkdir(parents=True, exist_ok=True)
        self.env = dict(env, PYTHONPATH=str(self.dir))
        self.commands: list[dict[str, Any]] = []

    def run(self, args: list[str], timeout: float | None = None) -> dict[str, Any]:
        cmd = [sys.executable, "-m", "placement_cli", *args]
        t0 = time.perf_counter()
        rec: dict[str, Any] = {"cmd": cmd, "cwd": str(self.dir)}
        try:
            p = subprocess.run(
                cmd, cwd=self.dir, env=self.env, capture_output=True, text=True, timeout=timeout
            )
            rec.update(rc=p.returncode, stderr=p.stderr[-4000:], stdout=p.stdout[-2000:])
        except subprocess.TimeoutExpired as e:
            err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
            rec.update(rc=None, timeout=True, stderr=err[-4000:])
        rec["seconds"] = round(time.perf_counter() - t0, 2)
        self.commands.append(rec)
        status = "TIMEOUT" if rec.get("timeout") else f"rc={rec['rc']}"
        print(f"[{self.label}] {status} {rec['seconds']:.1f}s: {' '.join(args)}", flush=True)
        if rec.get("rc") not in (0, None) or rec.get("timeout"):
            print(rec["stderr"][-1500:], file=sys.stderr, flush=True)
        return rec

    def which(self) -> str:
        p = subprocess.run(
            [sys.executable, "-c", "import placement_cli; print(placement_cli.__file__)"],
            cwd=self.dir,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        path = p.stdout.strip()
        if not Path(path).resolve().is_relative_to(self.dir):
            raise SystemExit(f"{self.label}: placement_cli comes from {path}, not {self.dir}")
        return path

    def commit(self) -> str:
        return subprocess.run(
            ["git", "-C", str(self.dir), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()


def query_text(tpch: str, n: int) -> str:
    import duckdb
    from duckdb_extensions import import_extension

    import_extension("tpch")
    con = duckdb.connect()
    try:
        con.execute("LOAD tpch")
        return str(
            con.execute(f"SELECT query FROM tpch_queries() WHERE query_nr={n}").fetchone()[0]
        )
    finally:
        con.close()


def read_csv(path: Path) -> list[dict[str, Any]]:
    with path.open(newline="") as f:
        return [
            {
                "src": r["src"],
                "dst": r["dst"],
                "rows": int(r["rows"]),
                "width": float(r["width"]),
                "ms": float(r["ms"]),
                "repeat": int(r.get("repeat") or 0),
            }
            for r in csv.DictReader(f)
        ]


def predict(model: dict[str, float], rows: float, width: float) -> float:
    return (
        model["fixed"]
        + model["per_row"] * rows
        + model["per_width"] * width
        + model["per_byte"] * rows * width
    )


def summary(errs: list[float]) -> dict[str, Any]:
    if not errs:
        return {"n": 0, "median": None, "p90": None}
    a = np.array(errs)
    return {
        "n": len(errs),
        "median": float(np.median(a)),
        "p90": float(np.percentile(a, 90)),
        "min": float(a.min()),
        "max": float(a.max()),
    }


def evaluate(profile: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    models = {(d["src"], d["dst"]): d["model"] for d in profile["directions"]}
    per: dict[str, list[float]] = {}
    per_signed: dict[str, list[float]] = {}
    unmodelled: dict[str, int] = {}
    points = []
    for r in rows:
        key = f"{r['src']}->{r['dst']}"
        m = models.get((r["src"], r["dst"]))
        if m is None:
            unmodelled[key] = unmodelled.get(key, 0) + 1
            continue
        t = predict(m, r["rows"], r["width"])
        e = abs(t - r["ms"]) / r["ms"] if r["ms"] > 0 else float("inf")
        per.setdefault(key, []).append(e)
        per_signed.setdefault(key, []).append((t - r["ms"]) / r["ms"])
        points.append({**r, "predicted_ms": round(t, 4), "rel_error": round(e, 5)})
    return {
        "directions": {
            k: {
                **summary(v),
                "median_signed": float(statistics.median(per_signed[k])),
                "rows_range": [
                    min(p["rows"] for p in points if f"{p['src']}->{p['dst']}" == k),
                    max(p["rows"] for p in points if f"{p['src']}->{p['dst']}" == k),
                ],
            }
            for k, v in sorted(per.items())
        },
        "by_rows": by_rows(points),
        "unmodelled": unmodelled,
        "points": points,
    }


ROW_BANDS = ((0, 100), (100, 5_000), (5_000, 40_001), (40_001, 10**12))


def by_rows(points: list[dict[str, Any]]) -> dict[str, Any]:
    """Per direction and band of R (calibrate measure's PostgreSQL grid is 1k-40k rows):
    n, median and p90 relative error, median signed error, median measured and predicted ms."""
    out: dict[str, Any] = {}
    for key in sorted({f"{p['src']}->{p['dst']}" for p in points}):
        for lo, hi in ROW_BANDS:
            q = [p for p in points if f"{p['src']}->{p['dst']}" == key and lo <= p["rows"] < hi]
            if not q:
                continue
            ms = np.array([p["ms"] for p in q])
            pr = np.array([p["predicted_ms"] for p in q])
            out.setdefault(key, {})[f"[{lo},{hi})"] = {
                **summary([p["rel_error"] for p in q]),
                "median_signed": float(np.median((pr - ms) / ms)),
                "measured_ms_median": float(np.median(ms)),
                "predicted_ms_median": float(np.median(pr)),
            }
    return out


def fit_lines(stderr: str) -> dict[str, Any]:
    out = {}
    for line in stderr.splitlines():
        m = FIT_LINE.match(line.strip())
        if m:
            out[f"{m['src']}->{m['dst']}"] = {
                "line": line.strip(),
                "held_out_median_error": None if m["ho"] is None else float(m["ho"]) / 100,
                "held_out_points": None if m["hon"] is None else int(m["hon"]),
            }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, required=True)
    ap.add_argument("--queries", default=",".join(map(str, QUERIES)))
    ap.add_argument("--measure-repeat", type=int, default=3)
    ap.add_argument("--execute-repeat", type=int, default=3)
    ap.add_argument("--query-timeout", type=float, default=240.0)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("-o", "--output", type=Path, default=None)
    a = ap.parse_args(argv)

    pg, tpch = os.environ.get("PLACEMENT_TEST_PG"), os.environ.get("PLACEMENT_TEST_TPCH")
    if not pg or not tpch:
        print(
            "PLACEMENT_TEST_PG and PLACEMENT_TEST_TPCH must be set (tests.servers)", file=sys.stderr
        )
        return 2
    started = dt.datetime.now(dt.UTC)
    load_start = loadavg()
    t_start = time.perf_counter()
    print(f"load average at start: {load_start}", flush=True)
    work = a.work or Path(tempfile.mkdtemp(prefix="handoff-heldout-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    sides = [Side("before", a.before, work, env), Side("after", a.after, work, env)]
    origin = {
        s.label: {"dir": str(s.dir), "commit": s.commit(), "placement_cli": s.which()}
        for s in sides
    }
    print(json.dumps(origin), flush=True)

    queries = [int(q) for q in a.queries.split(",") if q]
    sql = {}
    for q in queries:
        p = work / f"q{q}.sql"
        p.write_text(query_text(tpch, q))
        sql[q] = p

    result: dict[str, Any] = {s.label: {"queries": {}} for s in sides}
    # 1. measure, both sides
    for s in sides:
        rec = s.run(
            [
                "calibrate",
                "measure",
                "--pairs",
                PAIRS,
                "--db",
                tpch,
                "--pg",
                pg,
                "--repeat",
                str(a.measure_repeat),
                "-o",
                str(s.work / "m.csv"),
            ]
        )
        result[s.label]["measure"] = {"rc": rec["rc"], "seconds": rec["seconds"]}
    # 2. fit, both sides
    for s in sides:
        rec = s.run(["calibrate", "fit", str(s.work / "m.csv"), "-o", str(s.work / "profile.json")])
        r = result[s.label]
        r["fit"] = {
            "rc": rec["rc"],
            "stderr": rec["stderr"],
            "directions": fit_lines(rec["stderr"]),
        }
        if rec["rc"] == 0:
            prof = json.loads((s.work / "profile.json").read_text())
            r["profile"] = prof
            r["measure_points"] = read_csv(s.work / "m.csv")
    # 3. per query, both sides
    for q in queries:
        for s in sides:
            qr: dict[str, Any] = {}
            result[s.label]["queries"][f"q{q}"] = qr
            if "profile" not in result[s.label]:
                qr["status"] = "no profile"
                continue
            tree, h, rep = (
                s.work / f"q{q}.tree.json",
                s.work / f"q{q}.h.csv",
                s.work / f"q{q}.report.json",
            )
            t0 = time.perf_counter()
            rec = s.run(
                [
                    "import",
                    "sql",
                    str(sql[q]),
                    "--probe",
                    "--db",
                    tpch,
                    "--pg",
                    pg,
                    "--engines",
                    ENGINES,
                    "--repeat",
                    "1",
                    "--transfer",
                    str(s.work / "profile.json"),
                    "-o",
                    str(tree),
                ],
                timeout=a.query_timeout,
            )
            qr["import"] = {k: rec.get(k) for k in ("rc", "seconds", "timeout")}
            if rec["rc"] != 0:
                qr["status"] = "import timeout" if rec.get("timeout") else "import failed"
                qr["error"] = rec["stderr"][-1500:]
                continue
            left = a.query_timeout - (time.perf_counter() - t0)
            rec = s.run(
                [
                    "execute",
                    str(tree),
                    "--db",
                    tpch,
                    "--pg",
                    pg,
                    "--all",
                    "--budget",
                    "1",
                    "--repeat",
                    str(a.execute_repeat),
                    "--calibrate-out",
                    str(h),
                    "-o",
                    str(rep),
                ],
                timeout=max(left, 1.0),
            )
            qr["execute"] = {k: rec.get(k) for k in ("rc", "seconds", "timeout")}
            qr["execute_stderr_tail"] = rec["stderr"][-1500:]
            if rec.get("timeout") or not h.exists():
                qr["status"] = "execute timeout" if rec.get("timeout") else "execute failed"
                qr["error"] = rec["stderr"][-1500:]
                continue
            qr["status"] = (
                "ok" if rec["rc"] == 0 else f"execute rc={rec['rc']} (calibrate-out written)"
            )
            qr["handoffs"] = read_csv(h)
            try:
                report = json.loads(rep.read_text())
                pl = report["execute"]["placements"]
                qr["placements"] = {
                    "count": len(pl),
                    "status": {
                        st: sum(1 for x in pl if x.get("status") == st)
                        for st in sorted({str(x.get("status")) for x in pl})
                    },
                }
            except Exception as exc:  # noqa: BLE001 - informational only
                qr["placements"] = {"error": str(exc)}

    # 4. evaluate
    for s in sides:
        r = result[s.label]
        if "profile" not in r:
            continue
        rows = [
            {**h, "query": qn} for qn, qr in r["queries"].items() for h in qr.get("handoffs", [])
        ]
        ev = evaluate(r["profile"], rows)
        r["heldout"] = ev
        r["heldout_per_query"] = {
            qn: evaluate(r["profile"], qr.get("handoffs", []))["directions"]
            for qn, qr in r["queries"].items()
            if qr.get("handoffs")
        }
        # the model's own fit on measure's points (in-sample), for reference
        r["in_sample"] = evaluate(r["profile"], r["measure_points"])["directions"]

    load_end = loadavg()
    doc = {
        "what": "calibrate fit's transfer model (fitted on calibrate measure) evaluated on "
        "execute --calibrate-out's measured hand-offs; relative error |pred-meas|/meas per row",
        "date": started.date().isoformat(),
        "started": started.isoformat(timespec="seconds"),
        "wall_seconds": round(time.perf_counter() - t_start, 1),
        "load_average_start": load_start,
        "load_average_end": load_end,
        "work": str(work),
        "sides": origin,
        "settings": {
            "pairs": PAIRS,
            "measure_repeat": a.measure_repeat,
            "queries": queries,
            "engines": ENGINES,
            "probe_repeat": 1,
            "execute": f"--all --budget 1 --repeat {a.execute_repeat}",
            "query_timeout_s": a.query_timeout,
            "sf": 0.1,
        },
        "commands": {s.label: s.commands for s in sides},
        "results": result,
    }
    out = a.output or RESULTS / f"handoff-heldout_before-after_{started.date().isoformat()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, default=str))
    print(f"\nload average at end: {load_end}; wall {doc['wall_seconds']} s; written {out}")

    print(
        "\n| side | direction | n | median rel. err | p90 rel. err | median signed | fit held-out median (printed) |"
    )
    print("|---|---|---|---|---|---|---|")
    for s in sides:
        r = result[s.label]
        dirs = r.get("heldout", {}).get("directions", {})
        fitd = r.get("fit", {}).get("directions", {})
        for k in sorted(set(dirs) | set(fitd)):
            d = dirs.get(k, {"n": 0})
            f = fitd.get(k, {})
            ho = f.get("held_out_median_error")
            med = "-" if d.get("median") is None else f"{100 * d['median']:.1f}%"
            p90 = "-" if d.get("p90") is None else f"{100 * d['p90']:.1f}%"
            sg = "-" if d.get("median_signed") is None else f"{100 * d['median_signed']:+.1f}%"
            hos = "-" if ho is None else f"{100 * ho:.1f}%"
            print(f"| {s.label} | {k} | {d['n']} | {med} | {p90} | {sg} | {hos} |")
        if r.get("heldout", {}).get("unmodelled"):
            print(f"| {s.label} | (no model) | {r['heldout']['unmodelled']} | | | | |")
    for s in sides:
        for qn, qr in result[s.label]["queries"].items():
            if qr.get("status") != "ok":
                print(f"{s.label} {qn}: {qr.get('status')}: {qr.get('error', '')[-400:]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
