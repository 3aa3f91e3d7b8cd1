"""The results of a `solve` (`placement_cli.algorithms.solve.driver`) that found no
assignment with a proof that none exists: `infeasible` (the search's or pruning's proof)
and `failed` (any proof, with its diagnostic)."""

from __future__ import annotations

from typing import Any

from placement_cli.algorithms.solve.complete import INF
from placement_cli.algorithms.solve.objective import UNASSIGNED
from placement_cli.algorithms.solve.result import SolveResult
from placement_cli.core.diagnostics import Diagnostic
from placement_cli.ir.graph import Graph


def infeasible(
    g: Graph,
    domains: tuple[int, ...],
    blocks: tuple[int, ...],
    why: str,
    method: str,
    used: str | None,
    stats: dict[str, Any],
    pins: str = "",
) -> SolveResult:
    ids = [g.block_ids[b] for b in blocks]
    if why == "empty":
        msg = f"no feasible placement: block '{ids[0]}' has no target left after pruning"
    elif not ids:
        msg = "no feasible placement (exhaustive search)"
    elif len(ids) == 1:
        msg = f"no feasible placement: block '{ids[0]}' has no target that fits its neighbours (exhaustive search)"
    else:
        msg = (
            f"no feasible placement: no assignment of the cycle {', '.join(ids)} fits its neighbours "
            f"(exhaustive search)"
        )
    code = "infeasible"
    if pins:
        code = "pin-infeasible"
        msg = msg.replace("no feasible placement", f"no feasible placement respects {pins}", 1)
    return failed(
        g,
        domains,
        Diagnostic("error", code, msg, tuple(ids)),
        method,
        used,
        "prune" if why == "empty" else used,
        stats,
    )


def failed(
    g: Graph,
    domains: tuple[int, ...],
    diag: Diagnostic,
    method: str,
    used: str | None,
    proved_by: str | None,
    stats: dict[str, Any],
) -> SolveResult:
    return SolveResult(
        assignment=(UNASSIGNED,) * g.n_blocks,
        status="infeasible",
        diagnostics=(diag,),
        cost=None,
        optimal=True,
        lower_bound=INF,
        domains=domains,
        method=method,
        method_used=used,
        proved_by=proved_by,
        lower_bound_by=None,
        stats=stats,
    )
