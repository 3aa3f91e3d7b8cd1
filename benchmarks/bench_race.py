"""The whole-process race: `placement solve PLAN --method exact -o OUT` against HiGHS and
toulbar2, each a process as a user runs it, on 85 plans of `benchmarks/families.py`.

    python -m benchmarks.bench_race [--rounds N] [--quick] [--name WHAT]   # make bench-race

`benchmarks/bench_exact.py` compares the solvers' search calls inside one process; here
each side pays what a user pays: the interpreter's start, its imports, reading its input,
building its model, solving, and (ours) writing the artifact.

* ours: the console script's lines (what pip writes as `placement`, bytecode compiled)
  running `solve PLAN.json --method exact --time-limit T -o OUT.json` on the plan as the
  families write it;
* HiGHS: `python benchmarks/race_reference.py highs MODEL.mps T`: highspy (with numpy,
  which it imports) reads the standard ILP of `bench_exact.highs_lp` from an MPS file
  and proves its optimum (`mip_rel_gap` 0);
* toulbar2: `python benchmarks/race_reference.py toulbar2 MODEL.cfn T`: pytoulbar2 reads
  the weighted CSP of `bench_exact.pair_model` from a CFN file and solves it with its
  default options. pytoulbar2 rather than a toulbar2 binary: its import is ~20 ms over
  the interpreter's (measured), not what dominates, and the wheel ships no binary.

The references read a model file made before the race (`write_cfn`, HiGHS's own MPS
writer) from the plan parsed and pruned by this project: their processes neither parse
the plan nor prune it nor build the pairwise tables, which favours them. The reference
processes import nothing of this project (`race_reference.py`).

The plans: `structured` and `structured_open` at 1,000, 2,000 and 3,000 blocks with 3
and 4 targets, seeds 0-4 (60); `dense_loop` at 100, 300 and 1,000 blocks with 3 and 4
targets, seeds 0-2 (18); `random` at 200 blocks, seeds 0-4 with the family's target
counts and seeds 0-1 with 5 targets (7): bench_exact's instances without its small
random plans (20 to 100 blocks) and its hard random cores (5 to 8 targets up to 2,000
blocks, where a search of seconds decides, not a process).

Every round runs the three processes on every plan, the first of each triple rotating
with the round and the plan, so a burst of load falls on all sides alike. Every optimum
is checked: ours proven and equal to HiGHS's and to toulbar2's (relative 1e-6), or all
three infeasible; any disagreement fails the run. Per plan: the median wall time of the
rounds with its spread, the median CPU time (user + system of the process; HiGHS's
imports run threads) and the median paired ratios ours/HiGHS and ours/toulbar2 (same
round). Per family and size: the median and the largest of those ratios, and overall.

Results: a table on stdout and JSON in `benchmarks/results/race_WHAT_DATE.json`.
"""

from __future__ import annotations

import argparse
import compileall
import datetime as dt
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from benchmarks.bench_exact import INF, _quiet, highs_lp, pair_model
from benchmarks.families import FAMILIES
from placement_cli.algorithms.prune import prune
from placement_cli.pipeline.run import parse_plan

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
REFERENCE = ROOT / "benchmarks" / "race_reference.py"
# What pip writes as the `placement` console script (less its shebang).
ENTRY = (
    "import sys\n"
    "from placement_cli.app.launch import main\n"
    "if __name__ == '__main__':\n"
    "    sys.exit(main())\n"
)
SIDES = ("ours", "highs", "tb2")

Instance = tuple[str, int, int | None, int]  # family, blocks, targets (None: the family's), seed


def instances(quick: bool = False) -> list[Instance]:
    """The race's plans, in the order they run (`--quick`: one of each family and size).

    >>> len(instances()), instances()[0], len(instances(quick=True))
    (85, ('structured', 1000, 3, 0), 10)
    """
    out: list[Instance] = []
    for fam in ("structured", "structured_open"):
        out += [(fam, n, k, s) for n in (1000, 2000, 3000) for k in (3, 4) for s in range(5)]
    out += [("dense_loop", n, k, s) for n in (100, 300, 1000) for k in (3, 4) for s in range(3)]
    out += [("random", 200, None, s) for s in range(5)]
    out += [("random", 200, 5, s) for s in range(2)]
    if quick:
        seen: set[tuple[str, int]] = set()
        out = [i for i in out if (i[0], i[1]) not in seen and not seen.add((i[0], i[1]))]
    return out


def write_cfn(model: Any, path: Path) -> None:
    """The weighted CSP of a `pair_model` as a CFN file (toulbar2's JSON format): a
    variable per live block, a unary function per block, a binary one per neighbouring
    pair; a forbidden value or pair costs the upper bound (`mustbe`), one more than the
    sum of every function's largest finite cost. (pytoulbar2's own `Dump` writes a bound
    that its `Read` refuses as a cost overflow.)

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "m.cfn"
    >>> write_cfn(([0, 1], {0: [0, 1], 1: [0]}, {0: [2.0, 1.0], 1: [0.0]},
    ...            {(0, 1): [0.0, INF]}), p)
    >>> doc = orjson.loads(p.read_bytes())
    >>> doc["problem"]["mustbe"], doc["functions"]["p0_1"]["costs"]
    ('<3', [0, 3])
    """
    live, vals, unary, pairs = model
    finite = [c for b in live for c in unary[b] if c != INF]
    finite += [c for tab in pairs.values() for c in tab if c != INF]
    integral = all(c == int(c) for c in finite)
    top = 1 + sum(max((c for c in unary[b] if c != INF), default=0) for b in live)
    top += sum(max((c for c in tab if c != INF), default=0) for tab in pairs.values())

    # CFN reads the precision of every cost from the bound's decimals.
    def cost(c: float) -> float | int:
        c = top if c == INF else c
        return int(c) if integral else round(c, 6)

    variables: dict[str, list[str]] = {}
    functions: dict[str, dict[str, Any]] = {}
    for b in live:
        variables[f"x{b}"] = [f"v{t}" for t in vals[b]] or ["none"]
        costs = [cost(c) for c in unary[b]] or [cost(INF)]
        functions[f"u{b}"] = {"scope": [f"x{b}"], "costs": costs}
    for (a, b), tab in pairs.items():
        if tab:
            functions[f"p{a}_{b}"] = {"scope": [f"x{a}", f"x{b}"], "costs": [cost(c) for c in tab]}
    bound = str(int(top)) if integral else f"{top:.6f}"
    doc = {"problem": {"name": path.stem, "mustbe": "<" + bound}, "variables": variables}
    doc["functions"] = functions
    path.write_bytes(orjson.dumps(doc))


def write_mps(model: Any, path: Path) -> None:
    """The standard ILP of a `pair_model` (`bench_exact.highs_lp`), written by HiGHS."""
    import highspy

    lp, _, _ = highs_lp(model)
    with _quiet():
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.passModel(lp)
        h.writeModel(str(path))


def prepare(inst: Instance, where: Path) -> dict[str, Any]:
    """The plan's JSON, its MPS and CFN models in `where`; their paths and sizes."""
    fam, n, k, seed = inst
    gen = FAMILIES[fam]
    plan = gen(n, seed) if k is None else gen(n, seed, k)
    name = f"{fam}-{n}-{k or 'f'}-{seed}"
    paths = {
        s: where / f"{name}.{ext}" for s, ext in zip(SIDES, ("json", "mps", "cfn"), strict=True)
    }
    paths["ours"].write_bytes(orjson.dumps(plan))
    g = parse_plan(plan)
    model = pair_model(g, prune(g).domains)
    write_mps(model, paths["highs"])
    write_cfn(model, paths["tb2"])
    return {
        "name": name,
        "family": fam,
        "size": n,
        "targets": g.n_targets,
        "seed": seed,
        "blocks": g.n_blocks,
        "paths": paths,
    }


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's installation has its bytecode
    env.pop("PYTHONPATH", None)
    return env


def _once(
    argv: list[str], env: dict[str, str], ok: tuple[int, ...] = (0,)
) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stdout) of one process that must exit with a code of `ok`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(argv, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if r.returncode not in ok:
        raise SystemExit(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr[-800:]}")
    return wall, cpu, r.stdout


def _ours_answer(out: Path) -> str:
    doc = orjson.loads(out.read_bytes())
    s = doc["solve"]
    if s["status"] == "infeasible":
        return "infeasible"
    if not s["optimal"]:
        return "unproven"
    return f"optimal {float(s['cost']['total'])!r}"


def _agree(a: str, b: str) -> bool:
    if a.startswith("optimal ") and b.startswith("optimal "):
        x, y = float(a.split()[1]), float(b.split()[1])
        return abs(x - y) <= 1e-6 * max(1.0, abs(x))
    return a == b and a != "unproven"


def _spread(values: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(statistics.median(values) * 1000, 2),
        "min_ms": round(min(values) * 1000, 2),
        "max_ms": round(max(values) * 1000, 2),
    }


def _geomean(xs: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(x) for x in xs))


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per family and size, then overall: the median and largest of the plans' median
    paired ratios (wall and CPU), and the ratio of the summed wall medians."""
    groups: dict[tuple[str, int | str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["family"], r["size"]), []).append(r)
    groups[("all", "all")] = rows
    out = []
    for (fam, size), rs in groups.items():
        s: dict[str, Any] = {"family": fam, "size": size, "plans": len(rs)}
        for ref in ("highs", "tb2"):
            wall = [r["ratio_wall"][ref] for r in rs]
            cpu = [r["ratio_cpu"][ref] for r in rs]
            s[f"ours_over_{ref}"] = {
                "wall_median": round(statistics.median(wall), 3),
                "wall_max": round(max(wall), 3),
                "wall_geomean": round(_geomean(wall), 3),
                "cpu_median": round(statistics.median(cpu), 3),
                "cpu_max": round(max(cpu), 3),
                "sum_of_wall_medians": round(
                    sum(r["wall"]["ours"]["median_ms"] for r in rs)
                    / sum(r["wall"][ref]["median_ms"] for r in rs),
                    3,
                ),
            }
        for side in SIDES:
            s[f"{side}_wall_median_ms"] = round(
                statistics.median(r["wall"][side]["median_ms"] for r in rs), 1
            )
        out.append(s)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rounds", type=int, default=7, help="rounds (every plan, every side)")
    ap.add_argument("--quick", action="store_true", help="one plan per family and size")
    ap.add_argument("--time-limit", type=float, default=60.0, help="per process (s)")
    ap.add_argument("--name", default=None, help="what the results file is named after")
    a = ap.parse_args(argv)
    compileall.compile_dir(str(ROOT / "placement_cli"), quiet=1)
    env = _env()
    limit = f"{a.time_limit:g}"
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        entry = tmp / "placement"
        entry.write_text(ENTRY)
        compileall.compile_file(str(entry), quiet=1)
        plans = [prepare(inst, tmp) for inst in instances(a.quick)]
        print(f"{len(plans)} plans written", file=sys.stderr, flush=True)
        walls = {p["name"]: {s: [] for s in SIDES} for p in plans}
        cpus = {p["name"]: {s: [] for s in SIDES} for p in plans}
        ratios = {
            p["name"]: {"wall": {"highs": [], "tb2": []}, "cpu": {"highs": [], "tb2": []}}
            for p in plans
        }
        answers: dict[str, dict[str, str]] = {p["name"]: {} for p in plans}
        bad: list[str] = []
        for k in range(a.rounds):
            for i, p in enumerate(plans):
                out = tmp / f"{p['name']}.out.json"
                argv = {
                    "ours": [
                        sys.executable,
                        str(entry),
                        "solve",
                        str(p["paths"]["ours"]),
                        "--method",
                        "exact",
                        "--time-limit",
                        limit,
                        "-o",
                        str(out),
                    ],
                    "highs": [
                        sys.executable,
                        str(REFERENCE),
                        "highs",
                        str(p["paths"]["highs"]),
                        limit,
                    ],
                    "tb2": [
                        sys.executable,
                        str(REFERENCE),
                        "toulbar2",
                        str(p["paths"]["tb2"]),
                        limit,
                    ],
                }
                turn = (k + i) % 3
                got: dict[str, tuple[float, float]] = {}
                for side in SIDES[turn:] + SIDES[:turn]:
                    # `solve` exits 4 on a plan it proves infeasible (the artifact says so).
                    wall, cpu, printed = _once(argv[side], env, (0, 4) if side == "ours" else (0,))
                    answer = _ours_answer(out) if side == "ours" else printed.strip()
                    if answers[p["name"]].setdefault(side, answer) != answer:
                        bad.append(
                            f"{p['name']}: {side} answered {answer} after {answers[p['name']][side]}"
                        )
                    got[side] = (wall, cpu)
                    walls[p["name"]][side].append(wall)
                    cpus[p["name"]][side].append(cpu)
                for ref in ("highs", "tb2"):
                    ratios[p["name"]]["wall"][ref].append(got["ours"][0] / got[ref][0])
                    ratios[p["name"]]["cpu"][ref].append(got["ours"][1] / max(got[ref][1], 1e-4))
            print(f"round {k + 1}/{a.rounds}", file=sys.stderr, flush=True)
    rows = []
    for p in plans:
        ans = answers[p["name"]]
        for ref in ("highs", "tb2"):
            if not _agree(ans["ours"], ans[ref]):
                bad.append(f"{p['name']}: ours {ans['ours']}, {ref} {ans[ref]}")
        rows.append(
            {
                **{k: v for k, v in p.items() if k != "paths"},
                "answers": ans,
                "wall": {s: _spread(walls[p["name"]][s]) for s in SIDES},
                "cpu": {s: _spread(cpus[p["name"]][s]) for s in SIDES},
                "ratio_wall": {
                    r: round(statistics.median(v), 3) for r, v in ratios[p["name"]]["wall"].items()
                },
                "ratio_cpu": {
                    r: round(statistics.median(v), 3) for r, v in ratios[p["name"]]["cpu"].items()
                },
            }
        )
    summary = summarise(rows)
    print(
        f"{'family':<16} {'size':>5} {'n':>3} {'ours ms':>8} {'highs ms':>9} {'tb2 ms':>7}"
        f"  {'ours/highs med (max)':>21} {'ours/tb2 med (max)':>19}  cpu o/h  cpu o/t"
    )
    for s in summary:
        h, t = s["ours_over_highs"], s["ours_over_tb2"]
        print(
            f"{s['family']:<16} {s['size']!s:>5} {s['plans']:>3} {s['ours_wall_median_ms']:>8.1f}"
            f" {s['highs_wall_median_ms']:>9.1f} {s['tb2_wall_median_ms']:>7.1f}"
            f"  {h['wall_median']:>12.2f} ({h['wall_max']:.2f}) {t['wall_median']:>11.2f} ({t['wall_max']:.2f})"
            f"  {h['cpu_median']:>7.2f}  {t['cpu_median']:>7.2f}"
        )
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
    today = dt.date.today().isoformat()
    name = a.name or ("exact-vs-highs-toulbar2-quick" if a.quick else "exact-vs-highs-toulbar2")
    path = RESULTS / f"race_{name}_{today}.json"
    rev = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    doc = {
        "command": "python -m benchmarks.bench_race " + " ".join(argv or sys.argv[1:]),
        "date": today,
        "head": rev,
        "rounds": a.rounds,
        "time_limit_s": a.time_limit,
        "load_average": [round(x, 2) for x in load],
        "cpus": os.cpu_count(),
        "disagreements": bad,
        "summary": summary,
        "plans": rows,
    }
    RESULTS.mkdir(exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"results in {path.relative_to(ROOT)}")
    if bad:
        raise SystemExit("the solvers disagree:\n" + "\n".join(bad))


if __name__ == "__main__":
    main()
