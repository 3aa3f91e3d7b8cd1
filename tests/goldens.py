"""Golden files: the byte-exact artifacts of every example, refreshed only on purpose.

python -m tests.goldens --write     (what `make goldens` runs)
python -m tests.goldens             (check, exit 1 on a difference)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from placement_cli.pipeline.registry import STAGES

ROOT = Path(__file__).resolve().parent.parent
GOLDEN_DIR = ROOT / "tests" / "goldens"


def plan_examples() -> list[Path]:
    """The plan, body and MIR-text examples (not the operator tree), in name order."""
    found = [*(ROOT / "examples").glob("*.yaml"), *(ROOT / "examples").glob("*.mir")]
    return sorted(p for p in found if not p.name.endswith("tree.yaml"))


def tree_examples() -> list[Path]:
    return sorted((ROOT / "examples").glob("*tree.yaml"))


def produce(example: Path, hashseed: str = "0") -> dict[str, bytes]:
    """Artifact name -> bytes, produced through the CLI exactly as users run it."""
    env = dict(os.environ, PYTHONHASHSEED=hashseed)
    out: dict[str, bytes] = {}
    if example in tree_examples():
        r = subprocess.run(
            [sys.executable, "-m", "placement_cli", "tree", str(example.relative_to(ROOT))],
            capture_output=True,
            env=env,
            cwd=ROOT,
            timeout=300,
        )
        if r.returncode not in (0, 4):
            raise RuntimeError(f"{example}: exit {r.returncode}: {r.stderr.decode()}")
        out["tree.json"] = r.stdout
        return out
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "placement_cli",
                "run",
                str(example.relative_to(ROOT)),
                "--out-dir",
                tmp,
                "--quiet",
            ],
            capture_output=True,
            env=env,
            cwd=ROOT,
            timeout=300,
        )
        if r.returncode not in (0, 4):
            raise RuntimeError(f"{example}: exit {r.returncode}: {r.stderr.decode()}")
        for stage in STAGES:
            f = Path(tmp) / f"{stage}.json"
            if f.exists():
                out[f"{stage}.json"] = f.read_bytes()
    return out


def golden_path(example: Path, name: str) -> Path:
    return GOLDEN_DIR / example.stem / name


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true", help="refresh the golden files")
    a = ap.parse_args(argv)
    files = (
        (golden_path(ex, name), data)
        for ex in plan_examples() + tree_examples()
        for name, data in produce(ex).items()
    )
    return sync(files, a.write)


def sync(files: Iterable[tuple[Path, bytes]], write: bool) -> int:
    """Check (or, with `write`, refresh) golden files: each (path, bytes) that is missing
    or differs is reported, and written when asked. Returns the exit status: 1 when a
    check found a difference, else 0."""
    bad = 0
    for gp, data in files:
        if not gp.exists() or gp.read_bytes() != data:
            if write:
                gp.parent.mkdir(parents=True, exist_ok=True)
                gp.write_bytes(data)
                print(f"wrote {gp.relative_to(ROOT)}")
            else:
                print(f"differs: {gp.relative_to(ROOT)}")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
