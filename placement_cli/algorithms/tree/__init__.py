"""`tree`: place the operators of a query-plan tree on engines under a cut budget.

The seed (appendix A1, critical-path DP): `dp[v][e][k]` is the least latency of v's
subtree with v on engine e and at most k cross-engine edges ("cuts") inside it. Sibling
subtrees run in parallel, so children combine with MAX; a cut edge adds the transfer of
the child's output to that child's branch. The answer is `min_e dp[root][e][K]`.

The pass in parts, each its own module: `load` (read and check a tree file; the
indexed forms are in `model`), `build` (the tree under the root, shared sub-plans
duplicated on request), `dp` (the DP over the tree, with the per-node operations in
`minmax`), `rebuild` (the argmin rebuild) and `report` (the artifact). See `docs/tree.md`.
"""

from placement_cli.algorithms.tree.build import build_tree, tree_from_spec
from placement_cli.algorithms.tree.dp import DPState, fast_dp
from placement_cli.algorithms.tree.load import load_tree, parse_tree
from placement_cli.algorithms.tree.minmax import fold, lift, merge_minmax, split_minmax, trim
from placement_cli.algorithms.tree.model import (
    INF,
    Explicit,
    Placement,
    Tree,
    TreeInput,
    TreeLimits,
    TreeOptions,
    at,
    children_first,
)
from placement_cli.algorithms.tree.rebuild import place
from placement_cli.algorithms.tree.report import critical_path, cut_edges, evaluate, tree_artifact
from placement_cli.formats.tree import TreeFile

__all__ = [
    "INF",
    "DPState",
    "Explicit",
    "Placement",
    "Tree",
    "TreeFile",
    "TreeInput",
    "TreeLimits",
    "TreeOptions",
    "at",
    "build_tree",
    "children_first",
    "critical_path",
    "cut_edges",
    "evaluate",
    "fast_dp",
    "fold",
    "lift",
    "load_tree",
    "merge_minmax",
    "parse_tree",
    "place",
    "split_minmax",
    "tree_artifact",
    "tree_from_spec",
    "trim",
]
