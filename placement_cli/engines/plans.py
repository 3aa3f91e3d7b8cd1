"""From a tree file to what runs its fragments: the query it was built from, its plan
(`engines/fragments.py`), and a `Runner` (`engines/runs.py`) over that plan.

The query is the one the tree file records (`import sql --probe`: its SQL and its
Substrait plan, loaded as recorded, so node ids are the same), or, for a tree file
that records none, the SQL of `--sql FILE`, planned again in DataFusion. Either way
the tree's nodes must be the plan's: every tree node a plan node (`n<plan_node>` where
the node records its `plan_node`, else its own id: `n0`, `n1`, ... in preorder) with the
same children, else it is a usage error naming the first
node that differs (running another plan's subtrees would time something else).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from placement_cli.core.errors import UsageError
from placement_cli.core.io import read_bytes
from placement_cli.engines.connect import Connections, canonical
from placement_cli.engines.fragments import build_plan, load_plan, prepare
from placement_cli.engines.runs import Runner
from placement_cli.ir.tree.model import Tree


def recorded_query(file: Any) -> tuple[str | None, dict[str, Any] | None]:
    """(SQL, Substrait plan) that a tree file records, each None when absent."""
    query = getattr(file, "query", None)
    if query is None:
        return None, None
    sql = getattr(query, "sql", None)
    plan = getattr(query, "substrait", None) or getattr(query, "plan", None)
    return sql, plan if isinstance(plan, dict) else None


class PlanRunner:
    """Runs fragments of one plan: each (node, engine, cut inputs) is prepared once (its
    SQL unparsed: not part of a timing), then run on the calling thread's connections."""

    def __init__(self, plan: Any) -> None:
        self.plan = plan
        self._prepared: dict[tuple[str, str, frozenset[str]], Any] = {}
        self._lock = threading.Lock()

    def __call__(
        self, conns: Connections, node: str, engine: str, inputs: Mapping[str, Any]
    ) -> Any:
        key = (node, engine, frozenset(inputs))
        with self._lock:
            frag = self._prepared.get(key)
        if frag is None:
            frag = prepare(conns, self.plan, node, engine, frozenset(inputs))
            with self._lock:
                self._prepared[key] = frag
        return dataclasses.replace(frag, conns=conns).run(inputs)


class NativeRunner:
    """Runs a native query (`query.native`: one node, the planner could not plan it) as
    written, on the engine asked for; it has no cut inputs."""

    def __init__(self, sql: str) -> None:
        self.sql = sql

    def __call__(
        self, conns: Connections, node: str, engine: str, inputs: Mapping[str, Any]
    ) -> Any:
        if inputs:
            raise ValueError("a native query has no inputs to cut")
        return canonical(conns.session(engine).sql(self.sql))


def node_ids(problem: Any, tree: Tree) -> list[str]:
    """The plan node each tree node is: `n<plan_node>` where the tree file records
    `plan_node` (`import sql --probe`), else the tree node's own id."""
    nodes = problem.file.nodes
    out = []
    for v in range(tree.n):
        pn = getattr(nodes[tree.origin[v]], "plan_node", None)
        out.append(f"n{pn}" if pn is not None else tree.ids[v])
    return out


def runner_for(problem: Any, tree: Tree, sql_file: str | None) -> tuple[list[str], MakeRunner]:
    """The plan node id of each tree node, and a function of the connections that loads
    the query's plan, checks that the tree is that plan's (module doc) and gives the
    runner."""
    sql, substrait = recorded_query(problem.file)
    if sql_file is not None:
        sql, substrait = read_bytes(sql_file).decode(), None
    if sql is None:
        raise ValueError(f"{problem.source}: the tree file records no query to run")
    ids = node_ids(problem, tree)
    native = getattr(problem.file.query, "native", False) and sql_file is None
    return ids, MakeRunner(tree, tuple(ids), sql, substrait, native, problem.source)


@dataclasses.dataclass(frozen=True)
class MakeRunner:
    """`runner_for`'s function of the connections: plain data, so that a measuring
    process of its own (`execute --forks`) can be handed it."""

    tree: Tree
    ids: tuple[str, ...]
    sql: str
    substrait: dict[str, Any] | None
    native: bool
    source: str

    def __call__(self, conns: Connections) -> Runner:
        if self.native:
            if self.tree.n != 1:
                raise UsageError(
                    f"{self.source}: a native query is one node, the tree has {self.tree.n}"
                )
            return NativeRunner(self.sql)
        plan = (
            build_plan(conns, self.sql)
            if self.substrait is None
            else load_plan(conns, self.sql, self.substrait)
        )
        same_tree(self.tree, self.ids, plan.nodes, self.source)
        return PlanRunner(plan)


def same_tree(tree: Tree, ids: Sequence[str], nodes: Mapping[str, Any], source: str) -> None:
    """A usage error unless every tree node (as plan node `ids[v]`) is a plan node whose
    children in the tree are its nearest descendants in the tree: its own children, or,
    through plan nodes the tree does not have (merged into their parent by the probe:
    no engine ran them alone), theirs."""
    present = set(ids)

    def nearest(nid: str) -> list[str]:
        out: list[str] = []
        stack = list(reversed(nodes[nid].children))
        while stack:
            c = stack.pop()
            if c in present or c not in nodes:
                out.append(c)
            else:
                stack.extend(reversed(nodes[c].children))
        return out

    for v in range(tree.n):
        node = nodes.get(ids[v])
        kids = [ids[u] for u in tree.children[v]]
        if node is None or nearest(ids[v]) != kids:
            have = "no such node" if node is None else f"children {list(node.children)}"
            raise UsageError(
                f"{source}: node {tree.ids[v]!r} (plan node {ids[v]}, children {kids}) "
                f"is not the query plan's ({have}): the tree was not built from this "
                "query's plan"
            )
