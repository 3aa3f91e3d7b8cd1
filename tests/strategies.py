"""Hypothesis strategies: small random plans as plain dicts (the public format)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

TARGET_NAMES = ["t0", "t1", "t2", "t3", "t4"]


@st.composite
def matrices(
    draw: st.DrawFn, targets: list[str], density: float = 0.6
) -> dict[str, dict[str, int]]:
    m: dict[str, dict[str, int]] = {}
    for s in targets:
        row = {}
        for d in targets:
            if draw(st.floats(0, 1)) < density:
                row[d] = 0 if s == d else draw(st.integers(0, 9))
        if row:
            m[s] = row
    return m


@st.composite
def plans(
    draw: st.DrawFn,
    max_blocks: int = 6,
    max_targets: int = 3,
    self_loops: bool = True,
    dead: bool = True,
) -> dict[str, Any]:
    """A random plan: arbitrary CFG (cycles, parallel edges, self-loops, dead blocks),
    random domains, costs and matrices with forbidden pairs."""
    k = draw(st.integers(1, max_targets))
    targets = TARGET_NAMES[:k]
    n = draw(st.integers(1, max_blocks))
    ids = [f"b{i}" for i in range(n)]
    default = draw(matrices(targets, 0.7))
    blocks = []
    for i in range(n):
        n_succ = draw(st.integers(0, 3))
        succs = []
        for _ in range(n_succ):
            if dead:
                j = draw(st.integers(0, n - 1))
            else:
                # forward-ish edges keep most blocks reachable
                j = draw(st.integers(0, n - 1))
            if j == i and not self_loops:
                continue
            edge: dict[str, Any] = {"block": ids[j]}
            if draw(st.booleans()):
                edge["transitions"] = draw(matrices(targets, 0.6))
            succs.append(edge)
        if not dead and i + 1 < n and not any(s["block"] == ids[i + 1] for s in succs):
            succs.append({"block": ids[i + 1]})
        kind = (
            "return"
            if not succs
            else ("goto" if len(succs) == 1 and draw(st.booleans()) else "switch")
        )
        dom = [t for t in targets if draw(st.floats(0, 1)) < 0.8]
        cost = {t: draw(st.integers(0, 20)) for t in targets}
        blocks.append(
            {
                "id": ids[i],
                "domain": dom,
                "cost": cost,
                "terminator": {"kind": kind, "successors": succs},
            }
        )
    return {"version": 1, "targets": targets, "transitions": default, "blocks": blocks}
