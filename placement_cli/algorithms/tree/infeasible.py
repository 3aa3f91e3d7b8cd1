"""Why no placement exists: a node no engine runs, a child whose engines cannot reach
its parent's at any budget, or the least number of cuts a placement needs."""

from __future__ import annotations

from placement_cli.core.diagnostics import Diagnostic
from placement_cli.ir.tree.model import INF, Tree, children_first


def why_infeasible(tree: Tree, budget: int) -> list[Diagnostic]:
    """Name the cause: a node no engine runs; else a child whose engines cannot reach its
    parent's at any budget; else the least number of cuts a placement needs."""
    n_e = len(tree.engines)
    out: list[Diagnostic] = []
    seen: set[int] = set()
    for v in range(tree.n):
        o = tree.origin[v]
        if all(t == INF for t in tree.time[v]) and o not in seen:
            seen.add(o)
            out.append(
                Diagnostic(
                    "error",
                    "unsupported-node",
                    f"no engine can run node '{tree.ids[v]}': its time is missing or null for every engine",
                    (tree.ids[v],),
                )
            )
    if out:
        return out
    # cuts[v][e]: the fewest cuts placing v's subtree with v on e (INF: impossible).
    cuts: list[list[float]] = [[] for _ in range(tree.n)]
    origins: list[tuple[int, int]] = []  # (node, child to blame or -1)
    for v in children_first(tree):
        row = [0.0 if t < INF else INF for t in tree.time[v]]
        blame = -1
        for u in tree.children[v]:
            cu = cuts[u]
            tr = tree.transfer(u)
            reach = False
            for e in range(n_e):
                if row[e] == INF:
                    continue
                c = min(
                    [cu[e]] + [cu[s] + 1 for s in range(n_e) if s != e and tr[s * n_e + e] < INF]
                )
                row[e] = row[e] + c
                reach = reach or c < INF
            if not reach and blame < 0 and min(cu) < INF:
                blame = u
        if min(row) == INF and all(min(cuts[u]) < INF for u in tree.children[v]):
            origins.append((v, blame))
        cuts[v] = row
    for v, u in sorted(origins):
        runs = [tree.engines[e] for e in range(n_e) if tree.time[v][e] < INF]
        if u >= 0:
            can = [tree.engines[e] for e in range(n_e) if cuts[u][e] < INF]
            msg = (
                f"no placement at any budget: child '{tree.ids[u]}' can only run on {', '.join(can)} and no transfer "
                f"leads from there to an engine that runs its parent '{tree.ids[v]}' ({', '.join(runs)})"
            )
            out.append(Diagnostic("error", "no-transfer", msg, (tree.ids[u], tree.ids[v])))
        else:
            msg = f"no placement at any budget: no engine that runs node '{tree.ids[v]}' ({', '.join(runs)}) can receive all of its children"
            out.append(Diagnostic("error", "no-transfer", msg, (tree.ids[v],)))
    if out:
        return out
    need = int(min(cuts[tree.root]))
    return [
        Diagnostic(
            "error",
            "budget-too-small",
            f"every placement needs at least {need} cut(s) but the budget is {budget} (pass --budget {need})",
            (),
            {"min_budget": need},
        )
    ]
