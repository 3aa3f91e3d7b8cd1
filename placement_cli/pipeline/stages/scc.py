"""Stage `scc`: strongly connected components and the condensation (`algorithms.scc`).

The components follow from the plan alone. A read section is checked first for the
specific ways it can be wrong (unknown or repeated block ids, blocks missing from the
partition, an order that is not topological, a component that is not strongly
connected), each with a message saying so; a section passing those is the set of
components, and `scc_verify.condense` then proves the rest (the order `scc` picks,
entries, exits, headers, the condensation edges) in one pass over the edges, without
recomputing. Only a section it cannot prove right is recomputed and compared field by
field, for the message. `boundary` edges are not written (the plan and the component
lists give them).
"""

from __future__ import annotations

from typing import Any

from placement_cli.algorithms.scc import SccOptions, SccResult, scc
from placement_cli.pipeline.checks import Problems, compare
from placement_cli.pipeline.stage import Deferred, Output, Stage, StageRun
from placement_cli.pipeline.stages.scc_verify import (
    condense,
    proved,
    strongly_connected,
    written_as,
)


def section(res: SccResult, g: Any) -> dict[str, Any]:
    return res.to_json(g, boundary=False)


def compute(run: StageRun, options: SccOptions | None) -> Output:
    res = scc(run.g, options)
    return Output(res, section(res, run.g))


def check(run: StageRun, sec: dict[str, Any]) -> Output:
    g = run.g
    fast = proved(g, sec)
    if fast is not None:
        # Exactly the section `scc` writes: it goes on as read, and its `SccResult` is
        # built only if a later stage reads it (`solve` computing does).
        return Output(Deferred(fast[1]), sec)
    pr = Problems("scc")
    comp_of = [-1] * g.n_blocks
    components = sec["components"]
    index = g.index
    members: list[list[int]] = []  # block indices per component (read once: see scc_verify)
    for c, comp in enumerate(components):
        m: list[int] = []
        members.append(m)
        for j, bid in enumerate(comp["blocks"]):
            b = index.get(bid)
            if b is None:
                pr.add(f"components[{c}].blocks[{j}]", f"unknown block '{bid}'")
            elif comp_of[b] != -1:
                pr.add(
                    f"components[{c}].blocks[{j}]",
                    f"block '{bid}' is already in components[{comp_of[b]}]: not a partition",
                )
            else:
                comp_of[b] = c
                m.append(b)
    missing = [g.block_ids[b] for b in range(g.n_blocks) if comp_of[b] == -1]
    if missing and not pr.items:
        pr.add(
            "components",
            f"not a partition of the blocks: '{missing[0]}' is in no component"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""),
        )
    pr.raise_if_any()
    for e in range(g.n_edges):
        a, b = comp_of[g.edge_src[e]], comp_of[g.edge_dst[e]]
        if a > b:
            u, v = g.block_ids[g.edge_src[e]], g.block_ids[g.edge_dst[e]]
            pr.add(
                f"components[{b}]",
                f"not in topological order: edge {u} -> {v} goes from components[{a}] back to components[{b}]",
            )
            break
    pr.raise_if_any()
    # A partition whose every edge goes forward, made of strongly connected parts, is
    # the components themselves (see `scc_verify`): no recomputation needed to say so.
    for c, blocks in enumerate(members):
        if len(blocks) != 1 and (not blocks or not strongly_connected(g, comp_of, c, blocks)):
            pr.add(
                f"components[{c}].blocks",
                "not strongly connected: these blocks do not all reach each other",
            )
    pr.raise_if_any()
    condensed = condense(g, comp_of, members, sec)
    if condensed is not None:
        return Output(condensed, sec)
    # Not provably the section `scc` writes: recompute, and say where it differs.
    res = scc(g, run.options.get("scc"))
    for c, blocks in enumerate(members):
        if len(blocks) != len(res.components[res.comp_of[blocks[0]]].blocks):
            pr.add(
                f"components[{c}].blocks",
                "not a whole component: it leaves out blocks on a cycle with these",
            )
    pr.raise_if_any()
    if matches(sec, res, g):
        return Output(res, sec)
    compare(pr, sec, expected := section(res, g))
    pr.raise_if_any()
    return Output(res, expected)


def matches(sec: dict[str, Any], res: SccResult, g: Any) -> bool:
    """Whether a read section equals `section(res, g)`, found without building that
    (most of a check's time on large plans); the section then goes on as it was read.

    >>> from placement_cli.pipeline.run import parse_plan
    >>> g = parse_plan({"version": 1, "targets": ["t"], "blocks": [{"id": "a", "terminator": {"kind": "return"}}]})
    >>> res = scc(g)
    >>> matches(section(res, g), res, g), matches({**section(res, g), "edges": [{"from": "c0", "to": "c0"}]}, res, g)
    (True, False)
    """
    ids = g.block_ids
    comps = sec["components"]
    if len(comps) != len(res.components):
        return False
    if any(
        d["blocks"] != [ids[b] for b in comp.blocks]
        for d, comp in zip(comps, res.components, strict=True)
    ):
        return False
    return written_as(sec, res.components, res.edges, ids)


def summary(sec: dict[str, Any]) -> str:
    if "components" not in sec:
        return ""
    cyc = sum(1 for c in sec["components"] if c["kind"] == "cyclic")
    return f"{len(sec['components'])} components, {cyc} cyclic"


STAGE = Stage(
    name="scc",
    requires=("prune",),
    options=SccOptions,
    compute=compute,
    check=check,
    doc=__doc__ or "",
    summary=summary,
)
