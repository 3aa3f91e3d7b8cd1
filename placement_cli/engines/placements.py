"""A placement of an operator tree as fragments, what the model predicts for each, and
every placement a cut budget allows. Pure: no engine is imported here.

A *fragment* is a maximal subtree on one engine: its root is the tree's root or a cut
child (a node on another engine than its parent), and it holds every node reachable
from its root without crossing a cut. Its *inputs* are the cut children directly under
its nodes: their fragments' results arrive as Arrow tables. Fragments are listed in
preorder of their roots (the root's fragment first), so a fragment's inputs always
come after it.

Predictions use the tree's own numbers (`algorithms/tree`): a fragment's predicted time
is the critical path inside it (self-times, the slowest child, its inputs counted 0), a
cut's the transfer model on the child's rows and width, the whole the DP's latency of
this assignment (`evaluate`).

>>> from placement_cli.ir.tree.build import tree_from_spec
>>> t = tree_from_spec(["a", "b"], [
...     {"id": "r", "children": ["x", "y"], "time": {"a": 1, "b": 1}},
...     {"id": "x", "time": {"a": 2, "b": 5}}, {"id": "y", "time": {"a": 4, "b": 1}}],
...     {"default": {"fixed": 3}})
>>> [(f.root, f.engine, f.nodes, f.inputs) for f in fragments(t, (0, 0, 1))]
[(0, 0, (0, 1), (2,)), (2, 1, (2,), ())]
>>> predicted(t, (0, 0, 1)).latency, [p.fragment_ms for p in predicted(t, (0, 0, 1)).fragments]
(5.0, [3.0, 1.0])
>>> [a for a in allowed(t, 1)]
[(0, 0, 0), (1, 1, 1), (0, 1, 0), (1, 0, 1), (0, 0, 1), (1, 1, 0)]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from placement_cli.algorithms.tree import evaluate
from placement_cli.ir.tree.model import INF, Tree


@dataclass(frozen=True, slots=True)
class Fragment:
    """`root` and `nodes` (tree node indices, preorder), `engine` (index), `inputs` (the
    cut children whose results it receives, in preorder), `parent` (index of the
    fragment it feeds, -1 for the root's)."""

    root: int
    engine: int
    nodes: tuple[int, ...]
    inputs: tuple[int, ...]
    parent: int


def parents(tree: Tree) -> list[int]:
    """Each node's parent (-1 for the root)."""
    out = [-1] * tree.n
    for v in range(tree.n):
        for u in tree.children[v]:
            out[u] = v
    return out


def preorder(tree: Tree) -> list[int]:
    """The nodes under the root, parents before children, children in their order."""
    out: list[int] = []
    stack = [tree.root]
    while stack:
        v = stack.pop()
        out.append(v)
        stack.extend(reversed(tree.children[v]))
    return out


def fragments(tree: Tree, assignment: Sequence[int]) -> list[Fragment]:
    """The fragments of `assignment` (engine index per node), root's first (module doc)."""
    order = preorder(tree)
    par = parents(tree)
    roots = [v for v in order if par[v] < 0 or assignment[par[v]] != assignment[v]]
    index = {r: i for i, r in enumerate(roots)}
    owner: dict[int, int] = {}
    out: list[Fragment] = []
    for r in roots:
        nodes: list[int] = []
        inputs: list[int] = []
        stack = [r]
        while stack:
            v = stack.pop()
            nodes.append(v)
            for u in reversed(tree.children[v]):
                if assignment[u] == assignment[v]:
                    stack.append(u)
        for v in nodes:
            owner[v] = index[r]
        pos = {v: i for i, v in enumerate(order)}
        for v in nodes:
            inputs.extend(u for u in tree.children[v] if assignment[u] != assignment[v])
        inputs.sort(key=pos.__getitem__)
        out.append(Fragment(r, assignment[r], tuple(nodes), tuple(inputs), -1))
    return [
        Fragment(
            f.root, f.engine, f.nodes, f.inputs, owner[par[f.root]] if par[f.root] >= 0 else -1
        )
        for f in out
    ]


@dataclass(frozen=True, slots=True)
class Predicted:
    """Per fragment the critical path inside it; per cut (child node -> ms) the transfer;
    `latency` the whole (the DP's value of this assignment)."""

    latency: float
    fragments: tuple[FragmentPrediction, ...]
    cuts: dict[int, float]


@dataclass(frozen=True, slots=True)
class FragmentPrediction:
    fragment_ms: float  # inside the fragment, its inputs counted 0
    subtree_ms: float  # the fragment's root's latency with everything under it


def predicted(tree: Tree, assignment: Sequence[int]) -> Predicted:
    """What the tree's model predicts for `assignment` (module doc)."""
    frags = fragments(tree, assignment)
    lat = evaluate(tree, assignment)
    inside = [0.0] * tree.n
    for v in reversed(preorder(tree)):
        e = assignment[v]
        worst = max(
            (inside[u] for u in tree.children[v] if assignment[u] == e),
            default=0.0,
        )
        inside[v] = tree.time[v][e] + worst
    cuts = {
        u: float(tree.matrix(u)[assignment[u], assignment[p]])
        for f in frags
        for u in f.inputs
        for p in [_parent_in(tree, f, u)]
    }
    return Predicted(
        lat[tree.root],
        tuple(FragmentPrediction(inside[f.root], lat[f.root]) for f in frags),
        cuts,
    )


def _parent_in(tree: Tree, f: Fragment, u: int) -> int:
    return next(v for v in f.nodes if u in tree.children[v])


def feasible(tree: Tree, assignment: Sequence[int]) -> bool:
    """Every node on an engine that runs it, every cut priced."""
    par = parents(tree)
    for v in range(tree.n):
        e = assignment[v]
        if tree.time[v][e] == INF:
            return False
        p = par[v]
        if p >= 0 and assignment[p] != e and tree.matrix(v)[e, assignment[p]] == INF:
            return False
    return True


def n_cuts(tree: Tree, assignment: Sequence[int]) -> int:
    par = parents(tree)
    return sum(1 for v in range(tree.n) if par[v] >= 0 and assignment[par[v]] != assignment[v])


def allowed(tree: Tree, budget: int) -> Iterator[tuple[int, ...]]:
    """Every feasible assignment with at most `budget` cuts, each once: the single-engine
    ones first (in engine order), then by number of cuts, the cut edges chosen in
    preorder of their children, engines in engine order."""
    order = preorder(tree)
    par = parents(tree)
    edges = [v for v in order if par[v] >= 0]
    n_e = len(tree.engines)
    for k in range(min(budget, len(edges)) + 1):
        for cut in itertools.combinations(edges, k):
            cut_set = set(cut)
            comp_roots = [tree.root, *cut]  # preorder, so a component's parent comes first
            for engines in itertools.product(range(n_e), repeat=len(comp_roots)):
                comp_engine = dict(zip(comp_roots, engines, strict=True))
                assignment = [0] * tree.n
                for v in order:
                    if v in comp_engine:
                        assignment[v] = comp_engine[v]
                    else:
                        assignment[v] = assignment[par[v]]
                if any(assignment[u] == assignment[par[u]] for u in cut_set):
                    continue  # fewer cuts than chosen: listed under its own set
                if feasible(tree, assignment):
                    yield tuple(assignment)
