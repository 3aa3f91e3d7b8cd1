"""The normalised plan written into artifacts (format 2, `docs/format.md`): derived
domains and block costs filled in, each distinct matrix named once. Built from a checked
`Graph` on first use (`Graph.normalized`): a stage that only reads a plan to run an
algorithm never pays for it. Kept apart from `graph.py`, which checks and indexes a plan.
"""

from __future__ import annotations

from typing import Any

from placement_cli.graph import Graph, plan_document
from placement_cli.io import num


class _Nums(dict):  # type: ignore[type-arg]
    """Plan number -> written number (`io.num`), memoised: a large plan repeats a few
    hundred distinct costs millions of times, and a dict hit is a C-level lookup where
    `num` is a Python call. (1 == 1.0 == True share a key, and all write as 1.)"""

    def __missing__(self, v: Any) -> Any:
        r = self[v] = None if v is None else num(float(v))  # a checked document may hold ints
        return r


def normalize(g: Graph) -> dict[str, Any]:
    """The compact normalised plan (artifact format 2): derived `domain` and block `cost`
    filled in, `entry` explicit, each distinct non-default transition matrix written once
    under `matrices` (named `m0, m1, ...` in order of first use) and referred to by name;
    an edge on the default matrix carries no `transitions`. Empty lists and maps are left
    out. It is a valid plan file, and normalising it again gives the same bytes.

    Lists that only depend on a domain bitset (`domain`) are shared between blocks:
    the result is read (written, compared), never changed in place."""
    plan = g.plan
    targets = g.targets
    n = len(targets)
    default = g.default_matrix
    names: dict[int, str] = {}
    matrices: dict[str, Any] = {}
    nums = _Nums()
    dom_bits: dict[int, list[int]] = {}
    dom_names: dict[int, list[str]] = {}
    stmt_memo: dict[tuple[tuple[str, float | None], ...], dict[str, Any]] = {}

    out_blocks = []
    bases = g._memo["base"]
    domain, succ, edge_mat = g.domain, g.succ, g.edge_mat
    # Read from the plan's document (views of a derived plan unwrapped): attribute access
    # through `planview` would double the time of this loop on large plans.
    for i, b in enumerate(plan_document(plan)["blocks"]):
        if type(b) is not dict:
            b = b._d
        dom = domain[i]
        ts = dom_bits.get(dom)
        if ts is None:
            ts = dom_bits[dom] = [t for t in range(n) if dom >> t & 1]
            dom_names[dom] = [targets[t] for t in ts]
        term = b["terminator"]
        if type(term) is not dict:
            term = term._d
        base = bases[i]
        nb: dict[str, Any] = {"id": b["id"]}
        params = b.get("params")
        if params:
            nb["params"] = list(params)
        sts = []
        for st in b.get("statements") or ():
            if type(st) is not dict:
                st = st._d
            cost = st["cost"]
            text = st.get("text")
            if text is None:
                # Statements without text repeat (same costs): one shared record each.
                key = tuple(cost.items())
                rec = stmt_memo.get(key)
                if rec is None:
                    rec = stmt_memo[key] = {"cost": {k: nums[v] for k, v in cost.items()}}
                sts.append(rec)
            else:
                sts.append({"text": text, "cost": {k: nums[v] for k, v in cost.items()}})
        nb["statements"] = sts
        nb["domain"] = dom_names[dom]
        nb["cost"] = {targets[t]: nums[base[t]] for t in ts}
        paths = b.get("paths")
        if paths:
            nb["paths"] = list(paths)
        premium = b.get("premium")
        if premium:
            nb["premium"] = {k: nums[v] for k, v in premium.items()}
        nt: dict[str, Any] = {"kind": term["kind"]}
        tsuccs = term.get("successors")
        if tsuccs:
            succs = []
            for e, eid in zip(tsuccs, succ[i], strict=True):
                if type(e) is not dict:
                    e = e._d
                se: dict[str, Any] = {"block": e["block"]}
                args = e.get("args")
                if args:
                    se["args"] = list(args)
                mt = edge_mat[eid]
                if mt is not default:
                    name = names.get(id(mt))
                    if name is None:
                        name = names[id(mt)] = f"m{len(names)}"
                        matrices[name] = mt.to_json(targets)
                    se["transitions"] = name
                succs.append(se)
            nt["successors"] = succs
        tcost = term.get("cost")
        if tcost is not None:
            nt["cost"] = {k: nums[v] for k, v in tcost.items()}
        nb["terminator"] = nt
        out_blocks.append(nb)
    normalized: dict[str, Any] = {
        "version": 1,
        "targets": list(targets),
        "entry": g.block_ids[g.entry],
        "transitions": default.to_json(targets),
        "blocks": out_blocks,
    }
    if matrices:
        normalized["matrices"] = matrices
    if plan.paths:
        normalized["paths"] = {k: list(v) for k, v in plan.paths.items()}
    if plan.name is not None:
        normalized["name"] = plan.name
    return normalized
