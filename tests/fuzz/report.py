"""How a fuzz campaign (`python -m tests.fuzz`, `python -m tests.fuzz.mir`) runs its
jobs and tells what it found: the progress on stderr, the tables of outcomes, and
every distinct finding with an example input saved to look at."""

from __future__ import annotations

import multiprocessing
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fuzz.judge import Outcome

CATEGORIES_SHOWN = ("internal", "traceback", "memory", "signal", "hang", "partial-output")


def run_jobs(
    workers: int,
    init: Callable[..., None],
    initargs: tuple[Any, ...],
    job: Callable[[tuple[str, int]], Outcome],
    jobs: list[tuple[str, int]],
) -> list[Outcome]:
    """Every job's outcome, from a pool of forked workers; the progress on stderr."""
    start = time.monotonic()
    outcomes: list[Outcome] = []
    with multiprocessing.get_context("fork").Pool(
        workers, initializer=init, initargs=initargs, maxtasksperchild=2000
    ) as pool:
        for n, o in enumerate(pool.imap_unordered(job, jobs, chunksize=4), 1):
            outcomes.append(o)
            if n % 500 == 0 or n == len(jobs):
                bad = sum(1 for x in outcomes if x.findings)
                print(
                    f"  {n}/{len(jobs)} runs, {bad} with findings, {time.monotonic() - start:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
    return outcomes


def table(outcomes: list[Outcome], by: str) -> str:
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    for o in outcomes:
        key = getattr(o, by)
        c = rows[key]
        c["inputs"] += 1
        c[f"exit {o.code}" if o.code in (0, 3, 4, 5) else "exit other"] += 1
        cats = {cat for cat, _ in o.findings}
        for cat in cats:
            c[cat] += 1
        if cats - set(CATEGORIES_SHOWN):
            c["other findings"] += 1
    cols = [
        "inputs",
        "exit 0",
        "exit 3",
        "exit 4",
        "exit 5",
        "exit other",
        "internal",
        "hang",
        "partial-output",
        "other findings",
    ]
    head = [by] + [
        c.replace("partial-output", "partial").replace("other findings", "other") for c in cols
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    total: Counter[str] = Counter()
    for key in sorted(rows):
        c = rows[key]
        internal = (
            c["internal"] + c["memory"] + c["signal"] + (c["traceback"] if not c["internal"] else 0)
        )
        c = Counter(c)
        c["internal"] = internal
        total.update({k: c[k] for k in cols})
        lines.append("| " + " | ".join([key] + [str(c[k]) for k in cols]) + " |")
    lines.append("| **total** | " + " | ".join(str(total[k]) for k in cols) + " |")
    return "\n".join(lines)


def print_findings(outcomes: list[Outcome], save: Path, clean: str) -> int:
    """Print every distinct finding (category, command, input kind, error line), most
    frequent first within a category and command, each with one example input and its
    command line and stderr saved in `save`; 1 when there is any, else print `clean`
    and return 0 (the campaign's exit status)."""
    findings: dict[tuple[str, str, str, str], list[Outcome]] = defaultdict(list)
    for o in outcomes:
        for cat, sig in dict.fromkeys(o.findings):
            findings[(cat, o.command, o.kind, sig)].append(o)
    if not findings:
        print(clean)
        return 0
    save.mkdir(parents=True, exist_ok=True)
    print(
        f"## {len(findings)} distinct findings (category, command, input kind, error line; example in {save}/)\n"
    )
    for n, (key, group) in enumerate(
        sorted(findings.items(), key=lambda kv: (kv[0][0], kv[0][1], -len(kv[1]))), 1
    ):
        cat, cmd, kind, sig = key
        ex = group[0]
        name = f"{n:03d}-{cat}-{cmd}-{kind}{ex.suffix or '.bin'}"
        (save / name).write_bytes(ex.input)
        (save / (name + ".txt")).write_text(
            f"placement {' '.join(ex.args)}\nexit {ex.code}\n\n{ex.stderr}\n", errors="replace"
        )
        print(f"{n:3d}. [{cat}] {cmd} / {kind} x{len(group)}: {sig}  ({name})")
    return 1
