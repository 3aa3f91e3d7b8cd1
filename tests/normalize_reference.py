"""The first writer of the normalised plan (`normalize.normalize` before it was derived
from `normalize.rendered`), kept record by record as the reference the memoised writer
must match byte for byte (`tests/test_normalize_render.py`)."""

from __future__ import annotations

from typing import Any

from placement_cli.ir.graph import Graph
from placement_cli.ir.normalize import _Nums, _top


def normalize_reference(g: Graph) -> dict[str, Any]:
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
    for i, b in enumerate(plan.blocks):
        dom = domain[i]
        ts = dom_bits.get(dom)
        if ts is None:
            ts = dom_bits[dom] = [t for t in range(n) if dom >> t & 1]
            dom_names[dom] = [targets[t] for t in ts]
        term = b.terminator
        base = bases[i]
        nb: dict[str, Any] = {"id": b.id}
        params = b.params
        if params:
            nb["params"] = list(params)
        sts = []
        for st in b.statements:
            cost = st.cost
            text = st.text
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
        paths = b.paths
        if paths:
            nb["paths"] = list(paths)
        premium = b.premium
        if premium:
            nb["premium"] = {k: nums[v] for k, v in premium.items()}
        nt: dict[str, Any] = {"kind": term.kind}
        tsuccs = term.successors
        if tsuccs:
            succs = []
            for e, eid in zip(tsuccs, succ[i], strict=True):
                se: dict[str, Any] = {"block": e.block}
                args = e.args
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
        tcost = term.cost
        if tcost is not None:
            nt["cost"] = {k: nums[v] for k, v in tcost.items()}
        nb["terminator"] = nt
        out_blocks.append(nb)
    return _top(g, out_blocks, matrices)
