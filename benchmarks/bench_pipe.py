"""The pipe as users run it: whole processes on generated plans with an explicit
transition matrix on every edge.

    python -m benchmarks.bench_pipe [--quick] [--large] [--size BLOCKS] [--repeat N]

For each size (300 and 10k blocks; 100k with --large) it measures, as separate
processes: `validate`, every stage reading the plan, every stage reading the previous
stage's artifact (what a pipe does), the five-stage shell pipe, and `run`; plus the size
of every artifact against its input. Times are the best of --repeat runs, as wall time
and as CPU time (user + sys of the processes): on a shared machine the CPU time is the
steadier number. Bytecode is compiled once first (a user's installation has it).

Goals: pipe within 1.5x of `run`; every artifact at most 2x its input;
`solve` under 1.5 s on 10k blocks and under 0.25 s on 300; on 100k blocks `validate`
under 2 s, `solve` under 6 s, the pipe under 20 s.
"""

from __future__ import annotations

import argparse
import compileall
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

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
STAGES = ("prune", "scc", "solve", "fuse", "islands")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _timed(cmd: list[str], cwd: Path, repeat: int, ok: tuple[int, ...] = (0,)) -> dict[str, float]:
    best_wall = best_cpu = float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        r = subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if r.returncode not in ok:
            raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.decode()[:500]}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
    return {"wall_s": round(best_wall, 3), "cpu_s": round(best_cpu, 3)}


def bench_size(n: int, tmp: Path, repeat: int) -> dict[str, object]:
    py = sys.executable
    plan = tmp / f"plan{n}.json"
    plan.write_bytes(orjson.dumps(generate_plan(n, 3, seed=11)))
    size_in = plan.stat().st_size
    pl = [py, "-m", "placement_cli"]
    row: dict[str, object] = {"blocks": n, "plan_mb": round(size_in / 1e6, 3)}
    row["validate"] = _timed([*pl, "validate", str(plan)], tmp, repeat)
    from_plan = {}
    from_prev = {}
    sizes = {}
    prev = plan
    for stage in STAGES:
        out = tmp / f"{stage}{n}.json"
        from_plan[stage] = _timed([*pl, stage, str(plan), "-o", str(out)], tmp, repeat)
        from_prev[stage] = _timed([*pl, stage, str(prev), "-o", str(out)], tmp, repeat)
        sizes[stage] = round(out.stat().st_size / size_in, 2)
        prev = out
    row["stage_from_plan"] = from_plan
    row["stage_from_previous_artifact"] = from_prev
    row["artifact_size_ratio"] = sizes
    pipe = " | ".join(
        [f"{py} -m placement_cli prune {plan}"]
        + [f"{py} -m placement_cli {s} -" for s in STAGES[1:]]
    )
    row["pipe"] = _timed(["bash", "-o", "pipefail", "-c", pipe + " > /dev/null"], tmp, repeat)
    row["run"] = _timed([*pl, "run", str(plan), "--out-dir", str(tmp / f"out{n}")], tmp, repeat)
    pw, rw = row["pipe"], row["run"]  # type: ignore[index]
    row["pipe_over_run_wall"] = round(pw["wall_s"] / rw["wall_s"], 2)  # type: ignore[index]
    row["pipe_over_run_cpu"] = round(pw["cpu_s"] / rw["cpu_s"], 2)  # type: ignore[index]
    return row


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="only the 300-block plan")
    ap.add_argument("--large", action="store_true", help="also 100k blocks (several minutes)")
    ap.add_argument(
        "--repeat", type=int, default=3, help="runs per measurement (best is kept; 1 at 100k)"
    )
    ap.add_argument(
        "--size",
        type=int,
        action="append",
        metavar="BLOCKS",
        help="only these plan sizes (repeatable): one size at a time keeps a run short",
    )
    a = ap.parse_args(argv)
    compileall.compile_dir(str(ROOT / "placement_cli"), quiet=1)
    sizes = [300] if a.quick else [300, 10_000]
    if a.large:
        sizes.append(100_000)
    if a.size:
        sizes = a.size
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for n in sizes:
            row = bench_size(n, Path(d), 1 if n >= 100_000 else a.repeat)
            rows.append(row)
            _print(row)
    load = os.getloadavg()[0]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "pipe.json").write_text(
        json.dumps({"load_average_1m": round(load, 2), "rows": rows}, indent=2) + "\n"
    )
    print(
        f"(load average {load:.1f} on {os.cpu_count()} cores; results in benchmarks/results/pipe.json)"
    )


def _print(row: dict[str, object]) -> None:
    def t(x: object) -> str:
        d = x  # type: ignore[assignment]
        return f"{d['wall_s']:.2f}s wall / {d['cpu_s']:.2f}s cpu"  # type: ignore[index]

    print(f"-- {row['blocks']} blocks, plan {row['plan_mb']} MB")
    print(f"   validate            {t(row['validate'])}")
    fp, fa, sz = (
        row["stage_from_plan"],
        row["stage_from_previous_artifact"],
        row["artifact_size_ratio"],
    )
    for s in STAGES:
        print(
            f"   {s:<8} from plan {t(fp[s])}; from previous artifact {t(fa[s])}; size {sz[s]}x input"
        )  # type: ignore[index]
    print(f"   pipe (5 processes)  {t(row['pipe'])}")
    print(f"   run                 {t(row['run'])}")
    print(
        f"   pipe / run          {row['pipe_over_run_wall']}x wall, {row['pipe_over_run_cpu']}x cpu",
        flush=True,
    )


if __name__ == "__main__":
    main()
