"""The fuzz campaign: `python -m tests.fuzz [--long] [--per-target N] [--workers 2]`.

Runs N inputs per command (validate, prune, scc, solve, fuse, islands, run, tree, lower,
show, explain, diff) through the real CLI, two workers in parallel (`--kinds` keeps
some input kinds only, e.g. `--kinds keys,artifact,mutated-artifact` for the artifact
campaign, which skips the commands that read none), and prints: inputs per
kind, outcomes per exit code, internal errors, hangs and partial outputs, then every
distinct finding (command, input kind, error line) with a saved example input. Exit status 1 when anything was
found, so CI can run it. Works against any checkout: run it from the checkout's root.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from tests.fuzz.campaign import COMMANDS, Fuzzer, kinds_for
from tests.fuzz.child import Config
from tests.fuzz.judge import Outcome
from tests.fuzz.report import print_findings, run_jobs, table

_FUZZER: Fuzzer | None = None


def _init(cfg: Config, seed: int, workdir: str, kinds: tuple[str, ...] | None) -> None:
    global _FUZZER
    _FUZZER = Fuzzer(cfg, seed, Path(tempfile.mkdtemp(dir=workdir, prefix="w")), kinds)


def _job(job: tuple[str, int]) -> Outcome:
    assert _FUZZER is not None
    return _FUZZER.run(*job)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m tests.fuzz",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--long", action="store_true", help="the long campaign: 10000 inputs per command"
    )
    ap.add_argument(
        "--per-target",
        type=int,
        default=None,
        help="inputs per command (default 200, --long 10000)",
    )
    ap.add_argument(
        "--commands",
        default=",".join(COMMANDS),
        help="comma-separated subset of " + ",".join(COMMANDS),
    )
    ap.add_argument(
        "--kinds",
        default=None,
        help="comma-separated input kinds to draw from (default: every kind of each command)",
    )
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument(
        "--time-limit", type=float, default=1.0, help="--time-limit for solving commands"
    )
    ap.add_argument(
        "--hang-seconds", type=float, default=30.0, help="wall clock after which a run is a hang"
    )
    ap.add_argument("--memory-mb", type=int, default=2048, help="address-space limit of each run")
    ap.add_argument(
        "--spawn", action="store_true", help="a fresh interpreter per run instead of a fork"
    )
    ap.add_argument(
        "--save",
        default=os.path.join(tempfile.gettempdir(), "placement-fuzz-findings"),
        help="directory for one example input per finding (default: %(default)s)",
    )
    ns = ap.parse_args(argv)
    per = ns.per_target if ns.per_target is not None else (10000 if ns.long else 200)
    commands = [c for c in ns.commands.split(",") if c]
    unknown = set(commands) - set(COMMANDS)
    if unknown:
        ap.error(f"unknown commands: {', '.join(sorted(unknown))}")
    cfg = Config(
        time_limit=ns.time_limit,
        hang_seconds=ns.hang_seconds,
        memory_mb=ns.memory_mb,
        spawn=ns.spawn,
    )
    kinds = tuple(k for k in ns.kinds.split(",") if k) if ns.kinds else None
    commands = [c for c in commands if kinds_for(c, kinds)]
    if not commands:
        ap.error("no command reads any of those input kinds")
    jobs = [(c, i) for i in range(per) for c in commands]
    workdir = tempfile.mkdtemp(prefix="placement-fuzz-")
    start = time.monotonic()
    try:
        outcomes = run_jobs(ns.workers, _init, (cfg, ns.seed, workdir, kinds), _job, jobs)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    elapsed = time.monotonic() - start
    print(
        f"# fuzz campaign: {per} inputs per command, seed {ns.seed}, {ns.workers} workers, "
        f"{'spawn' if ns.spawn else 'fork'}, {elapsed:.0f} s\n"
    )
    print(table(outcomes, "kind") + "\n")
    print(table(outcomes, "command") + "\n")
    return print_findings(
        outcomes, Path(ns.save), "no findings: 0 internal errors, 0 hangs, 0 partial outputs"
    )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
