"""Two checkouts of the tool against each other: the same commands on the same inputs
as whole processes, the base and this checkout alternating run by run.

    python -m benchmarks.compare --base DIR [--repeat N] [--quick] [--only NAME ...]

`DIR` is a checkout of the code to compare against (`make bench-compare BASE=REV`
makes one with `git worktree add`). Both run under this checkout's interpreter and
packages, from their own folders (`python -m placement_cli` imports the package from
the folder it runs in), with bytecode compiled first as a user's installation has it.

Each row is one command a user runs: `validate`, every stage on the plan and on the
previous stage's artifact, the five-stage shell pipe and `run` on generated plans of
300, 10k and 100k blocks and on a foreign plan of 100k blocks (a distinct matrix on
every edge); `tree` on a 100k-node operator tree and on an explicit-transfer tree; and
`lower` on a 20k-statement body and on its MIR text. Each round runs both sides back to
back, the first of the pair alternating (base first, then this checkout first, ...), so
a burst of load on a shared machine falls on both and neither always runs second. CPU
seconds (user + system of the process tree: the steadier number on a shared machine)
and wall seconds; per row, the best of `--repeat` rounds for each side, and the median
of the rounds' own ratios (this checkout's CPU over the base's in the same round). A
row is marked `SLOWER` when that median ratio exceeds 1.10: on this 2-core virtual
machine the best of 9 rounds of a 0.1 s process still moved by 15% from one run to
the next (measured 2026-11-28), while a round's pair, run seconds apart, drifts
together. A command's exit code must be the same for both.

Results: a table on stdout, and JSON in `benchmarks/results/compare_DATE.json`.
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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from benchmarks.bench_lower import generate as generate_body
from benchmarks.bench_tree import binary_explicit
from benchmarks.bench_tree import generate as generate_tree
from benchmarks.generate import generate_plan
from benchmarks.mir_print import print_mir

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
STAGES = ("prune", "scc", "solve", "fuse", "islands")
SLOWER = 1.10  # a row whose median paired CPU ratio exceeds this is marked


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPATH", None)
    return env


def _once(cmd: str, cwd: Path) -> tuple[float, float, int]:
    """(wall, cpu, exit code) of a shell command line run in `cwd`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(
        ["bash", "-o", "pipefail", "-c", cmd], cwd=cwd, env=_env(), capture_output=True
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if r.returncode not in (0, 4, 5):
        raise SystemExit(f"{cwd}: {cmd}: exit {r.returncode}: {r.stderr.decode()[-800:]}")
    return wall, cpu, r.returncode


def _inputs(tmp: Path, quick: bool) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """(group, [(row name, command with {pl} for the tool and {out} for an output
    folder)]) per input, the input written into `tmp`."""
    sizes = [300, 10_000] if quick else [300, 10_000, 100_000]
    plans = [(f"plan {n}", generate_plan(n, 3, seed=11)) for n in sizes]
    if not quick:
        plans.append(("foreign 100000", generate_plan(100_000, 3, seed=11, distinct=True)))
    for name, plan in plans:
        path = tmp / (name.replace(" ", "_") + ".json")
        path.write_bytes(orjson.dumps(plan))
        rows = [("validate", f"{{pl}} validate {path}")]
        prev = str(path)
        for s in STAGES:
            rows.append((f"{s} from plan", f"{{pl}} {s} {path} -o {{out}}/{s}.json"))
            if prev != str(path):  # the first stage's input is the plan itself
                rows.append((f"{s} from artifact", f"{{pl}} {s} {prev} -o {{out}}/{s}-next.json"))
            prev = f"{{out}}/{s}.json"
        pipe = " | ".join([f"{{pl}} prune {path}"] + [f"{{pl}} {s} -" for s in STAGES[1:]])
        rows.append(("pipe (5 processes)", pipe + " > /dev/null"))
        rows.append(("run", f"{{pl}} run {path} --out-dir {{out}}/run"))
        yield name, rows
    n = 10_000 if quick else 100_000
    for name, spec in (
        (f"tree {n}", generate_tree(n, 8, 7, "plan")),
        (f"tree explicit {n // 10}", binary_explicit(n // 10, 8, 7)),
    ):
        path = tmp / (name.replace(" ", "_") + ".json")
        path.write_bytes(orjson.dumps(spec))
        yield name, [("tree --budget 64", f"{{pl}} tree {path} --budget 64 -o {{out}}/tree.json")]
    stmts = 2_000 if quick else 20_000
    body = generate_body(stmts)
    bpath = tmp / f"body{stmts}.json"
    bpath.write_bytes(orjson.dumps(body))
    mpath = tmp / f"body{stmts}.mir"
    mpath.write_text(print_mir(body))
    yield (
        f"lower {stmts} statements",
        [
            ("lower body", f"{{pl}} lower {bpath} -o {{out}}/lowered.json"),
            ("lower MIR text", f"{{pl}} lower {mpath} --size-cap 64 -o {{out}}/lowered-mir.json"),
        ],
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--base", type=Path, required=True, help="a checkout to compare against")
    ap.add_argument("--repeat", type=int, default=3, help="rounds per row")
    ap.add_argument("--quick", action="store_true", help="small inputs only")
    ap.add_argument("--only", action="append", help="only input groups starting so")
    a = ap.parse_args(argv)
    sides = {"base": a.base.resolve(), "head": ROOT}
    for where in sides.values():
        if not (where / "placement_cli" / "__main__.py").is_file():
            raise SystemExit(f"{where}: not a checkout of placement")
        compileall.compile_dir(str(where / "placement_cli"), quiet=1)
    pl = f"{sys.executable} -m placement_cli"
    rows: list[dict[str, Any]] = []
    print(
        f"{'input':<24} {'command':<22} {'base cpu':>9} {'head cpu':>9} {'ratio':>6} "
        f"{'median':>7}  {'base wall':>9} {'head wall':>9}"
    )
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        outs = {side: tmp / side for side in sides}
        for out in outs.values():
            out.mkdir()
        for group, cmds in _inputs(tmp, a.quick):
            if a.only and not any(group.startswith(o) for o in a.only):
                continue
            for name, cmd in cmds:
                best = {side: (float("inf"), float("inf")) for side in sides}
                codes = {}
                ratios = []
                for k in range(a.repeat):
                    order = list(sides.items())
                    cpus = {}
                    for side, where in order if k % 2 == 0 else order[::-1]:
                        wall, cpu, code = _once(cmd.format(pl=pl, out=outs[side]), where)
                        codes[side] = code
                        cpus[side] = cpu
                        b = best[side]
                        best[side] = (min(b[0], cpu), min(b[1], wall))
                    ratios.append(cpus["head"] / cpus["base"])
                if codes["base"] != codes["head"]:
                    raise SystemExit(f"{group}: {name}: exit {codes['base']} vs {codes['head']}")
                ratio = best["head"][0] / best["base"][0]
                paired = statistics.median(ratios)
                row = {
                    "input": group,
                    "command": name,
                    "base_cpu_s": round(best["base"][0], 3),
                    "head_cpu_s": round(best["head"][0], 3),
                    "cpu_ratio": round(ratio, 3),
                    "cpu_ratio_median_paired": round(paired, 3),
                    "base_wall_s": round(best["base"][1], 3),
                    "head_wall_s": round(best["head"][1], 3),
                }
                rows.append(row)
                mark = "  SLOWER" if paired > SLOWER else ""
                print(
                    f"{group:<24} {name:<22} {row['base_cpu_s']:>9.3f} {row['head_cpu_s']:>9.3f} "
                    f"{ratio:>6.2f} {paired:>7.2f}  {row['base_wall_s']:>9.3f} "
                    f"{row['head_wall_s']:>9.3f}{mark}",
                    flush=True,
                )
    load = os.getloadavg()[0]
    slower = [r for r in rows if r["cpu_ratio_median_paired"] > SLOWER]
    print(
        f"{len(slower)} of {len(rows)} rows slower by more than {SLOWER - 1:.0%} "
        f"(load average {load:.1f} on {os.cpu_count()} cores)"
    )
    today = dt.date.today().isoformat()
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"compare_{today}.json"
    base_rev = subprocess.run(
        ["git", "-C", str(sides["base"]), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    head_rev = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    doc = {
        "command": "python -m benchmarks.compare " + " ".join(argv or sys.argv[1:]),
        "date": today,
        "base": base_rev,
        "head": head_rev,
        "repeat": a.repeat,
        "load_average_1m": round(load, 2),
        "cpus": os.cpu_count(),
        "rows": rows,
    }
    path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"results in {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
