"""Benchmark of `placement lower`: seeded MIR bodies of 1k, 10k and 100k statements.

    .venv/bin/python -m benchmarks.bench_lower            # 1k, 10k, 100k statements
    .venv/bin/python -m benchmarks.bench_lower --quick    # 1k and 10k only

Bodies are shaped like graph-read filters: a chain of segments, each a diamond of four
blocks (a test block, two arms, a join with a parameter) of five statements each; a
segment reads a vertex path or an environment field, does arithmetic on the value
carried from the previous segment, calls a closure one time in five (interpreter only,
so splitting cuts there), compares, and branches; one segment in eight loops back
(postgres is banned on those edges). About 100k statements make 20k blocks.

Every measurement is a whole process, as users run them: `lower` alone (read, check,
analyse, split, write the plan JSON), `run` on the body file (lower, then prune, scc,
solve, fuse, islands, writing five artifacts), and `lower` on the same program printed
as the compiler's MIR text (`benchmarks/mir_print.py`; `--size-cap` given, which MIR
text cannot carry), with the ratio MIR / body file of the CPU seconds (goal: at most
1.30, the MIR reader adding at most 30%). Best of `--repeat` runs, wall clock and CPU
(user + system) seconds of the process.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.mir_print import print_mir

RESULTS = Path(__file__).resolve().parent / "results" / "lower.json"
PATHS = [
    "vertex.metadata.archived",
    "vertex.properties.age",
    "vertex.metadata.confidence",
    "vertex.encodings.vectors",
]


def generate(n_statements: int, seed: int = 0) -> dict[str, Any]:
    """A valid SSA body of about `n_statements` statements."""
    rng = random.Random(seed)
    locals_: dict[str, Any] = {
        "env": {"tuple": ["int", "closure", {"list": "int"}]},
        "vertex": {"opaque": "Entity"},
    }
    blocks: list[dict[str, Any]] = []
    k = [0]

    def new(ty: Any) -> str:
        k[0] += 1
        name = f"%{k[0]}"
        locals_[name] = ty
        return name

    def stmts(carry: str) -> tuple[list[dict[str, Any]], str, str]:
        out = []
        src = rng.choice(PATHS + ["env.0", "env.0"])
        x = new("unknown" if src.startswith("vertex.encodings") else "int")
        out.append({"assign": x, "load": src})
        y = new("int")
        out.append(
            {
                "assign": y,
                "binary": {"op": "+", "left": carry, "right": {"const": rng.randint(1, 9)}},
            }
        )
        z = new("int")
        if rng.random() < 0.2:
            out.append({"assign": z, "apply": {"func": "env.1", "args": [y]}})
        else:
            out.append({"assign": z, "binary": {"op": "*", "left": y, "right": {"const": 2}}})
        w = new("bool")
        out.append({"assign": w, "binary": {"op": "==", "left": z, "right": {"const": 3}}})
        u = new({"tuple": ["int", "int"]})
        out.append({"assign": u, "aggregate": {"kind": "tuple", "operands": [y, z]}})
        return out, z, w

    v0 = new("int")
    blocks.append(
        {
            "id": "entry",
            "statements": [{"assign": v0, "load": "env.0"}],
            "terminator": {"kind": "goto", "successors": [{"block": "s0a", "args": [v0]}]},
        }
    )
    n_seg = max(1, n_statements // 20)
    for i in range(n_seg):
        p = new("int")
        a_st, a_val, a_cond = stmts(p)
        blocks.append(
            {
                "id": f"s{i}a",
                "params": [p],
                "statements": a_st,
                "terminator": {
                    "kind": "switch",
                    "operand": a_cond,
                    "successors": [{"block": f"s{i}b"}, {"block": f"s{i}c"}],
                },
            }
        )
        b_st, b_val, _ = stmts(a_val)
        blocks.append(
            {
                "id": f"s{i}b",
                "statements": b_st,
                "terminator": {
                    "kind": "goto",
                    "successors": [{"block": f"s{i}d", "args": [b_val]}],
                },
            }
        )
        c_st, c_val, _ = stmts(a_val)
        blocks.append(
            {
                "id": f"s{i}c",
                "statements": c_st,
                "terminator": {
                    "kind": "goto",
                    "successors": [{"block": f"s{i}d", "args": [c_val]}],
                },
            }
        )
        q = new("int")
        d_st, d_val, d_cond = stmts(q)
        nxt = f"s{i + 1}a" if i + 1 < n_seg else "exit"
        succ = [{"block": nxt, "args": [d_val] if nxt != "exit" else []}]
        if rng.random() < 0.125:
            succ.append({"block": f"s{i}a", "args": [d_val]})
        blocks.append(
            {
                "id": f"s{i}d",
                "params": [q],
                "statements": d_st,
                "terminator": {"kind": "switch", "operand": d_cond, "successors": succ}
                if len(succ) > 1
                else {"kind": "goto", "successors": succ},
            }
        )
    blocks.append({"id": "exit", "terminator": {"kind": "return", "operand": v0}})
    return {
        "version": 1,
        "name": f"bench {n_statements}",
        "size_cap": 64,
        "bodies": [
            {
                "name": "filter",
                "env": "env",
                "vertex": "vertex",
                "locals": locals_,
                "blocks": blocks,
            }
        ],
    }


def _time(cmd: list[str], repeat: int) -> tuple[float, float]:
    """(wall, cpu) seconds of the child process, best of `repeat`: on a shared machine
    the CPU time (user + system) is the fairer number."""
    best = (float("inf"), float("inf"))
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True)
        dt = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if r.returncode not in (0, 4):
            raise SystemExit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.decode()[:500]}")
        best = min(best, (dt, cpu), key=lambda x: x[1])
    return best


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    a, _ = ap.parse_known_args(argv)
    sizes = (1_000, 10_000) if a.quick else (1_000, 10_000, 100_000)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            doc = generate(n)
            f = Path(tmp) / f"body{n}.json"
            f.write_text(json.dumps(doc))
            n_st = sum(len(b.get("statements", [])) for b in doc["bodies"][0]["blocks"])
            n_bl = len(doc["bodies"][0]["blocks"])
            m = Path(tmp) / f"body{n}.mir"
            m.write_text(print_mir(doc))
            exe = [sys.executable, "-m", "placement_cli"]
            t_lower = _time(
                exe + ["lower", str(f), "-o", str(Path(tmp) / "plan.json"), "--quiet"], a.repeat
            )
            plan = json.loads((Path(tmp) / "plan.json").read_text())
            t_mir = _time(
                exe
                + ["lower", str(m), "--size-cap", str(doc["size_cap"])]
                + ["-o", str(Path(tmp) / "plan_mir.json"), "--quiet"],
                a.repeat,
            )
            mir_plan = json.loads((Path(tmp) / "plan_mir.json").read_text())
            if len(mir_plan["blocks"]) != len(plan["blocks"]):
                raise SystemExit(f"{m}: the MIR text lowers to another plan")
            ratio = t_mir[1] / t_lower[1] if t_lower[1] else float("nan")
            t_all = _time(
                exe + ["run", str(f), "--out-dir", str(Path(tmp) / "out"), "--quiet"], a.repeat
            )
            row = {
                "statements": n_st,
                "blocks": n_bl,
                "blocks_after_split": len(plan["blocks"]),
                "lower_wall_s": round(t_lower[0], 2),
                "lower_cpu_s": round(t_lower[1], 2),
                "lower_and_five_stages_wall_s": round(t_all[0], 2),
                "lower_and_five_stages_cpu_s": round(t_all[1], 2),
                "mir_lower_wall_s": round(t_mir[0], 2),
                "mir_lower_cpu_s": round(t_mir[1], 2),
                "mir_over_body_cpu": round(ratio, 2),
            }
            rows.append(row)
            print(
                f"{n_st:>7} statements {n_bl:>6} blocks -> {row['blocks_after_split']:>6} after splitting: "
                f"lower {t_lower[0]:6.2f} s wall {t_lower[1]:6.2f} s cpu; "
                f"lower + five stages {t_all[0]:6.2f} s wall {t_all[1]:6.2f} s cpu; "
                f"MIR lower {t_mir[0]:6.2f} s wall {t_mir[1]:6.2f} s cpu (x{ratio:.2f})",
                flush=True,
            )
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "machine": platform.machine(),
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "rows": rows,
            },
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
