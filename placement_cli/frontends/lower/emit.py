"""Writing the lowered body as a plan document (today's plan format), with the
provenance map (new block -> original block and statement range) and the `lower`
section (support per statement, live sets, sizes, per-edge transfers)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from placement_cli.core.io import num
from placement_cli.frontends.lower.eligibility import Eligibility
from placement_cli.frontends.lower.ir import K_VERTEX, BodyIR, FileIR
from placement_cli.frontends.lower.matrices import UNPRICEABLE, estimate, matrix, sccs_in_loop
from placement_cli.frontends.lower.premium import CAP_ADVICE, block_paths, premium
from placement_cli.frontends.lower.profile import Compiled
from placement_cli.frontends.lower.sizes import Size
from placement_cli.frontends.lower.split import Piece


@dataclass(frozen=True, slots=True)
class Lowered:
    plan: dict[str, Any]
    section: dict[str, Any]
    diagnostics: list[dict[str, Any]]


def _range(lo: float, hi: float) -> list[float | int | None]:
    return [num(float(lo)), None if hi == float("inf") else num(float(hi))]


def _diag(severity: str, code: str, message: str, blocks: list[str]) -> dict[str, Any]:
    return {"severity": severity, "code": code, "message": message, "blocks": blocks}


def piece_edges(
    body: BodyIR, pieces: list[Piece], first: list[int]
) -> list[list[tuple[int, str, list[str]]]]:
    """Per piece: its successor pieces `(piece, terminator kind, argument texts)`."""
    out: list[list[tuple[int, str, list[str]]]] = []
    for p, pc in enumerate(pieces):
        if not pc.term:
            out.append([(p + 1, "goto", [])])
            continue
        blk = body.blocks[pc.orig]
        row = []
        for dst, args in blk.succ:
            if blk.term == "graph_read":
                texts = [body.locals[x] for x in body.blocks[dst].params]  # the read fills them
            else:
                texts = [a.text for a in args]
            row.append((first[dst], blk.term, texts))
        out.append(row)
    return out


def emit(
    fir: FileIR,
    body: BodyIR,
    prof: Compiled,
    elig: Eligibility,
    pieces: list[Piece],
    first: list[int],
    live_in: list[set[int]],
    sizes: list[Size],
    mode: str,
    cap: float | None,
    edges: list[list[tuple[int, str, list[str]]]] | None = None,
) -> Lowered:
    """The plan and the `lower` section; `edges`: `piece_edges` when the caller has them."""
    names = prof.names
    n = prof.n
    blocks = body.blocks
    if edges is None:
        edges = piece_edges(body, pieces, first)
    succ_idx = [[d for d, _, _ in row] for row in edges]
    big = sccs_in_loop(len(pieces), succ_idx)
    how = prof.profile.estimate
    unit = prof.profile.transfer_unit
    is_first = [False] * len(pieces)
    for f in first:
        is_first[f] = True

    local_est: list[float | None] = [estimate(s[0], s[1], how, cap) for s in sizes]
    diags: list[dict[str, Any]] = []
    unpriced_edges: list[str] = []
    unpriced_blocks: list[str] = []
    vname = body.locals[body.vertex] if body.vertex >= 0 else "vertex"
    used_paths: set[int] = set()
    stored = [q for q in range(len(prof.path_names)) if prof.path_origin[q]]

    out_blocks: list[dict[str, Any]] = []
    sec_blocks: dict[str, Any] = {}
    sec_edges: list[dict[str, Any]] = []
    provenance: dict[str, Any] = {}
    mat_memo: dict[tuple[str, int, int, float, bool], dict[str, dict[str, float | int]]] = {}
    cost_memo: dict[tuple[float | None, ...], dict[str, float | int]] = {}
    range_memo: dict[Size, dict[str, list[float | int | None]]] = {}

    def cost_json(cs: tuple[float | None, ...]) -> dict[str, float | int]:
        got = cost_memo.get(cs)
        if got is None:
            got = cost_memo[cs] = {names[t]: num(c) for t, c in enumerate(cs) if c is not None}
        return got

    mask_memo: dict[int, list[str]] = {}

    def mask_json(m: int) -> list[str]:
        got = mask_memo.get(m)
        if got is None:
            got = mask_memo[m] = [names[t] for t in range(n) if m >> t & 1]
        return got

    def size_json(s: Size) -> dict[str, list[float | int | None]]:
        got = range_memo.get(s)
        if got is None:
            got = range_memo[s] = {"units": _range(s[0], s[1]), "cardinality": _range(s[2], s[3])}
        return got

    for p, pc in enumerate(pieces):
        blk = blocks[pc.orig]
        stmts = blk.stmts[pc.start : pc.end]
        costs = elig.stmt_cost[pc.orig][pc.start : pc.end]
        reads: set[int] = set()
        ops = [op for s in stmts for op in s.ops]
        if pc.term:  # every use in the block counts, the terminator's included
            if blk.term_op is not None:
                ops.append(blk.term_op)
            ops.extend(op for _, args in blk.succ for op in args)
        for op in ops:
            if op.kind == K_VERTEX:
                if op.extra < 0:
                    reads.update(stored)  # unresolvable: every path
                elif prof.path_origin[op.extra]:
                    reads.add(op.extra)  # (a path without storage has nothing to fetch)
        bpaths = block_paths(reads, prof.path_names)
        used_paths.update(bpaths)
        prem, bad = premium(prof, bpaths, cap) if bpaths else ([0.0] * n, False)
        if bad:
            unpriced_blocks.append(pc.id)
        succs = []
        for k, (dst, kind, texts) in enumerate(edges[p]):
            live = set(live_in[dst])
            if is_first[dst]:
                live.update(blocks[pieces[dst].orig].params)
            total = 0.0
            priced = True
            for x in live:
                e = local_est[x]
                if e is None:
                    priced = False
                    break
                total += e
            transfer = min(UNPRICEABLE, total * unit) if priced else UNPRICEABLE
            if not priced:
                unpriced_edges.append(f"{pc.id}->{pieces[dst].id}")
            in_loop = big[p] or dst == p
            key = (kind, pc.domain, pieces[dst].domain, transfer, in_loop)
            js = mat_memo.get(key)
            if js is None:
                m = matrix(prof, kind, pc.domain, pieces[dst].domain, transfer, in_loop)
                js = {}
                for s in range(n):
                    row = {names[d]: num(c) for d in range(n) if (c := m[s * n + d]) is not None}
                    if row:
                        js[names[s]] = row
                mat_memo[key] = js
            succs.append({"block": pieces[dst].id, "args": texts, "transitions": js})
            sec_edges.append(
                {
                    "from": pc.id,
                    "index": k,
                    "to": pieces[dst].id,
                    "live": [body.locals[x] for x in sorted(live)],
                    "transfer": num(transfer) if priced else None,
                    "in_loop": in_loop,
                }
            )
        term: dict[str, Any] = {"kind": blk.term if pc.term else "goto", "successors": succs}
        if pc.term:
            term["cost"] = cost_json(elig.term_cost[pc.orig])
        nb: dict[str, Any] = {
            "id": pc.id,
            "params": [body.locals[x] for x in blk.params] if pc.start == 0 and is_first[p] else [],
            "statements": [
                {"text": s.text, "cost": cost_json(cs)} for s, cs in zip(stmts, costs, strict=True)
            ],
            "domain": mask_json(pc.domain),
            "terminator": term,
        }
        if bpaths:
            nb["paths"] = [f"{vname}.{prof.path_names[q]}" for q in bpaths]
            pm = {names[t]: num(v) for t, v in enumerate(prem) if v and pc.domain >> t & 1}
            if pm:
                nb["premium"] = pm
        out_blocks.append(nb)
        provenance[pc.id] = {
            "block": blk.id,
            "statements": [pc.start, pc.end],
            "terminator": pc.term,
        }
        lo = hi = 0.0
        for x in live_in[p]:
            lo += sizes[x][0]
            hi += sizes[x][1]
        sec_blocks[pc.id] = {
            "live_in": [body.locals[x] for x in sorted(live_in[p])],
            "live_units": _range(lo, hi),
        }

    plan: dict[str, Any] = {"version": 1}
    if fir.name is not None:
        plan["name"] = fir.name
    plan["targets"] = list(names)
    plan["entry"] = pieces[first[body.entry]].id
    plan["paths"] = {
        f"{vname}.{prof.path_names[q]}": [
            names[t] for t in range(n) if prof.path_origin[q] >> t & 1
        ]
        for q in sorted(used_paths)
    }
    plan["blocks"] = out_blocks

    if unpriced_edges:
        diags.append(
            _diag(
                "warning",
                "unpriceable-transfer",
                f"{len(unpriced_edges)} edge(s) carry a value of unbounded size and no size cap is set: "
                f"their transfers cost {UNPRICEABLE:.0f} (the reference's maximal cost) "
                f"(first: {unpriced_edges[0]}); {CAP_ADVICE}",
                sorted(
                    {e.split("->")[0] for e in unpriced_edges}, key=[pc.id for pc in pieces].index
                ),
            )
        )
    if unpriced_blocks:
        diags.append(
            _diag(
                "warning",
                "unpriceable-premium",
                f"{len(unpriced_blocks)} block(s) read a vertex path of unbounded size from another target "
                f"and no size cap is set: that premium costs {UNPRICEABLE:.0f}; {CAP_ADVICE}",
                unpriced_blocks,
            )
        )

    section = {
        "profile": prof.profile.name,
        "body": body.name,
        "split": mode,
        "size_cap": None if cap is None else num(cap),
        "blocks_before": len(blocks),
        "blocks_after": len(pieces),
        "statements": {
            blk.id: [mask_json(m) for m in elig.stmt_support[b]] for b, blk in enumerate(blocks)
        },
        "terminators": {blk.id: mask_json(elig.term_support[b]) for b, blk in enumerate(blocks)},
        "ineligible": {
            names[t]: [body.locals[x] for x in range(len(body.locals)) if not elig.final[t][x]]
            for t in range(n)
        },
        "sizes": {body.locals[x]: size_json(s) for x, s in enumerate(sizes)},
        "blocks": sec_blocks,
        "edges": sec_edges,
    }
    plan["provenance"] = provenance
    plan["lower"] = section
    return Lowered(plan, section, diags)
