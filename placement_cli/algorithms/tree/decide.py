"""The decision a probed tree supports: the model's best split, or the fastest
single-engine way as measured.

A tree written by `import sql --probe` holds measurements the DP does not read: the
whole query run on each engine as written (`query.as_written`) and the tool's plan run
whole on each engine (the root's `subtree`). Those are the single-engine ways, timed.
The DP's answer is a prediction of the model (self-times and fitted transfers), and
the model errs: how much is measured on the same tree, where the model's prediction of
"everything on engine e" can be set against the root's measured subtree on e.

The rule (docs/tree.md, "The decision"): with P the DP's predicted latency of its best
split (at least one cut), M the median of the fastest single-engine way, and the error
ε the largest relative error of the model on the measured single-engine ways plus the
fastest way's own spread ((max - min) / median), the split is chosen only when
`P * (1 + ε) < M`: even as wrong as the model was measured to be, it is faster.
Otherwise the fastest single-engine way is chosen. Without measured ways there is no
decision (a tree file written by hand: the DP's answer is the answer). Without a
measured error (no engine both predicted and measured), no split is chosen.

Pure: reads the checked input and the indexed tree, no engine runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from placement_cli.algorithms.tree.latency import latency
from placement_cli.core.io import num
from placement_cli.ir.tree.model import INF, Tree, TreeInput


def measured_ways(problem: TreeInput, tree: Tree) -> list[dict[str, Any]]:
    """Every measured single-engine way, in the tree's engine order, the query as
    written first: `{engine, sql: "as-written"|"plan", median, min, max, runs}` (ms)."""
    query = problem.file.query
    written = query.as_written if query is not None else {}
    root = problem.file.nodes[tree.origin[tree.root]]
    out: list[dict[str, Any]] = []
    for e in tree.engines:
        for sql, m in (("as-written", written.get(e)), ("plan", root.subtree.get(e))):
            if m is not None and (sql == "as-written" or not _native(problem)):
                out.append(
                    {
                        "engine": e,
                        "sql": sql,
                        "median": num(m.median),
                        "min": num(m.min),
                        "max": num(m.max),
                        "runs": m.runs,
                    }
                )
    return out


def _native(problem: TreeInput) -> bool:
    """A native query's one node is the query as written: its subtree is that way."""
    q = problem.file.query
    return q is not None and q.native


def model_errors(
    problem: TreeInput, tree: Tree, model: str = "critical-path", cores: int = 1
) -> dict[str, float]:
    """Per engine that the model predicts and the probe measured whole (the root's
    subtree on the tool's plan): |predicted - measured| / measured, in engine order;
    predicted by the latency `model` (`latency.py`)."""
    root = problem.file.nodes[tree.origin[tree.root]]
    out: dict[str, float] = {}
    for e, name in enumerate(tree.engines):
        m = root.subtree.get(name)
        if m is None or m.median <= 0 or any(tree.time[v][e] == INF for v in range(tree.n)):
            continue
        predicted = latency(tree, [e] * tree.n, model, cores)
        out[name] = abs(predicted - m.median) / m.median
    return out


def decide(
    problem: TreeInput,
    tree: Tree,
    assignment: Sequence[int],
    predicted: float,
    cuts: int,
    model: str = "critical-path",
    cores: int = 1,
) -> dict[str, Any] | None:
    """The decision section (module doc) for the DP's answer (`assignment`, its
    `predicted` latency under the latency `model` and its `cuts`), or None when the
    tree holds no measured way."""
    ways = measured_ways(problem, tree)
    if not ways:
        return None
    fastest = min(ways, key=lambda w: w["median"])  # the first of equals: input order
    errors = model_errors(problem, tree, model, cores)
    spread = (fastest["max"] - fastest["min"]) / fastest["median"] if fastest["median"] else 0.0
    error = max(errors.values()) + spread if errors else None
    section: dict[str, Any] = {
        "rule": "model",
        "ways": ways,
        "fastest": {"engine": fastest["engine"], "sql": fastest["sql"]},
        "model_error": {k: round(v, 4) for k, v in errors.items()},
        "error": None if error is None else round(error, 4),
    }
    split = cuts > 0 and predicted != INF
    if split:
        section["split"] = {"predicted": num(predicted), "cuts": cuts}
    if not split:
        why = "the model's best placement has no cut"
        chosen = False
    elif error is None:
        why = "no engine was both predicted and measured whole, so the model's error is unknown"
        chosen = False
    else:
        bound = predicted * (1 + error)
        section["split"]["bound"] = num(round(bound, 6))
        chosen = bound < fastest["median"]
        why = (
            f"the split's predicted {_ms(predicted)} ms, even {error:.0%} slower, "
            + ("beats" if chosen else "does not beat")
            + f" the fastest single-engine way's measured {_ms(fastest['median'])} ms"
        )
    section["chosen"] = (
        {
            "kind": "split",
            "engines": {tree.ids[v]: tree.engines[assignment[v]] for v in range(tree.n)},
        }
        if chosen
        else {"kind": "single", "engine": fastest["engine"], "sql": fastest["sql"]}
    )
    section["reason"] = why
    return section


def _ms(x: float) -> str:
    return f"{x:.3g}"
