"""A query's relational plan as a tree of nodes, and running any subtree of it on any engine.

Contract:

- `build_plan(conns, sql)` plans `sql` once, in DataFusion (its optimized logical plan),
  and keeps it as a Substrait plan (DataFusion's producer, as JSON: no extra package).
  Its nodes are the Substrait relations in preorder: `n0` is the root, a node's children
  are its inputs in order (`input`, or `left` then `right`, or `inputs`). Each has an
  `op` (`read(lineitem)`, `join(inner)`, `aggregate`, `project`, `filter`, `sort`,
  `fetch`, ...) and its output column names (DataFusion's; the root's are the query's).
  `load_plan(conns, sql, substrait)` rebuilds the same `Plan` from what `Plan.substrait`
  recorded (the same node ids), without planning again: a tree file keeps it.
- `run_subtree(conns, plan, node_id, engine, inputs)` runs the subtree rooted at
  `node_id` on `engine` (an engine of `engines/registry.py`, by name) and returns its
  result as a pyarrow Table in the canonical schema (`connect.canonical`), columns
  named as the node's output. Every node id in `inputs` must be in that subtree (not
  its root): it is a cut child whose result is the given Arrow table (columns by
  position, as the node outputs them), so its own subtree is not run. `prepare` does
  the same work split in two: everything that does not depend on the data (building
  the fragment, turning it into SQL) once, then `PreparedFragment.run(inputs)`, which is what a
  timing should measure.
- The planner (`registry.PLANNER`: DataFusion, the engine without a SQL dialect) runs
  its own plan: the Substrait relations, consumed back with the cut children read from
  registered tables. Every other engine gets SQL from DataFusion's unparser
  (`datafusion.unparser`, in the engine's `dialect`): each node is unparsed on its own,
  over its children as named tables, and the nodes are chained as common table
  expressions (a whole subtree unparsed at once loses the qualifiers of derived tables
  and does not bind). Such a fragment is re-planned by its engine (`PreparedFragment.replanned`
  is the engine's `replans`, and `PreparedFragment.sql` is what it ran): its join order and
  costs are that engine's own, not DataFusion's. Its inputs are made tables of the
  engine for the run (`Session.run_with`) and dropped after it.
- Errors (an unparser or engine error) propagate as the engine's exception; a caller
  that tolerates an engine that cannot run a node catches `Exception` and reports it.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from placement_cli.engines.connect import Connections, canonical
from placement_cli.engines.registry import PLANNER, engine
from placement_cli.engines.require import need

# Substrait relation fields that hold the relation's inputs, in child order.
_ONE_INPUT = ("input", "left", "right")
_counter = itertools.count()
# Relations whose output columns are their input's, in the same order.
_PASS_THROUGH = frozenset({"sort", "fetch"})
_lock = threading.Lock()
# The constant column a node without columns selects in generated SQL (`_snippet`).
NO_COLUMN = "__placement_no_column"
# Held while DataFusion's context holds the placeholder tables of a snippet being written.
_planning = threading.RLock()


def new_token() -> str:
    """A name prefix no other plan of this process uses (tables are registered per name)."""
    with _lock:
        return f"__plc{os.getpid()}_{next(_counter)}"


def _kind(rel: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    ((kind, body),) = rel.items()
    return kind, body


def _inputs(rel: Mapping[str, Any]) -> list[dict[str, Any]]:
    _, body = _kind(rel)
    return [body[k] for k in _ONE_INPUT if k in body] + list(body.get("inputs", []))


def _replace_inputs(rel: dict[str, Any], new: list[dict[str, Any]]) -> None:
    _, body = _kind(rel)
    it = iter(new)
    for k in _ONE_INPUT:
        if k in body:
            body[k] = next(it)
    if "inputs" in body:
        body["inputs"] = list(it)


def _op(rel: Mapping[str, Any]) -> str:
    kind, body = _kind(rel)
    if kind == "read":
        names = body.get("namedTable", {}).get("names") or ["?"]
        return f"read({'.'.join(names)})"
    if kind == "join":
        jt = str(body.get("type", "JOIN_TYPE_INNER")).removeprefix("JOIN_TYPE_").lower()
        return f"join({jt})"
    return kind


@dataclass(frozen=True)
class PlanNode:
    """One relation of the plan: `id` (`n<preorder>`), `op`, child ids, output names."""

    id: str
    op: str
    children: tuple[str, ...]
    columns: tuple[str, ...]


@dataclass
class Plan:
    """A query planned once: its SQL, the Substrait plan, and its nodes in preorder."""

    sql: str
    substrait: dict[str, Any]
    nodes: dict[str, PlanNode]
    token: str
    rels: dict[str, dict[str, Any]] = field(repr=False)
    _snippets: dict[tuple[str, str, bool], str] = field(default_factory=dict, repr=False)

    @property
    def root(self) -> str:
        return "n0"

    def subtree(self, node_id: str, stop: frozenset[str] = frozenset()) -> Iterator[str]:
        """The ids of `node_id`'s subtree in preorder, not descending below `stop`."""
        stack = [node_id]
        while stack:
            n = stack.pop()
            yield n
            if n not in stop:
                stack.extend(reversed(self.nodes[n].children))

    def table_name(self, node_id: str) -> str:
        """The name node `node_id`'s output has in generated SQL and registrations."""
        return f"{self.token}_{node_id}"

    def column_names(self, node_id: str) -> list[str]:
        """Unique positional column names of a node's output in generated SQL."""
        return [f"{node_id}_c{i}" for i in range(len(self.nodes[node_id].columns))]


def build_plan(conns: Connections, sql: str) -> Plan:
    """Plan `sql` in DataFusion (optimized logical plan) and number its relations."""
    (substrait,) = need("import", "datafusion.substrait")
    ctx = conns.session(PLANNER).handle
    logical = ctx.sql(sql).optimized_logical_plan()
    if "null_aware" in logical.display_indent():
        # A NOT IN's anti join must return nothing when the subquery holds a NULL:
        # Substrait has no flag for it, and the plan read back would return rows.
        raise ValueError("a NOT IN (a null-aware anti join), which a Substrait plan cannot carry")
    plan_json = json.loads(substrait.Producer.to_substrait_plan(logical, ctx).to_json())
    return load_plan(conns, sql, _in_anchor_order(plan_json))


def _in_anchor_order(plan_json: dict[str, Any]) -> dict[str, Any]:
    """The plan with its extension declarations in the order of their anchors.

    DataFusion's producer lists them from a hash map, in another order on every run, so
    the same query gave other bytes from one process to the next. Relations refer to
    the declarations by anchor, never by position: the order carries no meaning.

    >>> p = {"extensions": [{"extensionFunction": {"functionAnchor": 2, "name": "and"}},
    ...                     {"extensionFunction": {"name": "gte"}}]}
    >>> [e["extensionFunction"]["name"] for e in _in_anchor_order(p)["extensions"]]
    ['gte', 'and']
    """

    def anchor(decl: dict[str, Any]) -> tuple[str, int]:
        # One key per declaration (`extensionFunction`, `extensionType`, ...); an anchor
        # of 0 is left out of the JSON.
        (kind, body), *_ = decl.items()
        return kind, next((v for k, v in body.items() if k.endswith("Anchor")), 0)

    out = dict(plan_json)
    for key in ("extensionUris", "extensionUrns"):
        if key in out:
            out[key] = sorted(out[key], key=lambda d: d.get(key[:-1] + "Anchor", 0))
    if "extensions" in out:
        out["extensions"] = sorted(out["extensions"], key=anchor)
    return out


def load_plan(conns: Connections, sql: str, plan_json: dict[str, Any]) -> Plan:
    """The `Plan` of a recorded Substrait plan (`Plan.substrait`), nodes numbered again
    the same way."""
    relations = plan_json.get("relations") or []
    if len(relations) != 1 or "root" not in relations[0]:
        raise ValueError("the Substrait plan must have exactly one root relation")
    root = relations[0]["root"]
    rels: dict[str, dict[str, Any]] = {}
    children: dict[str, tuple[str, ...]] = {}

    # Preorder numbering without recursion: plans can be deep.
    counter = itertools.count()
    order: list[tuple[dict[str, Any], str]] = []
    stack = [root["input"]]
    ids: dict[int, str] = {}
    while stack:
        rel = stack.pop()
        nid = f"n{next(counter)}"
        ids[id(rel)] = nid
        rels[nid] = rel
        order.append((rel, nid))
        stack.extend(reversed(_inputs(rel)))
    for rel, nid in order:
        children[nid] = tuple(ids[id(c)] for c in _inputs(rel))

    plan = Plan(sql=sql, substrait=plan_json, nodes={}, token=new_token(), rels=rels)
    root_names = tuple(root.get("names") or ())
    for rel, nid in order:
        if nid == "n0" and root_names:
            cols = root_names
        else:
            cols = tuple(f.name for f in _datafusion_frame(conns, plan, rel, None).schema())
        plan.nodes[nid] = PlanNode(nid, _op(rel), children[nid], cols)
    if root_names and len(root_names) != len(
        _datafusion_frame(conns, plan, rels["n0"], None).schema()
    ):
        # Nested types name their fields too: the root's names are then not its columns.
        cols = tuple(f.name for f in _datafusion_frame(conns, plan, rels["n0"], None).schema())
        plan.nodes["n0"] = PlanNode("n0", plan.nodes["n0"].op, children["n0"], cols)
    return plan


def _datafusion_frame(
    conns: Connections, plan: Plan, rel: dict[str, Any], names: list[str] | None
) -> Any:
    """A DataFusion DataFrame of one relation (with its root named `names` if given)."""
    (substrait,) = need("import", "datafusion.substrait")
    ctx = conns.session(PLANNER).handle
    whole = dict(plan.substrait)
    whole["relations"] = (
        [{"rel": rel}] if names is None else [{"root": {"input": rel, "names": names}}]
    )
    logical = substrait.Consumer.from_substrait_plan(
        ctx, substrait.Plan.from_json(json.dumps(whole))
    )
    return ctx.create_dataframe_from_logical_plan(logical)


def _read_rel(conns: Connections, name: str) -> dict[str, Any]:
    """The Substrait read relation of a table registered in DataFusion as `name`."""
    (substrait,) = need("import", "datafusion.substrait")
    ctx = conns.session(PLANNER).handle
    logical = ctx.sql(f'SELECT * FROM "{name}"').logical_plan()
    produced = json.loads(substrait.Producer.to_substrait_plan(logical, ctx).to_json())
    rel = produced["relations"][0]["root"]["input"]
    while _kind(rel)[0] != "read":
        rel = _inputs(rel)[0]
    return rel


def _positional(plan: Plan, node_id: str, table: Any) -> Any:
    """`table` with the generated positional names of `node_id`'s columns."""
    names = plan.column_names(node_id)
    if table.num_columns != len(names):
        raise ValueError(
            f"input for {node_id} has {table.num_columns} columns, the node outputs {len(names)}"
        )
    if not names:
        # No engine takes a table without columns (nor keeps its row count): its rows
        # travel as one column of nulls, which no query above it reads.
        (pa,) = need("import", "pyarrow")
        return pa.table({NO_COLUMN: pa.nulls(table.num_rows, pa.int8())})
    return table.rename_columns(names)


def _empty_of(conns: Connections, plan: Plan, node_id: str) -> Any:
    """An empty table with node `node_id`'s output types and positional names."""
    (pa,) = need("import", "pyarrow")
    schema = _datafusion_frame(conns, plan, plan.rels[node_id], None).schema()
    fields = [
        pa.field(n, f.type, True) for n, f in zip(plan.column_names(node_id), schema, strict=True)
    ]
    return pa.Table.from_batches([], schema=pa.schema(fields))


def _snippet(
    conns: Connections, plan: Plan, node_id: str, dialect: str, cut: frozenset[str]
) -> tuple[str, list[str]]:
    """One node as SQL over its children as named tables (`Plan.table_name`), its output
    columns named positionally; and the children it reads. A `fetch` over a `sort` that
    is not `cut` is unparsed as one (a LIMIT over an ordered common table expression is
    not ordered)."""
    node = plan.nodes[node_id]
    fused: list[str] = []
    reads = list(node.children)
    if (
        node.op == "fetch"
        and len(reads) == 1
        and plan.nodes[reads[0]].op == "sort"
        and reads[0] not in cut
    ):
        fused = [reads[0]]
        reads = list(plan.nodes[reads[0]].children)
    key = (node_id, dialect, bool(fused))
    if key in plan._snippets:
        return plan._snippets[key], reads
    (unparser,) = need("import", "datafusion.unparser")
    ctx = conns.session(PLANNER).handle
    rel = copy.deepcopy(plan.rels[node_id])
    registered = []
    try:
        for child in reads:
            name = plan.table_name(child)
            if not ctx.table_exist(name):
                conns.session(PLANNER).register(name, _empty_of(conns, plan, child))
                registered.append(name)
        holder = rel
        if fused:
            holder = _inputs(rel)[0]
        _replace_inputs(holder, [_read_rel(conns, plan.table_name(c)) for c in reads])
        # Sort and fetch pass their input's columns through in order: unparsed without
        # renaming, as a bare ORDER BY/LIMIT (renamed, the unparser wraps the ordered
        # query in a derived table and refers to it by a qualifier it no longer has).
        names = None if node.op in _PASS_THROUGH else plan.column_names(node_id)
        logical = _datafusion_frame(conns, plan, rel, names).logical_plan()
        text = str(unparser.Unparser(getattr(unparser.Dialect, dialect)()).plan_to_sql(logical))
        if names is not None:
            # The unparser does not keep the output order (an aggregate's measures come
            # first): select the named columns in the node's order.
            # A node without columns (rows only counted above it) selects a constant: no
            # engine takes an empty select list; `PreparedFragment.run` drops it.
            cols = ", ".join(f'"{c}"' for c in names) or f'1 AS "{NO_COLUMN}"'
            text = f'SELECT {cols} FROM ({text}) AS "{plan.token}_{node_id}_s"'
    finally:
        for name in registered:
            ctx.deregister_table(name)
    plan._snippets[key] = text
    return plan._snippets[key], reads


def subtree_sql(
    conns: Connections, plan: Plan, node_id: str, dialect: str, inputs: frozenset[str]
) -> str:
    """The SQL of `node_id`'s subtree in `dialect` (an engine's): every other
    node of it a common table expression, the nodes in `inputs` read as tables of their
    `Plan.table_name`. The statement is the root's own SELECT, so its ORDER BY holds."""
    ctes: list[str] = []
    seen: set[str] = set()

    def visit(nid: str) -> str:
        text, reads = _snippet(conns, plan, nid, dialect, inputs)
        for child in reads:
            if child in inputs or child in seen:
                continue
            seen.add(child)
            body = visit(child)
            # Sort and fetch keep their input's names: the column list renames them by
            # position (they keep the order); every other snippet names its own columns.
            cols = ""
            if plan.nodes[child].op in _PASS_THROUGH:
                cols = "(" + ", ".join(f'"{c}"' for c in plan.column_names(child)) + ")"
            ctes.append(f'"{plan.table_name(child)}"{cols} AS ({body})')
        return text

    # Deep plans: the recursion is as deep as the plan; TPC-H plans are < 40 deep.
    with _planning:  # snippets register placeholder tables in the shared context
        root_text = visit(node_id)
    if not ctes:
        return root_text
    return "WITH " + ", ".join(ctes) + " " + root_text


@dataclass
class PreparedFragment:
    """A subtree of a plan ready to run on one engine, its cut children given as tables.

    `replanned`: the engine plans it again from SQL (`sql`), not from DataFusion's plan.
    """

    conns: Connections
    plan: Plan
    node_id: str
    engine: str
    inputs: frozenset[str]
    sql: str | None = None
    replanned: bool = False

    def run(self, inputs: Mapping[str, Any]) -> Any:
        """Run it with `inputs` (node id -> pyarrow Table); the canonical result."""
        if set(inputs) != set(self.inputs):
            raise ValueError(f"fragment expects inputs {sorted(self.inputs)}, got {sorted(inputs)}")
        if self.sql is None:
            table = self._run_plan(inputs)
        else:
            named = {
                self.plan.table_name(nid): _positional(self.plan, nid, t)
                for nid, t in inputs.items()
            }
            table = self.conns.session(self.engine).run_with(self.sql, named)
        names = list(self.plan.nodes[self.node_id].columns)
        if not names and table.column_names == [NO_COLUMN]:
            table = table.select([])  # the rows of a node without columns
        if table.num_columns != len(names):
            raise ValueError(
                f"{self.engine} returned {table.num_columns} columns for {self.node_id}, "
                f"expected {len(names)}"
            )
        return canonical(table.rename_columns(names))

    def _run_plan(self, inputs: Mapping[str, Any]) -> Any:
        """The planner runs its own plan of the subtree, the cut children read from
        tables registered for this run (names of their own: runs may overlap)."""
        planner = self.conns.session(PLANNER)
        with _lock:
            suffix = f"_{next(_counter)}"
        names = {nid: self.plan.table_name(nid) + suffix for nid in inputs}
        try:
            for nid, table in inputs.items():
                planner.register(names[nid], _positional(self.plan, nid, table))
            rel = copy.deepcopy(self.plan.rels[self.node_id])
            if inputs:
                self._cut(rel, {nid: _read_rel(self.conns, names[nid]) for nid in inputs})
            frame = _datafusion_frame(
                self.conns, self.plan, rel, self.plan.column_names(self.node_id)
            )
            return frame.to_arrow_table()
        finally:
            for name in names.values():
                planner.drop(name)

    def _cut(self, rel: dict[str, Any], reads: dict[str, dict[str, Any]]) -> None:
        """Replace, inside `rel` (a copy of this fragment's root), the cut children."""
        originals = {id(self.plan.rels[nid]): nid for nid in reads}
        stack = [(rel, self.plan.rels[self.node_id])]
        while stack:
            mine, theirs = stack.pop()
            new = []
            for m, t in zip(_inputs(mine), _inputs(theirs), strict=True):
                nid = originals.get(id(t))
                if nid is not None:
                    new.append(reads[nid])
                else:
                    new.append(m)
                    stack.append((m, t))
            _replace_inputs(mine, new)


def prepare(
    conns: Connections, plan: Plan, node_id: str, engine_name: str, inputs: frozenset[str]
) -> PreparedFragment:
    """The fragment of `node_id`'s subtree on engine `engine_name` with `inputs` cut;
    its SQL built (for every engine but the planner, which runs its own plan)."""
    if node_id not in plan.nodes:
        raise ValueError(f"no node {node_id!r} in the plan")
    inside = set(plan.subtree(node_id, stop=inputs)) - {node_id}
    stray = set(inputs) - inside
    if stray:
        raise ValueError(f"inputs {sorted(stray)} are not below {node_id}")
    eng = engine(engine_name)
    frag = PreparedFragment(
        conns, plan, node_id, eng.name, frozenset(inputs), replanned=eng.replans
    )
    if eng.dialect is not None:
        frag.sql = eng.rewrite(subtree_sql(conns, plan, node_id, eng.dialect, frozenset(inputs)))
    return frag


def run_subtree(
    conns: Connections, plan: Plan, node_id: str, engine: str, inputs: Mapping[str, Any]
) -> Any:
    """Run `node_id`'s subtree on `engine`, the nodes in `inputs` given as Arrow tables;
    the result as a canonical pyarrow Table (see the module docstring)."""
    return prepare(conns, plan, node_id, engine, frozenset(inputs)).run(inputs)
