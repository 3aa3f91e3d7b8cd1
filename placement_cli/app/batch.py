"""Many inputs in one call: `placement run queries/ --out-dir out/ --jobs 4`.

A command whose input argument takes several paths (files or directories) runs its
one-input handler on each file, in parallel worker processes forked from this one (the
modules are imported once, not once per file as a shell loop would), and writes one
output folder per input under `--out-dir`: `OUT/NAME/` for `run`, `OUT/NAME/STAGE.json`
for a stage. Each input runs as the single-file command would: its own exit code, its
own messages (captured, and printed in input order after all are done, each line
prefixed with its file), and a broken file never stops the others or loses their
outputs. At the end: a summary table on stderr (input, exit, status, cost, proven,
time), `OUT/summary.json` for scripts, and the worst exit code of all.

Directories are searched recursively for `.yaml`, `.yml`, `.json` and `.mir` files,
in name order; inputs are taken in the order given.

>>> [i.name for i in expand_names(["a/q.body.yaml", "b/q.body.yaml", "c.mir"])]
['q', 'q-2', 'c']
"""

from __future__ import annotations

import gc
import os
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
from placement_cli.app.console import KEEPER, guarded
from placement_cli.core.errors import EXIT_INTERNAL, EXIT_OK, UsageError
from placement_cli.core.io import STDIN, write_output

SUFFIXES = (".yaml", ".yml", ".json", ".mir")
# Double extensions of our formats: `q.body.yaml` is the input named `q`.
_INNER = (".body", ".plan", ".tree")


@dataclass(frozen=True, slots=True)
class Item:
    """One input file and the name of its output folder."""

    path: str
    name: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one input gave: its exit code, its stderr, its summary row, its time."""

    code: int
    messages: str
    row: dict[str, Any]
    seconds: float


def _stem(path: str) -> str:
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


def expand(paths: list[str]) -> list[Item]:
    """The input files: each path as given, each directory's files in name order."""
    files: list[str] = []
    for p in paths:
        if p != STDIN and os.path.isdir(p):
            found = sorted(
                str(f) for f in Path(p).rglob("*") if f.is_file() and f.suffix in SUFFIXES
            )
            if not found:
                raise UsageError(f"{p}: no {', '.join(SUFFIXES)} files in this directory")
            files += found
        else:
            files.append(p)
    if files.count(STDIN) > 1 or (STDIN in files and len(files) > 1):
        raise UsageError("standard input (-) can only be the one input")
    return expand_names(files)


def _single_values(name: str, v: dict[str, Any], item: Item, key: str) -> dict[str, Any]:
    """The one-input command's values for `item`: its path, and its output inside the
    item's folder."""
    one = {**v, key: item.path}
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


def _row(name: str, one: dict[str, Any]) -> dict[str, Any]:
    """The summary of one finished input, read back from what it wrote."""
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
    stderr captured."""
    name, v, item, key, given, handler = task
    one: dict[str, Any] = {}

    def call() -> int:
        one.update(_configured_values(name, v, item, key, given))
        one.pop("debug", None)
        return handler(name, one)

    t0 = time.perf_counter()
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)
        try:
            guarded(bool(v.get("debug", False)), call, v.get("diagnostics", "text"))
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
    row = _row(name, one) if one else {}
    return Outcome(code, messages, row, time.perf_counter() - t0)


def run_batch(
    name: str,
    v: dict[str, Any],
    key: str,
    handler: Callable[[str, dict[str, Any]], int],
    given: set[str] | frozenset[str] = frozenset(),
) -> int:
    """Run command `name` on every input of `v[key]`, each configured from its own
    directory (`given`: the options the command line set); returns the worst exit code."""
    items = expand(v[key])
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
    plain = v.get("diagnostics", "text") == "text"
    for item, out in zip(items, outcomes, strict=True):
        for line in out.messages.splitlines():
            # Text lines name their file; machine formats carry it in every record.
            named = not plain or line.startswith(item.path)
            sys.stderr.write(line if named else f"{item.path}: {line}")
            sys.stderr.write("\n")
    rows = [
        {
            "input": item.path,
            "name": item.name,
            "exit": out.code,
            **out.row,
            "seconds": round(out.seconds, 3),
        }
        for item, out in zip(items, outcomes, strict=True)
    ]
    worst = max(out.code for out in outcomes)
    summary = {"command": name, "inputs": len(rows), "exit": worst, "jobs": jobs, "rows": rows}
    if v.get("out_dir"):
        write_output(
            orjson.dumps(summary, option=orjson.OPT_INDENT_2) + b"\n",
            str(Path(v["out_dir"]) / "summary.json"),
        )
    if not v.get("quiet"):
        sys.stderr.write(table(rows, wall, jobs))
    return worst


def table(rows: list[dict[str, Any]], wall: float, jobs: int) -> str:
    """The summary table, plain text (a log and a terminal read it alike).

    >>> print(table([{"input": "a.yaml", "exit": 0, "status": "ok", "cost": 4, "proven": True, "seconds": 0.1}], 0.2, 1), end="")
    input   exit  status  cost  proven  time
    a.yaml  0     ok      4     yes     0.100 s
    1 input, 1 ok, worst exit 0, 0.2 s wall on 1 job(s)
    """
    head = ["input", "exit", "status", "cost", "proven", "time"]
    body = [
        [
            r["input"],
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
    lines.append(
        f"{len(rows)} {noun}, {ok} ok, worst exit {worst}, {wall:.1f} s wall on {jobs} job(s)"
    )
    return "\n".join(lines) + "\n"
