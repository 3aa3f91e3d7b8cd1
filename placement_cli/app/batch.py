"""Many inputs in one call: `placement run queries/ --out-dir out/ --jobs 4`.

A command whose input argument takes several paths (files or directories) runs its
one-input handler on each file, in parallel worker processes forked from this one (the
modules are imported once, not once per file as a shell loop would), and writes one
output folder per input under `--out-dir`: `OUT/NAME/` for `run`, `OUT/NAME/STAGE.json`
for a stage. Each input runs as the single-file command would: its own exit code, its
own messages (captured, and printed in input order after all are done, each line
prefixed with its file), and a broken file never stops the others or loses their
outputs. At the end: a summary table on stderr (input, exit, status, cost, proven,
time), `OUT/summary.json` for scripts (a failed input's row says why: `status` and
`message`), and the worst exit code of all. With a machine-readable `--diagnostics`,
every input's records go into the call's one report, in input order.

Directories are searched recursively for `.yaml`, `.yml`, `.json` and `.mir` files,
in name order, and only the files the command reads are taken (`pipeline/kinds.py`
tells a file's kind from its first bytes): the rest (target profiles, operator trees
for a pipeline command, `summary.json`, other YAML) are listed as skipped, one line
each on stderr and under `skipped` in `OUT/summary.json`. A file named on the command
line is always taken. Inputs are taken in the order given. MIR text with several
bodies to place and no `--body` is one input per body, `OUT/NAME/BODY/`.

>>> [i.name for i in expand_names(["a/q.body.yaml", "b/q.body.yaml", "c.mir"])]
['q', 'q-2', 'c']
"""

from __future__ import annotations

import gc
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import orjson

from placement_cli.app.commands import command
from placement_cli.app.config import configured
from placement_cli.app.console import KEEPER, guarded, report, reporting
from placement_cli.app.report import Report, plural
from placement_cli.core.errors import (
    EXIT_INFEASIBLE,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_UNSOLVED,
    UsageError,
)
from placement_cli.core.io import STDIN, write_output
from placement_cli.pipeline.kinds import HEAD, describe, placeable_bodies, reads, skip_reason

SUFFIXES = (".yaml", ".yml", ".json", ".mir")
# Double extensions of our formats: `q.body.yaml` is the input named `q`.
_INNER = (".body", ".plan", ".tree")


@dataclass(frozen=True, slots=True)
class Item:
    """One input file (and the body to place, for MIR text with several) and the name
    of its output folder."""

    path: str
    name: str
    body: str | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one input gave: its exit code, its stderr, its summary row, its time, and
    its report (the records a machine-readable report collects, its warning count)."""

    code: int
    messages: str
    row: dict[str, Any]
    seconds: float
    report: Report


# A failed input's status in the summary, by exit code (an artifact says its own).
_FAILED = {1: "internal-error", 2: "usage-error", 3: "invalid", 6: "io-error", 130: "interrupted"}


def _stem(path: str) -> str:
    if path == STDIN:
        return "stdin"
    name = Path(path).name
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    for inner in _INNER:
        if name.endswith(inner):
            name = name[: -len(inner)]
    return name or "input"


def expand_names(paths: Iterable[str]) -> list[Item]:
    """Name each file's output folder by its stem; a repeated stem gets `-2`, `-3`, ...
    in input order."""
    seen: dict[str, int] = {}
    out = []
    for p in paths:
        stem = _stem(p)
        n = seen.get(stem, 0) + 1
        seen[stem] = n
        out.append(Item(p, stem if n == 1 else f"{stem}-{n}"))
    return out


def _head(path: str) -> tuple[bytes, bool]:
    """A file's first `HEAD` bytes, and whether they are the whole file (unreadable:
    none, so the command itself says why)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(HEAD + 1)
    except OSError:
        return b"", False
    return data[:HEAD], len(data) <= HEAD


def walk(directory: str, command: str) -> tuple[list[str], list[dict[str, str]]]:
    """A directory's files the command reads, in name order, and the ones it skips
    (`{input, reason}`)."""
    found = sorted(
        str(f) for f in Path(directory).rglob("*") if f.is_file() and f.suffix in SUFFIXES
    )
    if not found:
        raise UsageError(f"{directory}: no {', '.join(SUFFIXES)} files in this directory")
    taken: list[str] = []
    skipped: list[dict[str, str]] = []
    for f in found:
        head, complete = _head(f)
        if f.endswith(".mir") and not reads(command, "mir"):
            # A `.mir` file is MIR text whatever it holds (an empty one too): a command
            # that does not read MIR skips it rather than read it as its own kind.
            skipped.append({"input": f, "reason": describe("mir")})
            continue
        why = skip_reason(command, head, complete) if head else None
        if why is None:
            taken.append(f)
        else:
            skipped.append({"input": f, "reason": why})
    if not taken:
        raise UsageError(
            f"{directory}: nothing `placement {command}` reads in this directory "
            f"({len(skipped)} files skipped: {skipped[0]['reason']}, ...)"
        )
    return taken, skipped


def expand(
    paths: list[str], command: str = "run", v: dict[str, Any] | None = None
) -> tuple[list[Item], list[dict[str, str]]]:
    """The inputs: each path as given, each directory's files the command reads in name
    order (and the files skipped); MIR text with several bodies to place and no
    `--body` (in `v`) is one input per body."""
    files: list[str] = []
    skipped: list[dict[str, str]] = []
    for p in paths:
        if p != STDIN and os.path.isdir(p):
            taken, left = walk(p, command)
            files += taken
            skipped += left
        else:
            files.append(p)
    if files.count(STDIN) > 1 or (STDIN in files and len(files) > 1):
        raise UsageError("standard input (-) can only be the one input")
    items = expand_names(files)
    if v is not None and v.get("body_name") is None and "body_name" in v:
        items = [one for item in items for one in _per_body(item, v.get("source"))]
    return items, skipped


def _per_body(item: Item, source_format: str | None) -> list[Item]:
    """MIR text with several bodies to place: one input per body, `NAME/BODY`."""
    names = placeable_bodies(item.path, source_format)
    if len(names) < 2:
        return [item]
    seen: dict[str, int] = {}
    out = []
    for body in names:
        stem = re.sub(r"[^A-Za-z0-9_.]+", "-", body).strip("-.") or "body"
        n = seen[stem] = seen.get(stem, 0) + 1
        out.append(Item(item.path, f"{item.name}/{stem if n == 1 else f'{stem}-{n}'}", body))
    return out


def _single_values(name: str, v: dict[str, Any], item: Item, key: str) -> dict[str, Any]:
    """The one-input command's values for `item`: its path, and its output inside the
    item's folder."""
    one = {**v, key: item.path}
    if item.body is not None:
        one["body_name"] = item.body
    out_dir: str | None = v.get("out_dir")
    if name == "run":
        one["out_dir"] = str(Path(out_dir or "out") / item.name)
    elif "output" in v:
        if out_dir is None:
            raise UsageError("several inputs need --out-dir DIR (one folder per input)")
        one.pop("out_dir", None)
        one["output"] = str(Path(out_dir) / item.name / f"{name}.{v.get('format', 'json')}")
    one.pop("jobs", None)
    one["quiet"] = v.get("quiet", False)
    return one


def _row(name: str, one: dict[str, Any], code: int, rep: Report) -> dict[str, Any]:
    """The summary of one finished input: read back from what it wrote, or, for an
    input that failed, why (its first error)."""
    # --strict failed an input on its warnings alone: its artifacts are written.
    strict_only = rep.strict and code == EXIT_INPUT and 0 < rep.warnings == rep.errors
    written = code in (EXIT_OK, EXIT_INFEASIBLE, EXIT_UNSOLVED) or strict_only
    # `one` is empty when the input's own configuration failed it: nothing was written.
    row = _artifact_row(name, one) if written and one else {}
    if strict_only:
        row["status"] = "warnings"
    elif code not in (EXIT_OK, EXIT_INFEASIBLE, EXIT_UNSOLVED):
        row["status"] = _FAILED.get(code, "error")
    if code != EXIT_OK and rep.first_error is not None:
        row["message"] = rep.first_error
    if rep.warnings:
        row["warnings"] = rep.warnings
    return row


def _artifact_row(name: str, one: dict[str, Any]) -> dict[str, Any]:
    """Status, cost and proof, read back from the artifact an input wrote."""
    if name == "run":
        path = Path(one["out_dir"]) / f"solve.{one.get('format', 'json')}"
    elif one.get("output"):
        path = Path(one["output"])
    else:
        return {}
    try:
        art = orjson.loads(path.read_bytes()) if path.suffix == ".json" else None
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(art, dict):
        return {}
    sec = art.get("solve") if isinstance(art.get("solve"), dict) else None
    row: dict[str, Any] = {"status": art.get("status")}
    if sec is not None:
        cost = sec.get("cost")
        row["cost"] = cost.get("total") if isinstance(cost, dict) else None
        row["proven"] = bool(sec.get("optimal"))
    return row


Task = tuple[str, dict[str, Any], Item, str, set[str], Callable[[str, dict[str, Any]], int]]


def _configured_values(
    name: str, v: dict[str, Any], item: Item, key: str, given: set[str]
) -> dict[str, Any]:
    """The one-input command's values for `item` with the configuration found from its
    own directory upwards (a problem of that file is this input's error)."""
    return _single_values(name, configured(command(name), {**v, key: item.path}, given), item, key)


def _one(task: Task) -> Outcome:
    """Run one input as its own command would, configured from its own directory, its
    stderr captured and its diagnostics in a report of its own."""
    name, v, item, key, given, handler = task
    one: dict[str, Any] = {}
    rep = report().for_input()

    def call() -> int:
        one.update(_configured_values(name, v, item, key, given))
        one.pop("debug", None)
        # `strict = true` in this input's configuration counts as --strict.
        rep.strict = bool(one.get("strict"))
        return _made(handler, name, one)

    t0 = time.perf_counter()
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as capture, reporting(rep):
        os.dup2(capture.fileno(), 2)
        try:
            guarded(bool(v.get("debug", False)), call, rep)
            code = EXIT_OK
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else EXIT_INTERNAL
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        capture.seek(0)
        messages = capture.read().decode("utf-8", "replace")
    gc.collect()  # `guarded` pauses the collector for one command; a worker runs many
    return Outcome(code, messages, _row(name, one, code, rep), time.perf_counter() - t0, rep)


def _made(handler: Callable[[str, dict[str, Any]], int], name: str, one: dict[str, Any]) -> int:
    """Run the handler, its output's folder made first: folders under --out-dir are the
    batch's own (a lone -o never creates one)."""
    if name != "run" and one.get("output"):
        Path(one["output"]).parent.mkdir(parents=True, exist_ok=True)
    return handler(name, one)


def run_batch(
    name: str,
    v: dict[str, Any],
    key: str,
    handler: Callable[[str, dict[str, Any]], int],
    given: set[str] | frozenset[str] = frozenset(),
) -> int:
    """Run command `name` on every input of `v[key]`, each configured from its own
    directory (`given`: the options the command line set); returns the worst exit code."""
    items, skipped = expand(v[key], name, v)
    if "output" in v and v.get("out_dir") is None:
        raise UsageError("several inputs need --out-dir DIR (one folder per input)")
    tasks: list[Task] = [(name, v, item, key, set(given), handler) for item in items]
    jobs = max(1, min(v.get("jobs") or os.cpu_count() or 1, len(tasks)))
    KEEPER.enabled = False  # a worker runs many inputs: keep none of them alive
    t0 = time.perf_counter()
    # The first input runs here: the modules its command needs (pydantic for a body,
    # the solvers) are then imported once, and every forked worker starts with them.
    outcomes = [_one(tasks[0])]
    rest = tasks[1:]
    if jobs == 1 or not rest:
        outcomes += [_one(t) for t in rest]
    else:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("fork")) as pool:
            outcomes += pool.map(_one, rest, chunksize=max(1, len(rest) // (jobs * 8)))
    wall = time.perf_counter() - t0
    rep = report()
    if rep.human and not v.get("quiet"):
        for s in skipped:
            sys.stderr.write(f"{s['input']}: skipped: {s['reason']}\n")
    for item, out in zip(items, outcomes, strict=True):
        rep.merge(out.report)
        if not (rep.human or v.get("debug")):
            continue  # a machine format has stderr: its records say it all
        for line in out.messages.splitlines():
            # Text lines name their file; machine formats carry it in every record.
            named = line.startswith(item.path)
            sys.stderr.write(line if named else f"{item.path}: {line}")
            sys.stderr.write("\n")
    rows = [
        {
            "input": item.path,
            **({"body": item.body} if item.body is not None else {}),
            "name": item.name,
            "exit": out.code,
            **out.row,
            "seconds": round(out.seconds, 3),
        }
        for item, out in zip(items, outcomes, strict=True)
    ]
    worst = max(out.code for out in outcomes)
    summary = {
        "command": name,
        "inputs": len(rows),
        "exit": worst,
        "jobs": jobs,
        "rows": rows,
        "skipped": skipped,
    }
    if v.get("out_dir"):
        write_output(
            orjson.dumps(summary, option=orjson.OPT_INDENT_2) + b"\n",
            str(Path(v["out_dir"]) / "summary.json"),
            parents=True,
        )
    if not v.get("quiet") and rep.human:
        sys.stderr.write(table(rows, wall, jobs, rep.strict))
    rep.counted = True  # the table's last line says how many warnings there were
    return worst


def table(rows: list[dict[str, Any]], wall: float, jobs: int, strict: bool = False) -> str:
    """The summary table, plain text (a log and a terminal read it alike).

    >>> print(table([{"input": "a.yaml", "exit": 0, "status": "ok", "cost": 4, "proven": True, "seconds": 0.1}], 0.2, 1), end="")
    input   exit  status  cost  proven  time
    a.yaml  0     ok      4     yes     0.100 s
    1 input, 1 ok, worst exit 0, 0.2 s wall on 1 job(s)
    >>> table([{"input": "a.yaml", "exit": 3, "warnings": 2, "seconds": 0.1}], 0.2, 1, True).splitlines()[-1]
    '1 input, 0 ok, worst exit 3, 0.2 s wall on 1 job(s), 2 warnings (--strict: exit 3)'
    """
    head = ["input", "exit", "status", "cost", "proven", "time"]
    body = [
        [
            r["input"] if r.get("body") is None else f"{r['input']} ({r['body']})",
            str(r["exit"]),
            str(r.get("status") or ("ok" if r["exit"] == 0 else "error")),
            "" if r.get("cost") is None else f"{r['cost']:g}",
            "" if "proven" not in r else ("yes" if r["proven"] else "no"),
            f"{r['seconds']:.3f} s",
        ]
        for r in rows
    ]
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=False)]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
        for line in [head, *body]
    ]
    ok = sum(1 for r in rows if r["exit"] == 0)
    worst = max((r["exit"] for r in rows), default=0)
    noun = "input" if len(rows) == 1 else "inputs"
    warnings = sum(r.get("warnings", 0) for r in rows)
    told = f", {plural(warnings, 'warning')}" if warnings else ""
    if told and strict:
        told += " (--strict: exit 3)"
    lines.append(
        f"{len(rows)} {noun}, {ok} ok, worst exit {worst}, {wall:.1f} s wall on {jobs} job(s){told}"
    )
    return "\n".join(lines) + "\n"
