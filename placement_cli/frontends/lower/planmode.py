"""`lower` on a plan file: splitting needs only the statements' per-target costs, so a
plan whose statements carry them gets split too. Without operands nothing propagates
through data dependencies; the artifact says so in a diagnostic."""

from __future__ import annotations

from typing import Any

from placement_cli.frontends.lower.split import SplitMode, split
from placement_cli.ir.graph import parse_plan


def lower_plan(
    doc: Any, mode: SplitMode
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """Split a plan's blocks by statement support.

    >>> plan, sec, diags = lower_plan({"version": 1, "targets": ["a", "b"], "transitions": {"a": {"b": 1}},
    ...   "blocks": [{"id": "bb0", "statements": [{"cost": {"a": 1, "b": 1}}, {"cost": {"b": 2}}],
    ...              "terminator": {"kind": "return"}}]}, "runs")
    >>> [b["id"] for b in plan["blocks"]], [b["domain"] for b in plan["blocks"]]
    (['bb0', 'bb0.1'], [['a', 'b'], ['b']])
    """
    g = parse_plan(doc)  # every problem of the plan itself, as exit 3
    p = g.plan
    targets = list(p.targets)
    n = len(targets)
    full = (1 << n) - 1
    tindex = {t: i for i, t in enumerate(targets)}

    def mask(costs: dict[str, float | None] | None) -> int:
        if costs is None:
            return full
        m = 0
        for t, c in costs.items():
            if c is not None:
                m |= 1 << tindex[t]
        return m

    stmt_support: list[tuple[int, ...]] = []
    term_support: list[int] = []
    kept_whole: list[str] = []
    for b in p.blocks:
        if b.cost is not None:
            # A block cost given as a whole cannot be divided between pieces.
            stmt_support.append(())
            kept_whole.append(b.id)
        else:
            stmt_support.append(tuple(mask(s.cost) for s in b.statements))
        term_support.append(mask(b.terminator.cost))
    ids = [b.id for b in p.blocks]
    pieces, _, _ = split(ids, tuple(stmt_support), tuple(term_support), mode)
    free_switch = p.transitions is None
    raw_blocks = doc["blocks"]
    out_blocks: list[dict[str, Any]] = []
    provenance: dict[str, Any] = {}
    for k, pc in enumerate(pieces):
        src = p.blocks[pc.orig]
        raw = raw_blocks[pc.orig]
        whole = src.cost is not None
        nb: dict[str, Any] = {"id": pc.id}
        if pc.start == 0 and (k == 0 or pieces[k - 1].orig != pc.orig):
            for key in ("params", "paths", "premium", "cost"):
                if key in raw:
                    nb[key] = raw[key]
        stmts = list(raw.get("statements", []))
        nb["statements"] = stmts if whole else stmts[pc.start : pc.end]
        dom = pc.domain if not whole else full
        if src.domain is not None:
            given = g.mask_of(list(src.domain))
            dom &= given
        if src.domain is not None or not whole:
            nb["domain"] = [t for i, t in enumerate(targets) if dom >> i & 1]
        if pc.term or whole:
            nb["terminator"] = raw["terminator"]
        else:
            nxt = pieces[k + 1]
            edge: dict[str, Any] = {"block": nxt.id}
            if free_switch:
                edge["transitions"] = {s: {d: 0 for d in targets} for s in targets}
            nb["terminator"] = {"kind": "goto", "successors": [edge]}
        out_blocks.append(nb)
        provenance[pc.id] = {
            "block": src.id,
            "statements": [pc.start, pc.end if not whole else len(src.statements)],
            "terminator": pc.term or whole,
        }
    plan = {k: v for k, v in doc.items() if k not in ("blocks", "provenance", "lower")}
    plan["blocks"] = out_blocks
    section = {
        "split": mode,
        "blocks_before": len(p.blocks),
        "blocks_after": len(pieces),
        "statements": {
            b.id: [[t for i, t in enumerate(targets) if m >> i & 1] for m in stmt_support[j]]
            for j, b in enumerate(p.blocks)
        },
    }
    plan["provenance"] = provenance
    plan["lower"] = section
    msg = (
        "the input is a plan: its statements carry costs but no operands, so splitting uses their support "
        "sets as given, with no propagation through data dependencies"
    )
    if free_switch:
        msg += "; the plan has no top-level transitions, so the inserted gotos allow every switch at cost 0"
    diags = [{"severity": "info", "code": "no-propagation", "message": msg, "blocks": []}]
    if kept_whole:
        diags.append(
            {
                "severity": "info",
                "code": "not-split",
                "message": "a block whose cost is given as a whole is not split",
                "blocks": kept_whole,
            }
        )
    return plan, section, diags
