"""The `execute` report (`formats/execute.py`, `docs/execute.md`) from executed
placements: per fragment and per cut predicted against measured, the whole, the
ranking, Spearman's rank correlation, and the warnings a reader must not miss.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median
from typing import Any

from placement_cli.core.cache_modes import Caches
from placement_cli.core.diagnostics import Diagnostic
from placement_cli.core.io import num
from placement_cli.engines.measure import Outcome, Reference, Way
from placement_cli.engines.placements import parents, preorder
from placement_cli.engines.stats import ranks, spearman
from placement_cli.ir.tree.model import INF, Tree

LOW_SPEARMAN = 0.5


def spread(seconds: Sequence[float]) -> dict[str, Any] | None:
    """Milliseconds: median, min, max and every run (None without runs)."""
    if not seconds:
        return None
    ms = [s * 1000.0 for s in seconds]
    return {
        "median": _r(median(ms)),
        "min": _r(min(ms)),
        "max": _r(max(ms)),
        "runs": [_r(x) for x in ms],
    }


def _r(x: float) -> float:
    """Milliseconds to the microsecond."""
    return round(x, 3)


def label(tree: Tree, assignment: Sequence[int]) -> str:
    """`duckdb` for a single engine; else the root's engine, then each other fragment's
    root and engine in preorder: `duckdb; n4->datafusion`."""
    par = parents(tree)
    root_e = tree.engines[assignment[tree.root]]
    moves = [
        f"{tree.ids[v]}->{tree.engines[assignment[v]]}"
        for v in preorder(tree)
        if par[v] >= 0 and assignment[v] != assignment[par[v]]
    ]
    return "; ".join([root_e, *moves])


def way_label(tree: Tree, o: Outcome | Way) -> str:
    """`label`, and `duckdb (as written)` for the query as written on one engine."""
    if o.written:
        return f"{tree.engines[o.assignment[tree.root]]} (as written)"
    return label(tree, o.assignment)


def placement_report(
    tree: Tree, node_ids: Sequence[str], o: Outcome, chosen: bool
) -> dict[str, Any]:
    par = parents(tree)
    ok = o.status == "ok" and bool(o.runs)
    frs: list[dict[str, Any]] = []
    for i, f in enumerate(o.frags):
        runs = [r.fragments[i] for r in o.runs] if ok else []
        frs.append(
            {
                "root": tree.ids[f.root],
                "engine": tree.engines[f.engine],
                "nodes": [tree.ids[v] for v in f.nodes],
                "inputs": [tree.ids[u] for u in f.inputs],
                "predicted_ms": num(_r(o.predicted.fragments[i].fragment_ms)),
                "measured": spread([x.seconds for x in runs]),
                "rows": runs[-1].rows if runs else None,
                "bytes": runs[-1].nbytes if runs else None,
            }
        )
    cuts = []
    for i, f in enumerate(o.frags):
        if f.parent < 0:
            continue
        u, p = f.root, par[f.root]
        rows = frs[i]["rows"]
        nbytes = frs[i]["bytes"]
        cuts.append(
            {
                "child": tree.ids[u],
                "parent": tree.ids[p],
                "from_engine": tree.engines[o.assignment[u]],
                "to_engine": tree.engines[o.assignment[p]],
                "predicted_ms": num(_r(o.predicted.cuts[u])),
                "measured": spread(o.handoffs.get(u, [])),
                "rows": rows,
                "bytes": nbytes,
                "width": _r(nbytes / rows) if rows else (0.0 if rows == 0 else None),
                **({"error": o.handoff_errors[u]} if u in o.handoff_errors else {}),
            }
        )
    engines_used = {tree.engines[e] for e in o.assignment}
    return {
        "label": way_label(tree, o),
        "sql": "as-written" if o.written else "plan",
        "chosen": chosen,
        "single_engine": next(iter(engines_used)) if len(engines_used) == 1 else None,
        "engines": {tree.ids[v]: tree.engines[o.assignment[v]] for v in preorder(tree)},
        "cuts": cuts,
        "fragments": frs,
        "predicted_ms": num(_r(o.predicted.latency)),
        "measured": spread([r.seconds for r in o.runs]) if ok else None,
        "cpu": spread([r.cpu for r in o.runs]) if ok else None,
        "status": o.status,
        "error": o.error,
    }


def tree_nodes(tree: Tree, ops: Sequence[str]) -> list[dict[str, Any]]:
    out = []
    for v in preorder(tree):
        node: dict[str, Any] = {
            "id": tree.ids[v],
            "children": [tree.ids[u] for u in tree.children[v]],
            "time": {
                e: num(_r(t)) for e, t in zip(tree.engines, tree.time[v], strict=True) if t != INF
            },
        }
        if ops[v]:
            node["op"] = ops[v]
        out.append(node)
    return out


def build(
    tree: Tree,
    ops: Sequence[str],
    node_ids: Sequence[str],
    ref: Reference,
    outcomes: Sequence[Outcome],
    chosen: Way | None,
    *,
    name: str | None,
    input_ref: dict[str, str],
    budget: int | None,
    all_: bool,
    repeat: int,
    warmup: int,
    threads: dict[str, int | None] | None = None,
    machine: dict[str, Any] | None = None,
    verify: dict[str, Any] | None = None,
    forks: int = 1,
    caches: Caches | None = None,
) -> dict[str, Any]:
    """The whole artifact (its `status` is `mismatch` when any placement's rows differ
    from the reference); `threads`: each engine's (`connect.threads`); `machine`: the
    cores and load the runs shared (`machine_state`); `verify`: `execute --verify`'s
    evidence and decision (`engines/verify.py`); `forks`: the measuring processes whose
    runs were pooled (`engines/forks.py`), recorded when more than one; `caches`: the
    CPU caches each timed run started with (`engines/caches.py`)."""
    reps = [
        placement_report(
            tree,
            node_ids,
            o,
            chosen is not None
            and chosen.assignment == o.assignment
            and chosen.written == o.written,
        )
        for o in outcomes
    ]
    ran = [i for i, r in enumerate(reps) if r["measured"] is not None]
    # The model's predictions are of the plan's placements: a way as written carries
    # the probe's measurement, ranked with the measured times, not the predicted.
    modelled = [i for i in ran if not outcomes[i].written]
    pred = [reps[i]["predicted_ms"] for i in modelled]
    meas = [reps[i]["measured"]["median"] for i in modelled]
    rp, rm = ranks(pred), ranks([reps[i]["measured"]["median"] for i in ran])
    for j, i in enumerate(modelled):
        reps[i]["rank_predicted"] = int(rp[j]) if rp[j] == int(rp[j]) else None
    for j, i in enumerate(ran):
        reps[i]["rank_measured"] = int(rm[j]) if rm[j] == int(rm[j]) else None
    rho = spearman(pred, meas)
    singles = [i for i in ran if reps[i]["single_engine"] is not None]
    best_single = min(singles, key=lambda i: reps[i]["measured"]["median"], default=None)
    if best_single is not None:  # each way's rounds against the fastest single way's
        base = outcomes[best_single].runs
        for i in ran:
            if i != best_single:
                runs = outcomes[i].runs
                reps[i]["wins"] = sum(
                    1 for a, b in zip(runs, base, strict=False) if a.seconds < b.seconds
                )
    best_meas = min(ran, key=lambda i: reps[i]["measured"]["median"], default=None)
    best_pred = min(modelled, key=lambda i: reps[i]["predicted_ms"], default=None)
    chosen_i = next((i for i, r in enumerate(reps) if r["chosen"]), None)
    counts = {
        s: sum(1 for r in reps if r["status"] == s)
        for s in ("ok", "mismatch", "not-executable", "skipped")
    }
    chosen_rep = reps[chosen_i] if chosen_i is not None else None
    summary = {
        "chosen": chosen_rep["label"] if chosen_rep else None,
        "chosen_predicted_ms": chosen_rep["predicted_ms"] if chosen_rep else None,
        "chosen_measured_ms": (
            chosen_rep["measured"]["median"] if chosen_rep and chosen_rep["measured"] else None
        ),
        "best_single": reps[best_single]["label"] if best_single is not None else None,
        "best_single_ms": (
            reps[best_single]["measured"]["median"] if best_single is not None else None
        ),
        "best_measured": reps[best_meas]["label"] if best_meas is not None else None,
        "best_predicted": reps[best_pred]["label"] if best_pred is not None else None,
        "spearman": None if rho is None else round(rho, 4),
        "placements": len(reps),
        "executed": counts["ok"],
        "not_executable": counts["not-executable"],
        "mismatches": counts["mismatch"],
        "skipped": counts["skipped"],
    }
    diags = _diagnostics(reps, summary, best_pred, best_single, all_)
    section: dict[str, Any] = {
        "engines": list(tree.engines),
        "root": tree.ids[tree.root],
        "tree": tree_nodes(tree, ops),
        "all": all_,
        "repeat": repeat,
        "warmup": warmup,
        **({} if forks == 1 else {"forks": forks}),
        **({} if threads is None else {"threads": threads}),
        **({} if caches is None else {"caches": caches}),
        **({} if machine is None else {"machine": machine}),
        "order": "interleaved",
        "reference": {"engine": ref.engine, "rows": ref.rows, "ms": _r(ref.seconds * 1000)},
        "placements": reps,
        "summary": summary,
        "input_ref": input_ref,
    }
    if verify is not None:
        section["verify"] = verify
    if name is not None:
        section["name"] = name
    if budget is not None:
        section["budget"] = budget
    return {
        "format_version": 1,
        "kind": "execute",
        "status": "mismatch" if counts["mismatch"] else "ok",
        "diagnostics": [d.to_json() for d in diags],
        "execute": section,
    }


def _counted(reps: list[dict[str, Any]], status: str) -> str | None:
    """The first placement of `status` with its reason, and how many more there are."""
    hit = [r for r in reps if r["status"] == status]
    if not hit:
        return None
    more = f" (and {len(hit) - 1} more placement(s))" if len(hit) > 1 else ""
    return f"{hit[0]['label']}: {hit[0]['error']}{more}"


def _diagnostics(
    reps: list[dict[str, Any]],
    summary: dict[str, Any],
    best_pred: int | None,
    best_single: int | None,
    all_: bool,
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    # One diagnostic per kind, counting the placements, the first one's reason in full.
    wrong = _counted(reps, "mismatch")
    if wrong is not None:
        out.append(Diagnostic("error", "result-mismatch", wrong))
    failed = _counted(reps, "not-executable")
    if failed is not None:
        out.append(Diagnostic("warning", "not-executable", failed))
    rho = summary["spearman"]
    if all_ and rho is not None and rho < LOW_SPEARMAN:
        out.append(
            Diagnostic(
                "warning",
                "model-ranks-badly",
                f"the model ranks the placements badly: Spearman(predicted, "
                f"measured) = {rho:.2f} over {summary['executed']} placements (below "
                f"{LOW_SPEARMAN})",
            )
        )
    if best_pred is not None and best_single is not None and best_pred != best_single:
        bp, bs = reps[best_pred], reps[best_single]
        if bp["measured"]["median"] > bs["measured"]["median"]:
            out.append(
                Diagnostic(
                    "warning",
                    "predicted-best-loses",
                    f"the predicted best placement ({bp['label']}, "
                    f"{bp['measured']['median']:.1f} ms measured) is slower than the best "
                    f"single engine ({bs['label']}, {bs['measured']['median']:.1f} ms)",
                )
            )
    return out
