"""How far can start-up go down? The libraries a stage cannot do without, timed as
whole processes beside `placement` itself, on one or more Python installations.

    .venv/bin/python -m benchmarks.bench_floor --env /tmp/dv --env .venv

Each `--env` is a virtual environment with `placement` installed (`pip install .`, as a
user installs it). Per environment, in interleaved rounds (every row of every
environment once per round, a fresh order each round):

- `python -c pass`: the interpreter's own start;
- `import orjson` and `import msgspec` (msgspec without `typing_extensions`, as the
  launcher imports it: `core/start.py`), each alone and both together, with `heapq`,
  `gc` and `errno` (what a stage imports besides): the floor under any stage, since
  every artifact is written by orjson and every plan decoded by msgspec's Structs;
- `import orjson, typing`: the floor without msgspec (the project's modules use
  `typing` at run time);
- `placement --version`, and `placement solve` on the 7-block example plan and on the
  150-block plan (`--method exact`, proven optimal), the rows of `make bench-startup`.

Medians, minima and maxima (ms) to `benchmarks/results/startup-floor_DATE.json` (or
`-o`) and a table on stdout.
"""

from __future__ import annotations

import argparse
import datetime
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
import yaml

from benchmarks.families import structured_open

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
HOLD = "import sys; sys.modules['typing_extensions'] = None\n"
SCRIPTS = {
    "import orjson": "import orjson, heapq, gc, errno\n",
    "import msgspec": HOLD + "import msgspec, heapq, gc, errno\n",
    "import orjson, msgspec": HOLD + "import msgspec, orjson, heapq, gc, errno\n",
    "import orjson, typing": "import orjson, typing, heapq, gc, errno\n",
}


def _rows(env: Path, tmp: Path) -> list[tuple[str, list[str]]]:
    py, pl = str(env / "bin" / "python"), str(env / "bin" / "placement")
    rows = [("python -c pass", [py, "-c", "pass"])]
    for name in SCRIPTS:
        rows.append((name, [py, str(tmp / f"{len(rows)}.py")]))
        (tmp / f"{len(rows) - 1}.py").write_text(SCRIPTS[name])
    out = tmp / env.name
    out.mkdir(exist_ok=True)
    rows += [
        ("placement --version", [pl, "--version"]),
        ("solve 7 blocks", [pl, "solve", str(tmp / "plan7.json"), "-o", str(out / "s7.json")]),
        (
            "solve 150 blocks, exact",
            [pl, "solve", str(tmp / "plan150.json"), "--method", "exact", "-o", str(out / "s150.json")],
        ),
    ]  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--env", type=Path, action="append", required=True)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("-o", "--output", type=Path)
    a = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="placement-floor-"))
    small = yaml.safe_load((ROOT / "examples" / "three_targets.yaml").read_text())
    (tmp / "plan7.json").write_bytes(orjson.dumps(small))
    (tmp / "plan150.json").write_bytes(orjson.dumps(structured_open(150, 0)))
    envs = [e.resolve() for e in a.env]
    cases = [(env, name, cmd) for env in envs for name, cmd in _rows(env, tmp)]
    for _, _, cmd in cases:  # once each: compiled bytecode, files in the page cache
        subprocess.run(cmd, check=True, capture_output=True)
    times: dict[tuple[Path, str], list[float]] = {(e, n): [] for e, n, _ in cases}
    rng = random.Random(0)
    for _ in range(a.rounds):
        order = list(cases)
        rng.shuffle(order)
        for env, name, cmd in order:
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            times[(env, name)].append((time.perf_counter() - t0) * 1000)
    version = {
        str(e): subprocess.run(
            [str(e / "bin" / "python"), "-c", "import sys; print(sys.version.split()[0], sys.executable)"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        for e in envs
    }  # fmt: skip
    result = {
        "date": datetime.date.today().isoformat(),
        "rounds": a.rounds,
        "environments": version,
        "rows": [
            {
                "env": str(e),
                "row": n,
                "median_ms": round(statistics.median(v), 1),
                "min_ms": round(min(v), 1),
                "max_ms": round(max(v), 1),
            }
            for (e, n), v in times.items()
        ],
    }
    path = a.output or RESULTS / f"startup-floor_{result['date']}.json"
    path.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    names = list(dict.fromkeys(n for _, n, _ in cases))
    print("| row | " + " | ".join(f"{version[str(e)]}" for e in envs) + " |")
    print("|---|" + "---|" * len(envs))
    for n in names:
        cells = [times[(e, n)] for e in envs]
        print(
            f"| {n} | "
            + " | ".join(f"{statistics.median(c):.1f} ({min(c):.1f}-{max(c):.1f})" for c in cells)
            + " |"
        )
    print(f"results: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
