"""Stage `scc`: strongly connected components and the condensation (`passes.scc`).

The components follow from the plan alone, so a read section is checked against the
recomputed ones: first for the specific ways it can be wrong (unknown or repeated
block ids, blocks missing from the partition, a component that is not strongly
connected, an order that is not topological), each with a message saying so, then
field by field. `boundary` edges are not written (the plan and the component lists
give them).
"""

from __future__ import annotations

from typing import Any

from placement_cli.passes.scc import SccOptions, SccResult, scc
from placement_cli.stages.base import Output, Problems, Stage, compare


def section(res: SccResult, g: Any) -> dict[str, Any]:
    return res.to_json(g, boundary=False)


def compute(run: Any, options: SccOptions | None) -> Output:
    res = scc(run.g, options)
    return Output(res, section(res, run.g))


def check(run: Any, sec: dict[str, Any]) -> Output:
    g = run.g
    res = scc(g, run.options.get("scc"))
    pr = Problems("scc")
    comp_of = [-1] * g.n_blocks
    components = sec["components"]
    for c, comp in enumerate(components):
        for j, bid in enumerate(comp["blocks"]):
            b = g.index.get(bid)
            if b is None:
                pr.add(f"components[{c}].blocks[{j}]", f"unknown block '{bid}'")
            elif comp_of[b] != -1:
                pr.add(f"components[{c}].blocks[{j}]", f"block '{bid}' is already in components[{comp_of[b]}]: not a partition")
            else:
                comp_of[b] = c
    missing = [g.block_ids[b] for b in range(g.n_blocks) if comp_of[b] == -1]
    if missing and not pr.items:
        pr.add("components", f"not a partition of the blocks: '{missing[0]}' is in no component" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
    pr.raise_if_any()
    for e in range(g.n_edges):
        a, b = comp_of[g.edge_src[e]], comp_of[g.edge_dst[e]]
        if a > b:
            u, v = g.block_ids[g.edge_src[e]], g.block_ids[g.edge_dst[e]]
            pr.add(f"components[{b}]", f"not in topological order: edge {u} -> {v} goes from components[{a}] back to components[{b}]")
            break
    pr.raise_if_any()
    for c, comp in enumerate(components):
        blocks = comp["blocks"]
        real = res.comp_of[g.index[blocks[0]]] if blocks else -1
        if not blocks or any(res.comp_of[g.index[b]] != real for b in blocks):
            pr.add(f"components[{c}].blocks", "not strongly connected: these blocks do not all reach each other")
        elif len(blocks) != len(res.components[real].blocks):
            pr.add(f"components[{c}].blocks", "not a whole component: it leaves out blocks on a cycle with these")
    pr.raise_if_any()
    if matches(sec, res, g):
        return Output(res, sec)
    compare(pr, sec, expected := section(res, g))
    pr.raise_if_any()
    return Output(res, expected)


def matches(sec: dict[str, Any], res: SccResult, g: Any) -> bool:
    """Whether a read section equals `section(res, g)`, found without building that
    (most of a check's time on large plans); the section then goes on as it was read.

    >>> from placement_cli.pipeline import parse_plan
    >>> g = parse_plan({"version": 1, "targets": ["t"], "blocks": [{"id": "a", "terminator": {"kind": "return"}}]})
    >>> res = scc(g)
    >>> matches(section(res, g), res, g), matches({**section(res, g), "edges": [{"from": "c0", "to": "c0"}]}, res, g)
    (True, False)
    """
    ids = g.block_ids
    comps = sec["components"]
    if len(comps) != len(res.components):
        return False
    for c, (d, comp) in enumerate(zip(comps, res.components, strict=True)):
        # The six fields every component has, and `header` (cyclic) or `self_loop`.
        if len(d) != 7 or d["id"] != f"c{c}" or d["reachable"] is not comp.live:
            return False
        if comp.cyclic:
            if d["kind"] != "cyclic" or "header" not in d:
                return False
            if d["header"] != (ids[comp.header] if comp.header is not None else None):
                return False
        elif d["kind"] != "trivial" or d.get("self_loop") is not comp.self_loop:
            return False
        if (d["blocks"] != [ids[b] for b in comp.blocks] or d["entries"] != [ids[b] for b in comp.entries]
                or d["exits"] != [ids[b] for b in comp.exits]):
            return False
    edges = sec["edges"]
    if len(edges) != len(res.edges):
        return False
    return all(e["from"] == f"c{a}" and e["to"] == f"c{b}" for e, (a, b) in zip(edges, res.edges, strict=True))


STAGE = Stage(
    name="scc",
    requires=("prune",),
    options=SccOptions,
    section_model="SccSection",
    compute=compute,
    check=check,
    doc=__doc__ or "",
)
