"""Small plan builders and random placed plans shared by the fusion and islands tests."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest
from hypothesis import strategies as st

from placement_cli.formats.plan import Plan
from placement_cli.ir.graph import Graph, build_graph

HAS_SOLVE = importlib.util.find_spec("placement_cli.algorithms.solve.driver") is not None
needs_solve = pytest.mark.skipif(not HAS_SOLVE, reason="the solve stage is not there yet")


# ---------------------------------------------------------------- small builders


def blk(
    bid: str,
    *succ: str,
    kind: str | None = None,
    args: dict[str, list[str]] | None = None,
    params: list[str] | None = None,
    paths: list[str] | None = None,
    cost: dict[str, float] | None = None,
    text: str | None = None,
) -> dict[str, Any]:
    """A block dict; `kind` defaults to goto (one successor), switch (more) or return."""
    if kind is None:
        kind = "return" if not succ else ("goto" if len(succ) == 1 else "switch")
    args = args or {}
    b: dict[str, Any] = {
        "id": bid,
        "statements": [{"text": text or f"stmt of {bid}", "cost": {"a": 1, "b": 2, "c": 3}}],
        "terminator": {
            "kind": kind,
            "successors": [{"block": s, "args": args.get(s, [])} for s in succ],
        },
    }
    if params:
        b["params"] = params
    if paths:
        b["paths"] = paths
    if cost is not None:
        b["cost"] = cost
    return b


FREE = {s: {d: (0 if s == d else 5) for d in "abc"} for s in "abc"}


def plan(
    *blocks: dict[str, Any],
    paths: dict[str, list[str]] | None = None,
    entry: str | None = None,
    transitions: Any = FREE,
) -> dict[str, Any]:
    p: dict[str, Any] = {
        "version": 1,
        "targets": ["a", "b", "c"],
        "transitions": transitions,
        "blocks": list(blocks),
    }
    if paths:
        p["paths"] = paths
    if entry:
        p["entry"] = entry
    return p


def graph(p: dict[str, Any]) -> Graph:
    return build_graph(Plan.model_validate(p))


def place(g: Graph, targets: str) -> tuple[int, ...]:
    """'a a b -' -> target indices per block in input order ('-' = unassigned)."""
    return tuple(-1 if t == "-" else g.targets.index(t) for t in targets.split())


def fused_members(g: Graph, res: Any) -> list[list[str]]:
    return [[g.block_ids[b] for b in ms] for ms in res.members]


@st.composite
def placed_plans(
    draw: st.DrawFn, max_blocks: int = 8, forbid: bool = False
) -> tuple[dict[str, Any], list[str | None]]:
    """A random plan with parameters, arguments, every terminator kind, dead blocks, paths,
    and a random assignment (None for blocks the strategy leaves unplaced)."""
    k = draw(st.integers(1, 3))
    targets = ["a", "b", "c"][:k]
    n = draw(st.integers(1, max_blocks))
    ids = [f"b{i}" for i in range(n)]
    params = [draw(st.sampled_from([[], [], ["%p"]])) for _ in range(n)]
    path_names = ["x", "y", "z"]
    origins = {
        p: draw(st.lists(st.sampled_from(targets), min_size=1, max_size=k, unique=True))
        for p in path_names
    }

    def matrix() -> dict[str, dict[str, int]]:
        return {
            s: {
                d: (0 if s == d else draw(st.integers(0, 9)))
                for d in targets
                if s == d or not forbid or draw(st.booleans())
            }
            for s in targets
        }

    blocks = []
    for i in range(n):
        # mostly forward edges, so that chains and reachable blocks are common
        succ = draw(st.lists(st.integers(0, n - 1), max_size=3))
        if i + 1 < n and draw(st.integers(0, 3)):
            succ = [i + 1] + succ[: draw(st.integers(0, 1))]
        kind = (
            "return"
            if not succ
            else draw(
                st.sampled_from(["goto", "goto", "graph_read", "switch"])
                if len(succ) == 1
                else st.just("switch")
            )
        )
        edges = []
        for j in succ:
            e: dict[str, Any] = {"block": ids[j], "args": [f"%a{i}"] * len(params[j])}
            if draw(st.integers(0, 3)) == 0:
                e["transitions"] = matrix()
            edges.append(e)
        b: dict[str, Any] = {
            "id": ids[i],
            "params": params[i],
            "statements": [
                {"text": f"{ids[i]}.{s}", "cost": {t: draw(st.integers(0, 9)) for t in targets}}
                for s in range(draw(st.integers(0, 2)))
            ],
            "domain": targets
            if draw(st.booleans())
            else draw(st.lists(st.sampled_from(targets), min_size=1, max_size=k, unique=True)),
            "paths": draw(st.lists(st.sampled_from(path_names), max_size=3)),
            "terminator": {"kind": kind, "successors": edges},
        }
        if draw(st.booleans()):
            b["premium"] = {t: draw(st.integers(0, 5)) for t in targets if draw(st.booleans())}
        if draw(st.integers(0, 3)) == 0:
            b["cost"] = {t: draw(st.integers(0, 9)) for t in targets if draw(st.booleans())}
        blocks.append(b)
    p = {
        "version": 1,
        "targets": targets,
        "transitions": matrix(),
        "paths": origins,
        "blocks": blocks,
    }
    if n > 1 and draw(st.integers(0, 4)) == 0:
        p["entry"] = ids[draw(st.integers(0, n - 1))]
    # Mostly same targets on neighbours, so that fusion has something to do.
    pick = draw(st.sampled_from(targets))
    assign = [pick if draw(st.integers(0, 2)) else draw(st.sampled_from(targets)) for _ in range(n)]
    # Stay inside each block's domain.
    assign = [
        t if t in b["domain"] else b["domain"][0] for t, b in zip(assign, blocks, strict=True)
    ]
    return p, assign


def as_assignment(g: Graph, names: list[str | None]) -> tuple[int, ...]:
    return tuple(
        g.targets.index(t) if g.live[b] and t is not None else -1 for b, t in enumerate(names)
    )
