"""The handlers of `show`, `explain` and `diff` (their options: `app/commands.py`).

The views load when a command runs, so `placement --help` stays fast.
"""

from __future__ import annotations

import sys
from typing import Any

from placement_cli.algorithms.solve.options import SolveOptions
from placement_cli.app.console import report
from placement_cli.app.values import Common, lower_options, model_values
from placement_cli.core.errors import EXIT_DIFFERS, InputError, Problem, UsageError
from placement_cli.core.io import dumps, source_name, write_output
from placement_cli.pipeline.run import load
from placement_cli.views.data import prepare, run_to
from placement_cli.views.diff import diff as diff_artifacts
from placement_cli.views.diff_text import to_text as diff_text
from placement_cli.views.dot import to_dot
from placement_cli.views.execute import execute_diagram, execute_table, sniff_execute
from placement_cli.views.explain import ExplainOptions
from placement_cli.views.explain import explain as explain_block
from placement_cli.views.explain import to_text as explain_text
from placement_cli.views.mermaid import to_mermaid
from placement_cli.views.show import TABLES, render
from placement_cli.views.text import plain, rich_print
from placement_cli.views.tree_sniff import sniff


def _options(v: dict[str, Any]) -> dict[str, Any]:
    """The solve a view runs when its input has none: its `--time-limit`."""
    return {"solve": model_values(SolveOptions, v)}


def _warn(lines: list[str], quiet: bool) -> None:
    """A view's own remarks (a coarser diagram, an unproven figure): lines for people,
    kept off a stderr that a machine-readable report has to itself."""
    if not quiet and report().human:
        for line in lines:
            sys.stderr.write(f"warning: {line}\n")


def _write(text: str, output: str | None) -> None:
    write_output(text.encode(), output)


def show(name: str, v: dict[str, Any]) -> int:
    """Draw a placement: the CFG by target, the islands, or the island graph."""

    c = Common.of(v)
    view, fmt, output = v["view"], c.format, c.output
    tree_art, again = sniff(c.path)
    if tree_art is not None:
        return _show_tree(tree_art, v)
    report_doc = sniff_execute(v["path"])
    if report_doc is not None:
        return _show_execute(report_doc, v)
    with again:
        data = prepare(c.path, _options(v), lower_options(v), c.source)
    warnings = []
    if data.status == "infeasible":
        warnings.append("the plan has no feasible placement: blocks are drawn without targets")
    if fmt == "text":
        table = TABLES[view](data)
        if output is None and sys.stdout.isatty():
            rich_print(table)
        else:
            _write(plain(table), output)
    else:
        text, more = render(data, view, fmt)
        warnings += more
        _write(text, output)
    _warn(warnings, c.quiet)
    return 0


def _show_tree(art: Any, v: dict[str, Any]) -> int:
    """A tree artifact: the operator tree (every --view draws it)."""
    # Lazy: the tree DP and numpy (~95 ms, measured), only for a tree artifact.
    from placement_cli.views.tree import built_tree, operators, tree_input
    from placement_cli.views.tree_show import tree_diagram, tree_table

    c = Common.of(v)
    problem = tree_input(art, c.tree)
    tree = built_tree(art, problem)
    ops = operators(problem, tree)
    fmt, output = c.format, c.output
    warnings = []
    if v["view"] != "cfg":
        warnings.append(
            f"a tree artifact has one view, the operator tree: --view {v['view']} is ignored"
        )
    if art.doc.get("status") != "ok":
        warnings.append(
            f"the tree artifact is {art.doc.get('status')}: operators are drawn without engines"
        )
    if fmt == "text":
        table = tree_table(art, tree, ops)
        if output is None and sys.stdout.isatty():
            rich_print(table)
        else:
            _write(plain(table), output)
    elif fmt == "dot":
        _write(to_dot(tree_diagram(art, tree, ops)), output)
    else:
        _write(to_mermaid(tree_diagram(art, tree, ops))[0], output)
    _warn(warnings, c.quiet)
    return 0


def _show_execute(doc: dict[str, Any], v: dict[str, Any]) -> int:
    """An execute report: the executed tree (every --view draws it)."""
    fmt, output = v["format"], v["output"]
    if fmt == "text":
        table = execute_table(doc)
        if output is None and sys.stdout.isatty():
            rich_print(table)
        else:
            _write(plain(table), output)
    elif fmt == "dot":
        _write(to_dot(execute_diagram(doc)), output)
    else:
        _write(to_mermaid(execute_diagram(doc))[0], output)
    return 0


def explain(name: str, v: dict[str, Any]) -> int:
    """Why a block can or cannot run on each target, and the proven optimum if pinned there."""
    from pathlib import PurePath

    c = Common.of(v)
    loaded = load(c.path, lower_options(v), c.source)
    options = _options(v)
    run = run_to(loaded, "solve", options)
    ex = explain_block(run, v["block"], ExplainOptions(time_limit=options["solve"].time_limit))
    if c.format == "json":
        _write(dumps(ex).decode(), c.output)
    else:
        _write(explain_text(ex, run.g.name or PurePath(loaded.source).name), c.output)
    if any(r["pinned"] and not r["pinned"]["proven"] for r in ex["targets"]):
        _warn(
            ["some pinned optima are not proven within --time-limit; raise it for a proof"],
            c.quiet,
        )
    return 0


def diff(name: str, v: dict[str, Any]) -> int:
    """Compare two artifacts of the same stage. Exit 0 same, 7 different, 3 invalid input."""

    a, b = v["a"], v["b"]
    if a == "-" and b == "-":
        raise UsageError("only one of A and B can be standard input")
    ta, again_a = sniff(a)
    tb, again_b = sniff(b)
    if ta is not None and tb is not None:
        # Lazy: the tree DP and numpy (~105 ms, measured), only for trees.
        from placement_cli.views.tree_diff import tree_diff

        d = tree_diff(ta, tb)
    elif ta is not None or tb is not None:
        tree, other = (a, b) if ta is not None else (b, a)
        raise InputError(
            [
                Problem(
                    "kind",
                    f"{source_name(tree)} is a tree artifact and this is not: "
                    "diff compares two artifacts of the same stage",
                )
            ],
            source_name(other),
        )
    else:
        with again_a, again_b:  # standard input stays readable for the loader
            d = diff_artifacts(load(a), load(b))
    c = Common.of(v)
    if c.quiet:
        return 0 if d["same"] else EXIT_DIFFERS
    if c.format == "json":
        text = dumps(d).decode()
    elif d["kind"] == "tree":
        # Lazy: the tree DP and numpy (~95 ms, measured), only for a tree artifact.
        from placement_cli.views.tree_diff import tree_diff_text

        text = tree_diff_text(d)
    else:
        text = diff_text(d)
    _write(text, c.output)
    return 0 if d["same"] else EXIT_DIFFERS
