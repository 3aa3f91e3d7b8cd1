"""The operator tree `placement tree` places, as the DP reads it: `read` (a tree file or
a `tree` artifact's input, parsed and type-checked into `formats.tree_structs`), `check`
(names resolved, one root, no cycle, no overflow: the indexed `TreeInput`), `build` (the tree under the
root, shared sub-plans rejected or duplicated, transfers as coefficient matrices) and
`model` (those indexed forms, the options and the limits). See `docs/tree.md`.
"""

from placement_cli.ir.tree.build import build_tree, tree_from_spec
from placement_cli.ir.tree.model import (
    INF,
    Explicit,
    Tree,
    TreeInput,
    TreeLimits,
    TreeOptions,
    children_first,
)
from placement_cli.ir.tree.read import load_tree, parse_tree

__all__ = [
    "INF",
    "Explicit",
    "Tree",
    "TreeInput",
    "TreeLimits",
    "TreeOptions",
    "build_tree",
    "children_first",
    "load_tree",
    "parse_tree",
    "tree_from_spec",
]
