"""`placement import FORMAT FILE... -o TREE`: a tree file for `placement tree` from what
engines printed about a query (docs/import.md), or from the query itself run on the
engines (`import sql --probe`, docs/probe.md). Declared in `app/engine_commands.py`.

`FORMATS` (there) names each format's reader (`module:function`, imported only when used):
`read(path, data, source, engine, values) -> Plan | list[Plan]` (the plans of
`frontends/engine_plans/model.py`; several for a reader that times one tree on several
engines); `engine` is the file's `--engine`, else the engine the format is named after
(`postgres-explain`: postgres), else None, and `values` every option of the call.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from placement_cli.app.console import say, warn_diagnostics
from placement_cli.app.engine_commands import FORMATS
from placement_cli.core.errors import EXIT_OK, InputError, Problem, UsageError
from placement_cli.core.io import (
    check_output,
    dumps,
    gc_paused,
    read_bytes,
    source_name,
    too_deep,
    write_output,
)
from placement_cli.core.limits import COUNT_MAX, Limits


def _reader(fmt: str) -> Any:
    module, _, func = FORMATS[fmt].partition(":")
    return getattr(importlib.import_module(module), func)


def _split(arg: str, default: str) -> tuple[str, str]:
    """(format, path) of a FILE argument: `FORMAT:PATH` when FORMAT is a known format."""
    head, sep, rest = arg.partition(":")
    if sep and head in FORMATS and rest:
        return head, rest
    return default, arg


def command(name: str, v: dict[str, Any]) -> int:
    """Read every file, line their plans up, write the tree file; exit 0, or 3 with the
    first problem (its JSON path) when a file is not what FORMAT says or the plans
    differ in shape."""
    # Lazy: the tree file's pydantic model and the plan readers (~150 ms, measured), only
    # for `import`; this module is read by every command (`app/commands.py`).
    from placement_cli.formats.tree import TreeFile
    from placement_cli.frontends.engine_plans.model import Plan
    from placement_cli.frontends.engine_plans.tree_file import check_same_shape, tree_document

    fmt = v["plan_format"]
    budget = v.get("budget")
    if budget is not None and budget > COUNT_MAX:
        # Written into the tree file: no larger than a file can hold (and `tree` reads).
        raise UsageError(f"--budget {budget}: at most {COUNT_MAX} (a tree file's largest count)")
    if fmt == "sql":
        return _probe(fmt, v)
    for flag, what in (("handoffs", "hand-offs"), ("in_pipeline", "each node's rest of the query")):
        if v.get(flag):
            raise UsageError(
                f"--{flag.replace('_', '-')} times {what} while probing: it goes with "
                "`import sql --probe`"
            )
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r:.60}; formats: {', '.join(FORMATS)}")
    files = [_split(a, fmt) for a in v["files"]]
    profile = _read_profile(v)
    named = list(v.get("engine") or [])
    if len(named) > len(files):
        raise UsageError(f"{len(named)} --engine given for {len(files)} file(s): one per file")
    plans: list[Plan] = []
    sources: list[str] = []
    for i, (f, path) in enumerate(files):
        engine = named[i] if i < len(named) else _engine_of(f)
        source = source_name(path)
        data = read_bytes(path)
        try:
            with gc_paused():  # a plan is a tree of small objects, all kept: nothing to collect
                got = _reader(f)(path, data, source, engine, v)
        except InputError as exc:
            raise _hinted(exc, f, path, data, source) from None
        for plan in got if isinstance(got, list) else [got]:
            plans.append(plan)
            sources.append(source)
    engines = [p.engine for p in plans]
    if not all(engines):
        raise UsageError(f"format {fmt!r} names no engine: give --engine NAME per file")
    twice = next((e for e in engines if engines.count(e) > 1), None)
    if twice is not None:
        raise UsageError(
            f"two files for engine {twice!r:.60}: give each file its own name with --engine"
        )
    check_same_shape(plans, sources)
    first = files[0][1]
    title = v.get("name") or ("stdin" if first == "-" else Path(first).stem)
    doc, applied = _with_profile(tree_document(plans, title, v.get("budget")), profile)
    try:
        TreeFile.model_validate(doc)  # what `placement tree` will read: never a broken file
    except Exception as exc:  # noqa: BLE001 - a bug of a reader, reported as one
        raise RuntimeError(f"import wrote a tree file `tree` would refuse: {exc}") from exc
    write_output(dumps(doc, v["format"]), v["output"])
    diags = [d for p in plans for d in p.diagnostics] + applied
    warn_diagnostics(
        [d for d in diags if d["severity"] != "info"], v["quiet"], v.get("diagnostics", "text")
    )
    say(_summary(plans), v["quiet"])
    return EXIT_OK


def _probe(fmt: str, v: dict[str, Any]) -> int:
    """`import sql --probe`: one query file, run on the engines; the tree file written."""
    # Lazy: the tree file's pydantic model (~115 ms, measured), only for `import`.
    from placement_cli.app.engine_values import engine_options, need_sources
    from placement_cli.formats.tree import TreeFile

    if len(v["files"]) != 1:
        raise UsageError(f"import {fmt} reads one query file, got {len(v['files'])}")
    if not v.get("probe"):
        raise UsageError(
            "import sql runs the query on the engines: give --probe --engines ... --db FILE"
        )
    opts = engine_options(v)
    check_output(v["output"])  # before any engine runs: a probe never fails at its end
    path = v["files"][0]
    profile = _read_profile(v)  # a profile that cannot be read stops it before the engines run
    # Lazy: the probe and the engine layer (~10 ms, measured), only for `import sql --probe`.
    from placement_cli.engines.connect import available
    from placement_cli.engines.probe import probe_query
    from placement_cli.engines.probe_tree import tree_document

    engines = opts.engines or available(opts.sources())
    if not engines:
        raise UsageError("--probe needs --engines and --db (and --pg for postgres)")
    need_sources(opts, engines, "import sql --probe")
    sql = read_bytes(path).decode("utf-8", errors="replace")
    # Lazy: the query's check (~0.3 ms, measured), only for `import sql --probe`.
    from placement_cli.engines.query_text import query_problem, statements

    wrong = query_problem(sql)
    if wrong is not None:
        # Checked before any engine sees it: the SQL runs as written on each (a server
        # among them), so nothing but one query may reach them.
        raise InputError([Problem("", wrong)], source_name(path))
    sql = statements(sql)[0].strip()
    run: dict[str, Any] = {
        "source": source_name(path),
        "sql": sql,
        "sources": opts.sources(),
        "settings": opts.settings(),
        "engines": engines,
        "repeat": opts.repeat,
        "warmup": opts.warmup,
        "handoffs": bool(v.get("handoffs")),
        "in_pipeline": bool(v.get("in_pipeline")),
    }
    if opts.forks > 1:
        # Lazy: the measuring processes (~4 ms, measured: multiprocessing), only for `--forks`.
        from placement_cli.engines.forks import in_processes
        from placement_cli.engines.probe_pool import pooled, probe_in_process

        def started(i: int, k: int) -> None:
            say(f"probing in process {i + 1} of {k}", v["quiet"])

        p = pooled(in_processes(opts.forks, probe_in_process, run, starting=started))
    else:
        p = probe_query(**run)
    doc = tree_document(p, v.get("name") or Path(path).stem, v.get("budget"))
    doc, applied = _with_profile(doc, profile)
    diags = [
        *(d.to_json() for d in p.diagnostics),
        *(d for d in applied if d["severity"] != "info"),
    ]
    if too_deep(doc, Limits().max_depth):
        # The readers' limit is what the writer can write: a plan nested deeper is refused
        # here, with its reason, rather than written into a file nothing reads back.
        raise InputError(
            [Problem("", f"the query's plan nests deeper than {Limits().max_depth} levels")],
            source_name(path),
        )
    TreeFile.model_validate(doc)  # what `placement tree` will read: never a broken file
    write_output(dumps(doc, v["format"]), v["output"])
    warn_diagnostics(diags, v["quiet"], v.get("diagnostics", "text"))
    timed = sum(1 for n in doc["nodes"] for t in n["time"].values() if t is not None)
    say(
        f"probed: {len(doc['nodes'])} operators on {', '.join(doc['engines'])}; "
        f"{timed} of {len(doc['nodes']) * len(doc['engines'])} node times measured",
        v["quiet"],
    )
    return EXIT_OK


def _read_profile(v: dict[str, Any]) -> tuple[Any, dict[str, str]] | None:
    """`--transfer PROFILE` read (exit 3 when it is not a transfer profile) with its
    `{name, sha256}`, else None."""
    if v.get("transfer") is None:
        return None
    # Lazy: the transfer profile's reader and pydantic (~130 ms, measured), only with --transfer.
    from placement_cli.frontends.calibrate.transfer import read_profile

    return read_profile(v["transfer"])


def _with_profile(
    doc: dict[str, Any], profile: tuple[Any, dict[str, str]] | None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """`doc` with the profile applied as `tree --transfer` applies it (its models
    replace `transfer.linear` for its engine pairs) and named in `transfer.profile`;
    what applying it found, as diagnostics. Without a profile, `doc` as it is."""
    if profile is None:
        return doc, []
    # Lazy: the transfer profile's reader and pydantic (~130 ms, measured), only with --transfer.
    from placement_cli.frontends.calibrate.transfer import apply_profile

    model, ref = profile
    applied = apply_profile(doc, model, ref)
    return applied.doc, [d.to_json() for d in applied.diagnostics]


def _hinted(exc: Any, fmt: str, path: str, data: bytes, source: str) -> Any:
    """`exc`, with one more line when the file looks like another format than `fmt`."""
    # Lazy: the engine plan readers (~2 ms, measured), only when a file is refused.
    from placement_cli.frontends.engine_plans.model import load, looks_like

    try:
        other = looks_like(load(path, data, source))
    except InputError:
        return exc
    if other is None or other == fmt:
        return exc
    hint = Problem("", f"this looks like {other}, not {fmt}: placement import {other} FILE")
    return InputError([*exc.problems, hint], source)


def _engine_of(fmt: str) -> str | None:
    """The engine a format's name starts with (`postgres-explain`: postgres), else None
    (a reader that times several engines names them itself)."""
    # Lazy: the engine registry (~1.5 ms, measured), only for a format named by engine.
    from placement_cli.engines.registry import NAMES

    head = fmt.split("-", 1)[0]
    return head if head in NAMES else None


def _summary(plans: list[Any]) -> str:
    parts = []
    for p in plans:
        unit = "cost units (estimated)" if p.estimated else "ms"
        parts.append(f"{p.engine} {sum(n.time for n in p.nodes):.6g} {unit}")
    return f"imported: {len(plans[0].nodes)} operators; " + ", ".join(parts)
