"""Hypothesis strategy: random valid bodies (any CFG shape, dominance-respecting uses; SSA unless `reassign`)."""

from __future__ import annotations

from typing import Any

import networkx as nx
from hypothesis import strategies as st

TYPES: list[Any] = [
    "int",
    "bool",
    {"list": "int"},
    {"tuple": ["int"]},
    {"struct": {"a": "int"}},
    {"dict": ["string", "int"]},
    {"union": ["int", {"opaque": "X"}]},
    "unknown",
    "closure",
    {"dict": ["int", "int"]},
]
ENV = {"tuple": TYPES}
PATHS = [
    "vertex.properties.name",
    "vertex.metadata.archived",
    "vertex.encodings.vectors",
    "vertex.link_data",
    "vertex.metadata.record_id.entity_id",
]


@st.composite
def bodies(
    draw: st.DrawFn, max_blocks: int = 6, max_stmts: int = 5, reassign: bool = False
) -> dict[str, Any]:
    """`reassign`: a statement may assign a local again (one defined earlier on every
    path, of any type: the body is then not SSA)."""
    n = draw(st.integers(1, max_blocks))
    ids = [f"bb{i}" for i in range(n)]
    succ: list[list[int]] = []
    kinds: list[str] = []
    for i in range(n):
        k = draw(st.integers(0, 3))
        targets = [draw(st.integers(0, n - 1)) for _ in range(k)]
        if i + 1 < n and draw(st.integers(0, 3)) > 0 and (i + 1) not in targets:
            targets.insert(0, i + 1)
        if not targets:
            kinds.append(draw(st.sampled_from(["return", "return", "unreachable"])))
        elif len(targets) == 1:
            kinds.append(draw(st.sampled_from(["goto", "goto", "graph_read"])))
        else:
            kinds.append("switch")
        succ.append(targets)
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for u in range(n):
        for v in succ[u]:
            g.add_edge(u, v)
    idom = dict(nx.immediate_dominators(g, 0))
    idom[0] = 0  # newer networkx leaves the start node out

    def doms(b: int) -> list[int]:  # strict dominators, outermost first
        if b not in idom:
            return []
        out = []
        while idom[b] != b:
            b = idom[b]
            out.append(b)
        return out[::-1]

    locals_: dict[str, Any] = {"env": ENV, "vertex": {"opaque": "Entity"}}
    counter = [0]

    def new_local() -> str:
        counter[0] += 1
        name = f"%{counter[0]}"
        locals_[name] = draw(st.sampled_from(TYPES))
        return name

    params = [[new_local() for _ in range(draw(st.integers(0, 2)))] for _ in range(n)]
    defined_end: list[list[str]] = [
        [] for _ in range(n)
    ]  # locals defined in block b (params + statements)
    blocks: list[dict[str, Any]] = []
    order = list(nx.dfs_preorder_nodes(g, 0)) + [b for b in range(n) if b not in idom]
    stmts_of: dict[int, list[dict[str, Any]]] = {}
    for b in order:
        avail = [x for d in doms(b) for x in defined_end[d]] + list(params[b])

        def operand(avail: list[str] = avail) -> Any:
            choice = draw(st.integers(0, 9))
            if choice <= 4 and avail:
                return draw(st.sampled_from(avail))
            if choice <= 6:
                return f"env.{draw(st.integers(0, len(TYPES) - 1))}"
            if choice == 7:
                return draw(st.sampled_from(PATHS))
            return draw(st.sampled_from([{"const": 1}, {"const": True}, {"fn": "g"}]))

        stmts = []
        for _ in range(draw(st.integers(0, max_stmts))):
            kind = draw(
                st.sampled_from(
                    [
                        "load",
                        "unary",
                        "binary",
                        "eq",
                        "tuple",
                        "list",
                        "closure",
                        "apply",
                        "input",
                        "storage",
                    ]
                )
            )
            if kind == "storage":
                stmts.append({"nop": True})
                continue
            again = [x for x in avail if x not in params[b]]
            lhs = (
                draw(st.sampled_from(again))
                if reassign and again and draw(st.booleans())
                else new_local()
            )
            if kind == "load":
                st_ = {"load": operand()}
            elif kind == "unary":
                st_ = {"unary": {"op": "-", "operand": operand()}}
            elif kind in ("binary", "eq"):
                st_ = {
                    "binary": {
                        "op": "==" if kind == "eq" else "+",
                        "left": operand(),
                        "right": operand(),
                    }
                }
            elif kind in ("tuple", "list", "closure"):
                st_ = {
                    "aggregate": {
                        "kind": kind,
                        "operands": [operand() for _ in range(draw(st.integers(0, 2)))],
                    }
                }
            elif kind == "apply":
                st_ = {"apply": {"func": operand(), "args": [operand()]}}
            else:
                st_ = {"input": "x"}
            stmts.append({"assign": lhs, **st_})
            if lhs not in avail:
                avail.append(lhs)
        defined_end[b] = list(params[b]) + [s["assign"] for s in stmts if "assign" in s]
        stmts_of[b] = stmts
        term: dict[str, Any] = {"kind": kinds[b]}
        if kinds[b] == "switch" or (kinds[b] == "return" and draw(st.booleans())):
            term["operand"] = operand()  # a switch needs its discriminant
        term["successors"] = [
            {
                "block": ids[v],
                "args": [] if kinds[b] == "graph_read" else [operand() for _ in params[v]],
            }
            for v in succ[b]
        ]
        blocks.append(
            {"id": ids[b], "params": params[b], "statements": stmts, "terminator": term, "_i": b}
        )
    blocks.sort(key=lambda x: x.pop("_i"))
    return {
        "version": 1,
        "size_cap": 50,
        "bodies": [
            {"name": "f", "env": "env", "vertex": "vertex", "locals": locals_, "blocks": blocks},
            G,  # the callee of `apply {fn: g}(x)`
        ],
    }


G = {
    "name": "g",
    "args": ["x"],
    "locals": {"x": "unknown"},
    "blocks": [{"id": "bb0", "terminator": {"kind": "return", "operand": "x"}}],
}
