"""`placement execute TREE_ARTIFACT --db FILE [--pg DSN]`: run a tree placement on the
real engines and report how far the prediction was from what happened
(`docs/execute.md`). Declared in `app/engine_commands.py`."""

from __future__ import annotations

import sys
from typing import Any

from placement_cli.app.console import stderr_is_terminal, warn_diagnostics
from placement_cli.app.engine_values import engine_options, need_sources
from placement_cli.core.errors import UsageError
from placement_cli.core.io import check_output, write_output
from placement_cli.formats.artifact import render

EXIT_MISMATCH = 8


def _tree_of(
    path: str, tree_file: str | None, budget: int | None, transfer: str | None
) -> tuple[Any, Any, Any, list[int] | None, Any]:
    """(the tree file as checked, the placed tree, its ops, the chosen assignment, the
    artifact's section or None for a tree file). The tree is the one that was placed:
    with the transfer profile the artifact names applied (`transfer`, else found by its
    recorded name), so `--all` runs the placements `tree` chose from."""
    # Lazy: the tree DP and numpy (~115 ms, measured; the tree file is read by msgspec),
    # only for `execute`; the typer commands all read this module (`app/cli.py`).
    from placement_cli.ir.tree.build import build_tree
    from placement_cli.ir.tree.options import TreeOptions
    from placement_cli.ir.tree.read import load_tree
    from placement_cli.pipeline.tree_artifact import tree_artifact
    from placement_cli.views.tree import (
        built_tree,
        operators,
        profile_of,
        tree_file_of,
        tree_input,
    )
    from placement_cli.views.tree_sniff import sniff

    _refuse_foreign(path)
    art, _ = sniff(path)
    if art is not None:
        profile = profile_of(art, transfer)
        if profile is not None:
            problem = _applied(tree_file_of(art, tree_file), profile)
        else:
            problem = tree_input(art, tree_file)
        tree = built_tree(art, problem)
        section = art.section
    else:
        problem = load_tree(path) if transfer is None else _applied(path, transfer)
        tree, _ = build_tree(problem)
        # A tree file is placed first: with its own budget, else --budget.
        budget = budget if problem.file.budget is None else None
        section = tree_artifact(problem, TreeOptions(budget=budget))[0]["tree"]
    eidx = {e: i for i, e in enumerate(tree.engines)}
    engines = section.get("engines") or {}
    chosen = None
    if engines and all(v in engines for v in tree.ids):
        chosen = [eidx[engines[v]] for v in tree.ids]
    return problem, tree, operators(problem, tree), chosen, section


def _refuse_foreign(path: str) -> None:
    """Exit 3 with one line saying what the file is when it is no tree file or tree
    artifact (a plan, a stage's artifact, an execute report), not the tree reader's
    field-by-field refusal of it."""
    # Lazy: the kinds' sniffing (~1 ms, measured), only for `execute`.
    from placement_cli.core.errors import InputError, Problem
    from placement_cli.core.io import read_bytes, source_name
    from placement_cli.pipeline.kinds import foreign

    line = foreign("tree", read_bytes(path))
    if line is not None:
        line = line.replace(
            "`placement tree` reads operator trees",
            "`placement execute` runs a tree placement (`placement tree` writes one) or a tree file",
        )
        raise InputError([Problem("", line)], source_name(path))


def _applied(path: str | None, profile: str) -> Any:
    """The tree file at `path` with the transfer profile applied, as `tree --transfer`
    placed it."""
    # Lazy: the profile's reader and pydantic (~130 ms, measured), only with a profile.
    from placement_cli.app.tree_transfer import load_applied

    assert path is not None
    return load_applied(path, profile)[0]


def command(name: str, v: dict[str, Any]) -> int:
    """Execute the placement(s); write the report; exit 8 when a result differs."""
    # Lazy: the engine registry (~4 ms, measured), only for `execute`; then every
    # engine's packages, imported to say at once which one is missing.
    from placement_cli.engines.registry import need_all

    need_all("execute")
    # Lazy: the engines' modules, the tree DP and numpy (~135 ms, measured), only
    # for `execute`, once `need` has checked the engines are installed.
    from placement_cli.engines import feedback
    from placement_cli.engines.connect import threads
    from placement_cli.engines.measure import execute_many
    from placement_cli.engines.placements import allowed
    from placement_cli.engines.plans import recorded_query, runner_for
    from placement_cli.engines.report import build, label

    opts = engine_options(v)
    for key in ("output", "result", "calibrate_out", "times_out", "tree_out"):
        check_output(v[key])  # before any engine runs: a long run never fails at its end
    if v["result"] and feedback.result_format(v["result"]) is None:
        # Checked before any engine runs: a long run must not end on a bad name.
        raise UsageError(
            f"--result {v['result']}: say the format by the name's ending "
            "(.arrow, .feather, .ipc, .parquet or .csv)"
        )
    if opts.db is None:
        raise UsageError("`placement execute` needs --db FILE (the DuckDB file with the tables)")
    need_sources(opts, (), "execute")
    problem, tree, ops, chosen, section = _tree_of(
        v["path"], v.get("tree"), v["budget"], v.get("transfer")
    )
    if v["sql"] is None and recorded_query(problem.file)[0] is None:
        raise UsageError(
            f"{problem.source}: the tree file records no query to run: give --sql FILE, or "
            "build the tree with `placement import sql --probe`"
        )
    ids, make_runner = runner_for(problem, tree, v["sql"])
    # --all: every placement the budget allows; else each single engine (and the chosen).
    assignments = list(allowed(tree, v["budget"] if v["all"] else 0))
    if chosen is not None and tuple(chosen) not in assignments:
        assignments.insert(0, tuple(chosen))

    def progress(i: int, o: Any) -> None:
        if not v["quiet"] and stderr_is_terminal():
            sys.stderr.write(
                f"[{i + 1}/{len(assignments)}] {label(tree, o.assignment)}: {o.status}\n"
            )

    ref, outcomes = execute_many(
        opts.sources(),
        tree,
        ids,
        assignments,
        make_runner,
        opts.repeat,
        opts.warmup,
        progress=progress,
        settings=opts.settings(),
    )
    art = build(
        tree,
        ops,
        ids,
        ref,
        outcomes,
        chosen,
        name=problem.file.name,
        input_ref=dict(section.get("input_ref") or problem.ref),
        budget=v["budget"] if v["all"] else None,
        all_=v["all"],
        repeat=opts.repeat,
        warmup=opts.warmup,
        threads=threads(tree.engines, opts.settings()),
    )
    write_output(render(art), v["output"])
    if v["result"]:
        pick = next(
            (o for o in outcomes if chosen is not None and o.assignment == tuple(chosen)), None
        )
        table = pick.runs[-1].table if pick is not None and pick.runs else ref.table
        write_output(feedback.table_bytes(table, v["result"]), v["result"])
    if v["calibrate_out"]:
        write_output(feedback.handoff_csv(tree, outcomes), v["calibrate_out"])
    if v["times_out"]:
        write_output(feedback.node_times_csv(tree, outcomes), v["times_out"])
    if v["tree_out"]:
        # Lazy: the tree file's Structs (~4 ms, measured), only for --tree-out.
        import orjson

        from placement_cli.formats.tree_structs import dump

        doc = dump(problem.file, exclude_defaults=True)
        times = {
            (n, e): s for n, e, _, s, _ in feedback.node_times(tree, outcomes) if s is not None
        }
        out = feedback.apply_node_times(doc, times)
        write_output(
            orjson.dumps(out, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE), v["tree_out"]
        )
    warn_diagnostics(art["diagnostics"], v["quiet"])
    if not v["quiet"] and stderr_is_terminal():
        # Lazy: the report's table and the section Structs (~30 ms, measured), only on a terminal.
        from placement_cli.views.execute import ranking_table
        from placement_cli.views.text import rich_print

        rich_print(ranking_table(art), stderr=True)
    return EXIT_MISMATCH if art["status"] == "mismatch" else 0
