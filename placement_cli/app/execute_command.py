"""`placement execute TREE_ARTIFACT --db FILE [--pg DSN]`: run a tree placement on the
real engines and report how far the prediction was from what happened
(`docs/execute.md`). Declared in `app/engine_commands.py`."""

from __future__ import annotations

import copy
import sys
from functools import partial
from typing import Any

from placement_cli.app.console import stderr_is_terminal, warn_diagnostics
from placement_cli.app.engine_values import engine_options, need_sources
from placement_cli.core.cache_modes import Caches
from placement_cli.core.diagnostics import Diagnostic
from placement_cli.core.errors import UsageError
from placement_cli.core.io import check_output, dumps, write_output
from placement_cli.formats.artifact import render

EXIT_MISMATCH = 8


def _tree_of(
    path: str, tree_file: str | None, budget: int | None, transfer: str | None
) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
    """(the tree file as checked, the placed tree, its ops, the chosen way or None, the
    tree artifact: the one given, or for a tree file the one `tree` makes of it). The
    tree is the one that was placed: with the transfer profile the artifact names
    applied (`transfer`, else found by its recorded name), so `--all` runs the
    placements `tree` chose from. The chosen way is the artifact's decision
    (`tree.decision`: a split, or a single-engine way, the query as written or the
    plan), else its placement."""
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
        doc = art.doc
    else:
        problem = load_tree(path) if transfer is None else _applied(path, transfer)
        tree, _ = build_tree(problem)
        # A tree file is placed first: with its own budget, else --budget.
        budget = budget if problem.file.budget is None else None
        doc = tree_artifact(problem, TreeOptions(budget=budget))[0]
    section = doc.get("tree")
    if not isinstance(section, dict):
        section = {}
    return problem, tree, operators(problem, tree), _chosen(tree, section), doc


def _chosen(tree: Any, section: dict[str, Any]) -> Any:
    """The way the artifact chose (`_tree_of`), or None when it names none this tree has."""
    # Lazy: the engines' modules (loaded by `command` before this runs: 0 ms, measured);
    # every typer command reads this module (`app/cli.py`).
    from placement_cli.engines.measure import Way

    eidx = {e: i for i, e in enumerate(tree.engines)}
    decision = section.get("decision")
    chosen = decision.get("chosen") if isinstance(decision, dict) else None
    if isinstance(chosen, dict) and chosen.get("kind") == "single":
        e = eidx.get(chosen.get("engine"))  # type: ignore[arg-type]
        if e is not None:
            return Way((e,) * tree.n, written=chosen.get("sql") == "as-written")
    engines = section.get("engines") or {}
    if isinstance(chosen, dict) and chosen.get("kind") == "split":
        engines = chosen.get("engines") or {}
    if engines and all(engines.get(v) in eidx for v in tree.ids):
        return Way(tuple(eidx[engines[v]] for v in tree.ids))
    return None


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


def _ways(
    tree: Any, problem: Any, v: dict[str, Any], chosen: Any, model: tuple[str, int]
) -> tuple[list[Any], int]:
    """What to run, and how many of them lead as single-engine ways: with --verify the
    candidates (`engines/verify.py`); else every single-engine way (the plan whole on
    each engine and the query as written where the probe ran it), with --all every
    split within the budget after them, and the chosen way first when it is not among
    them. Each placement of the plan is predicted under the artifact's latency `model`
    (model, cores)."""
    # Lazy: the tree DP and the engines' modules (loaded by `command` before this runs:
    # 0 ms, measured); every typer command reads this module (`app/cli.py`).
    from placement_cli.algorithms.tree.latency import latency, model_tree
    from placement_cli.engines.measure import Way
    from placement_cli.engines.placements import allowed, n_cuts
    from placement_cli.engines.verify import candidates, single_ways

    query = problem.file.query
    written = {} if query is None else {e: m.median for e, m in query.as_written.items()}
    if v["sql"] is not None:  # another query than the probe's: its measurements do not apply
        written = {}
    native = query is not None and query.native

    dp_tree, dp_model = model_tree(problem, tree, model[0])

    def cost(a: tuple[int, ...]) -> float:
        return latency(dp_tree, a, dp_model, model[1])

    def priced(ways: list[Any]) -> list[Any]:
        """The plan's ways with their latency under the artifact's model."""
        return [
            w if w.written else Way(w.assignment, predicted_ms=cost(w.assignment)) for w in ways
        ]

    # The placements the model prices are those it allows: `measured` on a tree probed
    # in-pipeline prices a cut by the probe's own runs, where the file may have no
    # transfer at all (`latency.measured_tree`); the other models allow what the file does.
    if v["verify"] is not None:
        ways = candidates(dp_tree, v["budget"], v["verify"], written, native, chosen, cost)
        return priced(ways), len(single_ways(tree, written, native))
    ways = single_ways(tree, written, native)
    singles = len(ways)
    if v["all"]:
        ways += [Way(a) for a in allowed(dp_tree, v["budget"]) if n_cuts(tree, a) > 0]
    if chosen is not None and chosen not in ways:
        ways.insert(0, chosen)
        singles += 1 if n_cuts(tree, chosen.assignment) == 0 else 0
    return priced(ways), singles


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
    from placement_cli.engines.machine import Meter
    from placement_cli.engines.measure import (
        RunStopped,
        execute_in_process,
        execute_many,
        pooled,
    )
    from placement_cli.engines.plans import NativeRunner, recorded_query, runner_for
    from placement_cli.engines.report import build, way_label
    from placement_cli.engines.verify import (
        EXTRA_ROUNDS,
        MIN_ROUNDS,
        contenders,
        decision,
        judge,
    )

    opts = engine_options(v)
    for key in ("output", "result", "calibrate_out", "times_out", "tree_out", "placed_out"):
        check_output(v[key])  # before any engine runs: a long run never fails at its end
    if v["placed_out"] is not None and v["verify"] is None:
        raise UsageError("--placed-out writes the decision of --verify: give --verify N too")
    if v["verify"] is not None and v["all"]:
        raise UsageError("--verify runs its own candidates: leave out --all")
    if v["result"] and feedback.result_format(v["result"]) is None:
        # Checked before any engine runs: a long run must not end on a bad name.
        raise UsageError(
            f"--result {v['result']}: say the format by the name's ending "
            "(.arrow, .feather, .ipc, .parquet or .csv)"
        )
    if opts.db is None:
        raise UsageError("`placement execute` needs --db FILE (the DuckDB file with the tables)")
    need_sources(opts, (), "execute")
    problem, tree, ops, chosen, tree_doc = _tree_of(
        v["path"], v.get("tree"), v["budget"], v.get("transfer")
    )
    section = tree_doc.get("tree") or {}
    sql = recorded_query(problem.file)[0]
    if v["sql"] is None and sql is None:
        raise UsageError(
            f"{problem.source}: the tree file records no query to run: give --sql FILE, or "
            "build the tree with `placement import sql --probe`"
        )
    ids, make_runner = runner_for(problem, tree, v["sql"])
    lm = section.get("latency_model")
    model = (lm["model"], lm["cores"]) if isinstance(lm, dict) else ("critical-path", 1)
    ways, singles = _ways(tree, problem, v, chosen, model)
    repeat, warmup = opts.repeat, opts.warmup
    if v["verify"] is not None:  # paired rounds need rounds, and a warm-up each
        repeat, warmup = max(repeat, MIN_ROUNDS), max(warmup, 1)

    def progress(i: int, o: Any) -> None:
        if not v["quiet"] and stderr_is_terminal():
            sys.stderr.write(f"[{i + 1}/{len(ways)}] {way_label(tree, o)}: {o.status}\n")

    def started(i: int, k: int) -> None:
        if not v["quiet"] and stderr_is_terminal():
            sys.stderr.write(f"measuring process {i + 1} of {k}\n")

    run: dict[str, Any] = {
        "sources": opts.sources(),
        "tree": tree,
        "node_ids": ids,
        "ways": ways,
        "make_runner": make_runner,
        "repeat": repeat,
        "warmup": warmup,
        "settings": opts.settings(),
        "written": None if sql is None else NativeRunner(sql),
        "more": None if v["verify"] is None else partial(contenders, singles=singles),
        "extra_rounds": EXTRA_ROUNDS,
    }
    meter = Meter.start()
    stopped = None
    try:
        if opts.forks > 1:  # each process from scratch: its reference, warm-ups, rounds
            # Lazy: the measuring processes (~4 ms, measured: multiprocessing), only
            # for `--forks`.
            from placement_cli.engines.forks import in_processes

            ref, outcomes = pooled(
                in_processes(opts.forks, execute_in_process, run, starting=started)
            )
        else:
            ref, outcomes = execute_many(**run, progress=progress)
    except RunStopped as exc:  # the report says what finished, then the run's error
        ref, outcomes, stopped = exc.ref, exc.outcomes, exc.error
    machine = meter.state()
    used = threads(tree.engines, opts.settings())
    labels = [way_label(tree, o) for o in outcomes]
    verify: dict[str, Any] | None = None
    adopted: int | None = None
    extra: list[Any] = []
    if v["verify"] is not None and stopped is None:
        verify, adopted, extra = judge(labels, outcomes, singles)
        verify["rounds"] = repeat * opts.forks
        # The rounds of every way run after the first `repeat` of each process, while
        # ways were still in question (`verify.contenders`).
        verify["extra_rounds"] = max(
            max((len(o.runs) for o in outcomes), default=0) - verify["rounds"], 0
        )
        verify["seconds"] = machine["seconds"]
        if adopted is not None:
            chosen = ways[adopted]
    art = build(
        tree,
        ops,
        ids,
        ref,
        outcomes,
        chosen,
        name=problem.file.name,
        input_ref=dict(section.get("input_ref") or problem.ref),
        budget=v["budget"] if v["all"] or v["verify"] is not None else None,
        all_=v["all"],
        repeat=repeat,
        warmup=warmup,
        threads=used,
        machine=machine,
        verify=verify,
        forks=opts.forks,
        caches=opts.caches,
    )
    art["diagnostics"] += [d.to_json() for d in extra]
    probed = problem.file.query.threads if problem.file.query else None
    differ = threads_differ(probed or {}, used)
    if differ is not None:
        art["diagnostics"].append(differ.to_json())
    cold = caches_differ(problem.file.query, opts.caches)
    if cold is not None:
        art["diagnostics"].append(cold.to_json())
    if machine["shared"]:
        art["diagnostics"].append(
            Diagnostic(
                "warning",
                "shared-cores",
                f"other processes used {machine['other_cores']:g} of the "
                f"{machine['cores']} cores on average while the placements were timed: "
                "the times are slower and noisier than on a quiet machine",
            ).to_json()
        )
    if stopped is not None:
        art["status"] = "stopped"
        art["diagnostics"].append(
            Diagnostic(
                "error",
                "run-stopped",
                f"the run stopped: {stopped}; the report holds what finished before",
            ).to_json()
        )
        write_output(render(art), v["output"])
        raise stopped
    write_output(render(art), v["output"])
    if v["placed_out"] is not None:
        final = copy.deepcopy(tree_doc)
        if adopted is not None and verify is not None:
            final["tree"]["decision"] = decision(tree, labels, outcomes, verify, adopted)
        # Lazy: the tree command's path rule (~1 ms, measured), only with --placed-out.
        from placement_cli.app.tree_command import recorded_path

        # Where the tree file is, seen from the new artifact's folder, as `tree` records
        # it (relative, `/`-separated: the same bytes wherever the project is).
        ref = final["tree"].setdefault("input_ref", {})
        where = recorded_path(v["path"], v["placed_out"], ref)
        ref.pop("path", None)
        if where is not None:
            ref["path"] = where
        write_output(dumps(final, "json"), v["placed_out"])
    if v["result"]:
        pick = next((o for o in outcomes if _is(o, chosen)), None)
        table = pick.runs[-1].table if pick is not None and pick.runs else ref.table
        write_output(feedback.table_bytes(table, v["result"]), v["result"])
    plan_ways = [o for o in outcomes if not o.written]  # the query as written has no nodes
    if v["calibrate_out"]:
        write_output(feedback.handoff_csv(tree, plan_ways), v["calibrate_out"])
    if v["times_out"]:
        write_output(feedback.node_times_csv(tree, plan_ways), v["times_out"])
    if v["tree_out"]:
        # Lazy: the tree file's Structs (~4 ms, measured), only for --tree-out.
        import orjson

        from placement_cli.formats.tree_structs import dump

        doc = dump(problem.file, exclude_defaults=True)
        times = {
            (n, e): s for n, e, _, s, _ in feedback.node_times(tree, plan_ways) if s is not None
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


def _is(o: Any, way: Any) -> bool:
    return way is not None and o.assignment == way.assignment and o.written == way.written


def threads_differ(probed: dict[str, int | None], used: dict[str, int | None]) -> Diagnostic | None:
    """A `threads-differ` warning when an engine runs with other threads (`used`) than
    the tree file says it was probed with (`probed`); engines either leaves to itself
    (None) are not compared."""
    odd = [
        f"{e} {probed[e]} (now {n})"
        for e, n in used.items()
        if n is not None and probed.get(e) is not None and probed[e] != n
    ]
    if not odd:
        return None
    return Diagnostic(
        "warning",
        "threads-differ",
        f"the tree's times were probed with other threads: {', '.join(odd)}; the "
        "predictions are not this run's times (give the probe's --threads)",
    )


def caches_differ(query: Any, used: Caches) -> Diagnostic | None:
    """A `caches-differ` warning when the runs start with other CPU caches (`used`) than
    the probe's timed runs did, as the tree file's `query` records them (a probed tree
    that records none was probed before the probe flushed them: warm). A tree whose
    times no probe measured (no `query.repeat`) is not compared."""
    if query is None or query.repeat is None:
        return None
    probed = query.caches or "warm"
    if probed == used:
        return None
    return Diagnostic(
        "warning",
        "caches-differ",
        f"the tree's times were probed with {probed} CPU caches, this run starts each "
        f"timed run {used}; the predictions are not this run's times (give the probe's "
        f"--caches)",
    )
