"""Golden files of the views: `placement show` of every plan example, in every view and
format, produced through the CLI (the typer application in-process: 36 fresh processes
take minutes on a loaded machine) and compared byte for byte.

    python -m tests.views_goldens --write     (refresh, on purpose only)
    python -m tests.views_goldens             (check, exit 1 on a difference)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from tests.goldens import GOLDEN_DIR, ROOT, plan_examples, sync

VIEWS = ("cfg", "islands", "graph")
FORMATS = {"dot": "dot", "mermaid": "mmd", "text": "txt"}


def golden_name(view: str, fmt: str) -> str:
    return f"show-{view}.{FORMATS[fmt]}"


def show_args(example: Path, view: str, fmt: str) -> list[str]:
    return ["show", str(example.relative_to(ROOT)), "--view", view, "--format", fmt, "--quiet"]


def invoke(args: list[str], stdin: bytes | None = None) -> tuple[int, bytes, bytes]:
    """Run the CLI in this process: (exit code, stdout, stderr)."""
    import gc

    from typer.testing import CliRunner

    from placement_cli.app.cli import app

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        r = CliRunner().invoke(app, args, input=stdin, catch_exceptions=False)
    finally:
        os.chdir(cwd)
        gc.enable()  # the CLI turns the collector off for its short-lived process
    return r.exit_code, r.stdout_bytes, r.stderr_bytes


def produce(example: Path) -> dict[str, bytes]:
    """Golden name -> bytes of `placement show EXAMPLE --view V --format F`."""
    out: dict[str, bytes] = {}
    for view in VIEWS:
        for fmt in FORMATS:
            code, stdout, stderr = invoke(show_args(example, view, fmt))
            if code != 0:
                raise RuntimeError(f"{example} {view} {fmt}: exit {code}: {stderr.decode()}")
            out[golden_name(view, fmt)] = stdout
    return out


def produce_subprocess(example: Path, view: str, fmt: str, hashseed: str) -> bytes:
    """One view through a fresh process, as users run it, under a given hash seed."""
    env = dict(os.environ, PYTHONHASHSEED=hashseed)
    r = subprocess.run(
        [sys.executable, "-m", "placement_cli", *show_args(example, view, fmt)],
        capture_output=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    if r.returncode != 0:
        raise RuntimeError(f"{example} {view} {fmt}: exit {r.returncode}: {r.stderr.decode()}")
    return r.stdout


def golden_path(example: Path, name: str) -> Path:
    return GOLDEN_DIR / example.stem / name


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true", help="refresh the golden files")
    a = ap.parse_args(argv)
    return sync(
        (
            (golden_path(ex, name), data)
            for ex in plan_examples()
            for name, data in produce(ex).items()
        ),
        a.write,
    )


if __name__ == "__main__":
    sys.exit(main())
