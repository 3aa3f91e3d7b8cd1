"""Many files in one call against a shell loop calling `placement` once per file.

    .venv/bin/python -m benchmarks.bench_batch                 # 1,000 bodies
    .venv/bin/python -m benchmarks.bench_batch --n 200 --loop-sample 50

Writes `--n` small seeded bodies (`bench_lower.generate`, about 40 statements each,
different seeds) into a directory and measures, as whole processes:

- `placement run DIR --out-dir OUT -q` (all cores, `--jobs` default), and with `--jobs 1`;
- a shell loop `for f in DIR/*; do placement run "$f" --out-dir OUT/NAME -q; done` over
  `--loop-sample` of the files (the loop's time grows linearly with the files: one
  process start each), scaled to `--n`. `--loop-sample 0` runs the loop on all of them.

Goal: the batch at least 4x faster than the loop on 1,000 bodies.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_lower import generate

ROOT = Path(__file__).resolve().parent.parent
PLACEMENT = [sys.executable, "-m", "placement_cli"]


def _wall(cmd: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, capture_output=True)
    took = time.perf_counter() - t0
    if r.returncode not in (0, 4, 5):
        raise SystemExit(f"{cmd[:6]}... failed: {r.returncode} {r.stderr[-400:]!r}")
    return took


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--n", type=int, default=1000, help="how many bodies (default 1000)")
    ap.add_argument("--statements", type=int, default=40, help="statements per body (default 40)")
    ap.add_argument(
        "--loop-sample", type=int, default=100, help="files the shell loop runs (0: all)"
    )
    ap.add_argument("--quick", action="store_true", help="100 bodies, loop over 20")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.loop_sample = 100, 20
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        src = base / "bodies"
        src.mkdir()
        for i in range(args.n):
            (src / f"q{i:05d}.body.json").write_text(json.dumps(generate(args.statements, seed=i)))
        files = sorted(src.iterdir())
        # Bytecode once, as an installation has it.
        subprocess.run([*PLACEMENT, "validate", str(files[0]), "-q"], cwd=base, capture_output=True)
        jobs = os.cpu_count() or 1
        batch = _wall([*PLACEMENT, "run", str(src), "--out-dir", str(base / "out1"), "-q"], base)
        one = _wall(
            [*PLACEMENT, "run", str(src), "--out-dir", str(base / "out2"), "-q", "--jobs", "1"],
            base,
        )
        sample = files if args.loop_sample <= 0 else files[: args.loop_sample]
        names = " ".join(f"'{f}'" for f in sample)
        script = (
            f'for f in {names}; do n=$(basename "$f" .body.json); '
            f"'{sys.executable}' -m placement_cli run \"$f\" --out-dir '{base}/loop/'\"$n\" -q || true; done"
        )
        loop = _wall(["bash", "-c", script], base) * len(files) / len(sample)
    print(f"bodies: {args.n} of {args.statements} statements; {jobs} cores")
    print(
        f"  batch  run DIR (--jobs {jobs}):  {batch:8.2f} s  ({batch / args.n * 1000:.1f} ms a body)"
    )
    print(f"  batch  run DIR (--jobs 1):   {one:8.2f} s  ({one / args.n * 1000:.1f} ms a body)")
    scaled = "" if len(sample) == len(files) else f", scaled from {len(sample)}"
    print(
        f"  shell loop of run FILE:      {loop:8.2f} s  ({loop / args.n * 1000:.1f} ms a body{scaled})"
    )
    print(f"  speed-up: {loop / batch:.1f}x with {jobs} jobs, {loop / one:.1f}x with 1 (goal: 4x)")


if __name__ == "__main__":
    main()
