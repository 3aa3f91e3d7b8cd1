"""`import sql --probe --forks K`: the probe run K times, each in a fresh process
(`engines/forks.py`), and its measurements pooled into one `Probe`.

Each process plans the query and probes it from scratch, its rounds in an order of
their own; the planner plans a query alike each time, and a process whose plan has
other nodes is the run's error (its times would be another plan's). Pooled: every
node's runs per engine (its subtree, its rest above it, the query as written) and its
hand-offs, in process order; an engine that failed at a node in any process has failed
there. The first process's plan, results and warnings stand for the others'.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from placement_cli.core.errors import PlacementError
from placement_cli.engines.probe import Probe, probe_query


def probe_in_process(i: int, kwargs: dict[str, Any]) -> Probe:
    """`probe_query(**kwargs)` as the `i`-th measuring process, its rounds in an order
    of their own (seed `i`)."""
    return probe_query(**kwargs, seed=i)  # type: ignore[no-any-return]


def pooled(probes: Sequence[Probe]) -> Probe:
    """The probes of one query by several processes as one (module doc)."""
    first = probes[0]
    shape = [(nid, n.op, n.children) for nid, n in first.plan.nodes.items()]
    for other in probes[1:]:
        if other.native != first.native or shape != [
            (nid, n.op, n.children) for nid, n in other.plan.nodes.items()
        ]:
            raise PlacementError(
                "the measuring processes planned the query differently: their times "
                "cannot be pooled (probe without --forks)"
            )
        for nid, node in other.nodes.items():
            first.nodes[nid].pool(node)
        for nid, rest in other.above.items():
            if nid in first.above:
                first.above[nid].pool(rest)
        if first.as_written is not None and other.as_written is not None:
            first.as_written.pool(other.as_written)
    first.forks = len(probes)
    return first
