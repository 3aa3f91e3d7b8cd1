"""The state one solve shares between its parts (`placement_cli.algorithms.solve.driver`
and the warm start of `placement_cli.algorithms.solve.pins`): the graph, the domains, the
options, the instance, the budget, the stats and the warnings so far."""

from __future__ import annotations

from typing import Any

import msgspec

from placement_cli.algorithms.scc import SccResult
from placement_cli.algorithms.solve.budget import Budget
from placement_cli.algorithms.solve.instance import Instance
from placement_cli.algorithms.solve.options import SolveOptions
from placement_cli.core.diagnostics import Diagnostic
from placement_cli.ir.graph import Graph


class Ctx(msgspec.Struct):
    g: Graph
    domains: tuple[int, ...]  # what the search runs on (pruned, pinned)
    report_domains: tuple[int, ...]  # what the artifact lists per block (pruned)
    comps: SccResult
    opts: SolveOptions
    inst: Instance
    budget: Budget
    stats: dict[str, Any]
    warnings: list[Diagnostic]
    incumbent: tuple[int, ...] | None = None
    pins: str = ""
