"""`tree`: place the operators of a query-plan tree on engines under a cut budget.

The seed (appendix A1, critical-path DP): `dp[v][e][k]` is the least latency of v's
subtree with v on engine e and at most k cross-engine edges ("cuts") inside it. Sibling
subtrees run in parallel, so children combine with MAX; a cut edge adds the transfer of
the child's output to that child's branch. The answer is `min_e dp[root][e][K]`.

Pure functions on the indexed tree (`placement_cli.ir.tree`, which reads, checks and
builds it), each part its own module: `dp` (the DP over the tree, with the per-node
operations in `minmax`), `rebuild` (the argmin rebuild and the answer, `Placement`),
`measure` (a placement's latencies, critical path and cuts) and `infeasible` (why no
placement exists). The artifact is built in `placement_cli.pipeline.tree_artifact`.
See `docs/tree.md`.
"""

from placement_cli.algorithms.tree.dp import DPState, fast_dp
from placement_cli.algorithms.tree.infeasible import why_infeasible
from placement_cli.algorithms.tree.measure import critical_path, cut_edges, evaluate
from placement_cli.algorithms.tree.minmax import at, fold, lift, merge_minmax, split_minmax, trim
from placement_cli.algorithms.tree.rebuild import Placement, place

__all__ = [
    "DPState",
    "Placement",
    "at",
    "critical_path",
    "cut_edges",
    "evaluate",
    "fast_dp",
    "fold",
    "lift",
    "merge_minmax",
    "place",
    "split_minmax",
    "trim",
    "why_infeasible",
]
