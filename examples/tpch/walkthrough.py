"""Run the README's TPC-H walkthrough ("Real engines") as written: its shell blocks
(the walkthrough, then "Close the loop") are read from the README, the one copy of the
commands, and each line run with bash in a work folder (`make tpch-demo`;
`tests/test_walkthrough.py` runs it too).

    python examples/tpch/walkthrough.py                 # in out/tpch/, SF 0.1 made first
    python examples/tpch/walkthrough.py --db tpch.duckdb --fast --dir /tmp/w

The work folder gets a link `examples` to the repository's, so the commands' paths
(`examples/tpch/q3.sql`) are those a user types at the repository's root, and the
virtual environment's `bin` first on PATH, so `placement` is this checkout's.
`--db FILE` uses that database (linked as `tpch.duckdb`) and skips the data step;
`--fast` adds test settings to the measuring commands (one timed run, a small
calibration grid), which changes the times measured, never what is run.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SECTION = "### Real engines"
DATA_STEP = "make_data.py"
# Test settings per command (its first two words): one timed run and, for the
# calibration, 2 widths x 3 row counts per direction, enough points for a fit.
FAST = {
    ("import", "sql"): ["--repeat", "1"],
    ("calibrate", "measure"): ["--repeat", "1", "--rows", "1000,10000,40000", "--widths", "16,64"],
    ("execute", "q3.placed.json"): ["--repeat", "1"],
}


def commands(readme: Path = ROOT / "README.md") -> list[str]:
    """The lines of every `sh` block of the README's engine section (up to its next
    section of the same level), comments and blank lines left out: the walkthrough, the
    data step first, then closing the loop."""
    text = readme.read_text(encoding="utf-8")
    if SECTION not in text:
        raise SystemExit(f"{readme}: no section {SECTION!r}")
    section = text.split(SECTION, 1)[1].split("\n### ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    if not blocks:
        raise SystemExit(f"{readme}: the section {SECTION!r} has no sh block")
    out = []
    for block in blocks:
        for line in block.splitlines():
            code = _code(line)
            if code:
                out.append(code)
    return out


def _code(line: str) -> str:
    """`line` without its `# comment` (none of the commands has a `#` of its own)."""
    return line.split("#", 1)[0].strip()


def fast(command: str) -> str:
    """`command` with the test settings of its kind added (before a pipe)."""
    words = command.split()
    extra = FAST.get((words[1], words[2])) if len(words) > 2 and words[0] == "placement" else None
    if not extra:
        return command
    head, sep, tail = command.partition(" | ")
    return f"{head} {' '.join(extra)}{sep}{tail}"


def run(
    work: Path, db: Path | None = None, quick: bool = False, timeout: float = 900
) -> list[subprocess.CompletedProcess[str]]:
    """Every command of the walkthrough in `work`, in order, stopping at the first that
    fails; their completed processes."""
    work.mkdir(parents=True, exist_ok=True)
    link = work / "examples"
    if not link.exists():
        link.symlink_to(ROOT / "examples", target_is_directory=True)
    if db is not None:
        target = work / "tpch.duckdb"
        target.unlink(missing_ok=True)
        target.symlink_to(db.resolve())
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    done = []
    for command in commands():
        if db is not None and DATA_STEP in command:
            continue
        line = fast(command) if quick else command
        print(f"$ {line}", file=sys.stderr, flush=True)
        proc = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", line],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        sys.stderr.write(proc.stderr)
        done.append(proc)
        if proc.returncode != 0:
            break
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=ROOT / "out" / "tpch", help="work folder")
    parser.add_argument("--db", type=Path, help="a TPC-H DuckDB file to use (no data step)")
    parser.add_argument("--fast", action="store_true", help="test settings: fewer runs")
    args = parser.parse_args(argv)
    done = run(args.dir, args.db, args.fast)
    return done[-1].returncode if done else 0


if __name__ == "__main__":
    sys.exit(main())
