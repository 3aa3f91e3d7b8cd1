"""Start-up: whole `placement` processes of this checkout against a base checkout,
interleaved round by round, as a user's installation runs them.

    python -m benchmarks.bench_startup --base DIR [--rounds N] [--quick] [--name WHAT]

`make bench-startup BASE=REV` makes the base checkout (`git worktree add`) and removes
it after. Each side runs the console script's own lines (`from
placement_cli.app.launch import main; main()`, written to a file as pip writes it)
with its checkout first on `PYTHONPATH`, this checkout's interpreter and packages,
bytecode compiled first (a user's installation has it), and no `-m` (runpy's imports
are not a user's).

Rows: `python -c pass` (the interpreter's own start, the floor), `placement --version`,
`placement --help`, `solve` on the 7-block example plan as JSON and as YAML, `solve
--method exact` on a 150-block plan (`families.structured_open(150, seed=0)`, solved
to a proven optimum), and on the 10k-block plan (`generate_plan(10000, 3, seed=11)`)
the five-stage shell pipe against `run` (`--quick`: without these two). Each round runs
every row on both sides, the first of each pair alternating, so a burst of load falls on
both. Per row and side: the median wall time of the rounds and its spread (lowest,
highest); the median of the rounds' paired ratios (this checkout over the base, same
round); the median CPU time (user + system of the process tree, the steadier figure
on a shared machine); and the pipe over `run` per side. Outputs must be byte-identical between the
sides, exit codes equal.

Results: a table on stdout and JSON in `benchmarks/results/startup_WHAT_DATE.json`.
"""

from __future__ import annotations

import argparse
import compileall
import datetime as dt
import json
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
import yaml

from benchmarks.families import structured_open
from benchmarks.generate import generate_plan

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
STAGES = ("prune", "scc", "solve", "fuse", "islands")
# What pip writes as the `placement` console script (less its shebang).
ENTRY = (
    "import sys\n"
    "from placement_cli.app.launch import main\n"
    "if __name__ == '__main__':\n"
    "    sys.exit(main())\n"
)
SLOWER = 1.10  # a row whose median paired ratio exceeds this is marked


def _env(side: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPATH", None)
    if side is not None:
        env["PYTHONPATH"] = str(side)
    return env


def _once(cmd: str, cwd: Path, side: Path | None) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds of the process tree, stdout) of a shell command line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(
        ["bash", "-o", "pipefail", "-c", cmd], cwd=cwd, env=_env(side), capture_output=True
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if r.returncode != 0:
        raise SystemExit(f"{side}: {cmd}: exit {r.returncode}: {r.stderr.decode()[-800:]}")
    return wall, cpu, r.stdout


def _rows(tmp: Path, quick: bool) -> list[tuple[str, str]]:
    """(row name, shell command with {pl} for the tool and {out} for an output folder)."""
    small = yaml.safe_load((ROOT / "examples" / "three_targets.yaml").read_text())
    (tmp / "plan7.json").write_bytes(orjson.dumps(small))
    (tmp / "plan150.json").write_bytes(orjson.dumps(structured_open(150, 0)))
    rows = [
        ("--version", "{pl} --version"),
        ("--help", "{pl} --help"),
        ("solve 7 blocks (JSON)", f"{{pl}} solve {tmp}/plan7.json -o {{out}}/s7.json"),
        (
            "solve 7 blocks (YAML)",
            f"{{pl}} solve {ROOT}/examples/three_targets.yaml -o {{out}}/s7y.json",
        ),
        (
            "solve 150 blocks, exact",
            f"{{pl}} solve {tmp}/plan150.json --method exact -o {{out}}/s150.json",
        ),
    ]
    if not quick:
        (tmp / "plan10k.json").write_bytes(orjson.dumps(generate_plan(10_000, 3, seed=11)))
        plan = f"{tmp}/plan10k.json"
        pipe = " | ".join([f"{{pl}} prune {plan}"] + [f"{{pl}} {s} -" for s in STAGES[1:]])
        rows.append(("pipe 10k (5 processes)", pipe + " > {out}/pipe10k.json"))
        rows.append(("run 10k", f"{{pl}} run {plan} --out-dir {{out}}/run10k -q"))
    return rows


def _spread(values: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(statistics.median(values) * 1000, 1),
        "min_ms": round(min(values) * 1000, 1),
        "max_ms": round(max(values) * 1000, 1),
    }


def _rev(where: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(where), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--base", type=Path, required=True, help="a checkout to compare against")
    ap.add_argument("--rounds", type=int, default=15, help="rounds (each row, both sides)")
    ap.add_argument("--quick", action="store_true", help="without the 10k pipe and run")
    ap.add_argument("--name", default=None, help="what the results file is named after")
    a = ap.parse_args(argv)
    sides = {"base": a.base.resolve(), "head": ROOT}
    for where in sides.values():
        if not (where / "placement_cli" / "app" / "launch.py").is_file():
            raise SystemExit(f"{where}: not a checkout of placement")
        compileall.compile_dir(str(where / "placement_cli"), quiet=1)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        entry = tmp / "placement"
        entry.write_text(ENTRY)
        compileall.compile_file(str(entry), quiet=1)
        pl = f"{sys.executable} {entry}"
        outs = {side: tmp / side for side in sides}
        for out in outs.values():
            out.mkdir()
        rows = _rows(tmp, a.quick)
        floor: list[float] = []
        floor_cpu: list[float] = []
        times: dict[str, dict[str, list[float]]] = {n: {s: [] for s in sides} for n, _ in rows}
        cpus: dict[str, dict[str, list[float]]] = {n: {s: [] for s in sides} for n, _ in rows}
        ratios: dict[str, list[float]] = {n: [] for n, _ in rows}
        for k in range(a.rounds):
            wall, cpu, _ = _once(f"{sys.executable} -c pass", tmp, None)
            floor.append(wall)
            floor_cpu.append(cpu)
            for name, cmd in rows:
                order = list(sides.items())
                got: dict[str, tuple[float, bytes]] = {}
                for side, where in order if k % 2 == 0 else order[::-1]:
                    wall, cpu, printed = _once(cmd.format(pl=pl, out=outs[side]), tmp, where)
                    got[side] = (wall, printed)
                    times[name][side].append(wall)
                    cpus[name][side].append(cpu)
                if got["base"][1] != got["head"][1]:
                    raise SystemExit(f"{name}: the two sides print different bytes")
                ratios[name].append(got["head"][0] / got["base"][0])
            print(f"round {k + 1}/{a.rounds}", file=sys.stderr, flush=True)
        for written in outs["head"].rglob("*.json"):
            other = outs["base"] / written.relative_to(outs["head"])
            if written.read_bytes() != other.read_bytes():
                raise SystemExit(f"{written.name}: the two sides wrote different bytes")
    result_rows: list[dict[str, Any]] = []
    print(f"python -c pass: wall {_spread(floor)}, cpu {_spread(floor_cpu)}")
    print(
        f"{'command':<26} {'base median':>11} {'(spread)':>15} {'head median':>11} {'(spread)':>15} {'ratio':>6}"
    )
    for name, _ in rows:
        b, h = _spread(times[name]["base"]), _spread(times[name]["head"])
        paired = round(statistics.median(ratios[name]), 3)
        cpu_ms = {side: _spread(cpus[name][side]) for side in sides}
        result_rows.append(
            {"command": name, "base": b, "head": h, "ratio_median_paired": paired, "cpu": cpu_ms}
        )
        mark = "  SLOWER" if paired > SLOWER else ""
        print(
            f"{name:<26} {b['median_ms']:>9.1f}ms {b['min_ms']:>6.1f}-{b['max_ms']:<7.1f} "
            f"{h['median_ms']:>9.1f}ms {h['min_ms']:>6.1f}-{h['max_ms']:<7.1f} {paired:>6.2f}"
            f"  cpu {cpu_ms['base']['median_ms']:.1f} / {cpu_ms['head']['median_ms']:.1f} ms{mark}"
        )
    pipe_over_run = {}
    if not a.quick:
        for side in sides:
            pipe = statistics.median(times["pipe 10k (5 processes)"][side])
            run = statistics.median(times["run 10k"][side])
            pipe_over_run[side] = round(pipe / run, 2)
        print(f"pipe / run on 10k (medians): {pipe_over_run}")
    load = os.getloadavg()[0]
    print(f"load average {load:.1f} on {os.cpu_count()} cores")
    today = dt.date.today().isoformat()
    name = a.name or ("version-help-solve" if a.quick else "version-help-solve-pipe")
    path = RESULTS / f"startup_{name}_{today}.json"
    doc = {
        "command": "python -m benchmarks.bench_startup " + " ".join(argv or sys.argv[1:]),
        "date": today,
        "base": _rev(sides["base"]),
        "head": _rev(ROOT),
        "rounds": a.rounds,
        "python_c_pass": _spread(floor),
        "python_c_pass_cpu": _spread(floor_cpu),
        "load_average_1m": round(load, 2),
        "cpus": os.cpu_count(),
        "rows": result_rows,
        "pipe_over_run_10k": pipe_over_run,
    }
    RESULTS.mkdir(exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"results in {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
