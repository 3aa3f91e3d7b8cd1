"""Property tests of `lower` on random bodies (SSA, and not)."""

from __future__ import annotations

from hypothesis import given, settings

from placement_cli.frontends.lower import LowerOptions, lower_to_plan
from placement_cli.frontends.lower.eligibility import _Rules, universal
from placement_cli.frontends.lower.flow import reverse_postorder
from placement_cli.frontends.lower.stage import parse_body_file
from placement_cli.pipeline.run import STAGES, Loaded, Run, parse_plan
from tests.budget import examples
from tests.lower_strategies import bodies


def _lower(doc, mode="runs"):
    return lower_to_plan(doc, "<test>", LowerOptions(split=mode))


@settings(max_examples=examples(150))
@given(bodies())
def test_every_lowered_plan_validates_in_every_mode(doc):
    for mode in ("runs", "intersection", "per-statement"):
        plan, sec, _ = _lower(doc, mode)
        g = parse_plan(plan)
        n_stmts = sum(len(b["statements"]) for b in doc["bodies"][0]["blocks"])
        assert sum(len(b["statements"]) for b in plan["blocks"]) == n_stmts
        if mode == "intersection":
            assert g.n_blocks == len(doc["bodies"][0]["blocks"])


@settings(max_examples=examples(150))
@given(bodies())
def test_splitting_cuts_exactly_where_support_changes(doc):
    plan, sec, _ = _lower(doc)
    prov = plan["provenance"]
    blocks = plan["blocks"]
    for i, b in enumerate(blocks):
        p = prov[b["id"]]
        sup = sec["statements"][p["block"]][p["statements"][0] : p["statements"][1]]
        # never a block with mixed support, and the block's domain is its run's support
        assert all(s == sup[0] for s in sup)
        if sup:
            assert b["domain"] == sup[0]
        else:
            assert b["domain"] == sec["terminators"][p["block"]]
        if p["terminator"]:
            assert set(sec["terminators"][p["block"]]) >= set(b["domain"])
        nxt = blocks[i + 1] if i + 1 < len(blocks) else None
        if nxt is not None and prov[nxt["id"]]["block"] == p["block"]:
            q = prov[nxt["id"]]
            assert not p["terminator"]
            nsup = sec["statements"][q["block"]][q["statements"][0] : q["statements"][1]]
            if nsup:  # never a cut between statements with equal support
                assert nsup[0] != sup[-1]
            else:  # a terminator-only block: its support is not a superset of the last run's
                assert not set(sec["terminators"][q["block"]]) >= set(sup[-1])


def _uses(st):
    ops = []
    for key in ("load",):
        if key in st:
            ops.append(st[key])
    if "unary" in st:
        ops.append(st["unary"]["operand"])
    if "binary" in st:
        ops += [st["binary"]["left"], st["binary"]["right"]]
    if "aggregate" in st:
        ops += st["aggregate"]["operands"]
    if "apply" in st:
        ops += [st["apply"]["func"], *st["apply"]["args"]]
    return [o for o in ops if isinstance(o, str) and not o.startswith(("env", "vertex"))]


@settings(max_examples=examples(150))
@given(bodies())
def test_a_statement_using_an_ineligible_local_is_ineligible(doc):
    _, sec, _ = _lower(doc)
    for blk in doc["bodies"][0]["blocks"]:
        for j, st in enumerate(blk["statements"]):
            for t, bad in sec["ineligible"].items():
                if any(x in bad for x in _uses(st)):
                    assert t not in sec["statements"][blk["id"]][j]
        term = blk["terminator"]
        used = [term["operand"]] if isinstance(term.get("operand"), str) else []
        used += [a for e in term["successors"] for a in e["args"] if isinstance(a, str)]
        for t, bad in sec["ineligible"].items():
            if any(x in bad for x in used if not x.startswith(("env", "vertex"))):
                assert t not in sec["terminators"][blk["id"]]


def literal_eligibility(doc):
    """The reference's must-analysis, literally: bitset states, intersection at merges,
    edge transfer of params, result = intersection over `return` blocks' exit states."""
    fir, prof = parse_body_file(doc)
    body = fir.bodies[fir.place]
    n = len(body.locals)
    full = (1 << n) - 1
    blocks = body.blocks
    order = reverse_postorder(blocks, body.entry)
    out = {}
    for t, r in enumerate(prof.rules):
        if universal(r):
            out[prof.names[t]] = set()
            continue
        R = _Rules(prof, t)
        boundary = full
        if r.arguments != "full":
            for a in body.args:
                boundary &= ~(1 << a)
        state_in = {b: full for b in range(len(blocks))}
        state_in[body.entry] = boundary
        state_out = {b: full for b in range(len(blocks))}
        changed = True
        while changed:
            changed = False
            for b in order:
                bits = [bool(state_in[b] >> x & 1) for x in range(n)]
                for s in blocks[b].stmts:
                    if s.lhs >= 0:
                        bits[s.lhs] = R.stmt_ok(s, bits, body.ser_safe)
                ob = sum(1 << x for x in range(n) if bits[x])
                if ob != state_out[b]:
                    state_out[b] = ob
                    changed = True
                for v, args in blocks[b].succ:
                    eb = list(bits)
                    for k, p in enumerate(blocks[v].params):
                        eb[p] = (
                            blocks[b].term != "graph_read"
                            and R.op_ok(args[k], bits)
                            and not (R.ser and not body.ser_safe[p])
                        )
                    em = sum(1 << x for x in range(n) if eb[x])
                    new = state_in[v] & em if v != body.entry else state_in[v] & em
                    if new != state_in[v]:
                        state_in[v] = new
                        changed = True
        rets = [b for b in range(len(blocks)) if blocks[b].term == "return"]
        final = 0
        if rets:
            final = full
            for b in rets:
                final &= state_out[b]
        out[prof.names[t]] = {body.locals[x] for x in range(n) if not final >> x & 1}
    return out


@settings(max_examples=examples(200))
@given(bodies())
def test_eligibility_matches_the_literal_dataflow(doc):
    _, sec, _ = _lower(doc)
    assert {t: set(v) for t, v in sec["ineligible"].items()} == literal_eligibility(doc)


@settings(max_examples=examples(150))
@given(bodies(reassign=True))
def test_eligibility_of_bodies_that_are_not_ssa_matches_the_literal_dataflow(doc):
    """Locals assigned again (in the same or another block), as the compiler's MIR does."""
    plan, sec, _ = _lower(doc)
    assert {t: set(v) for t, v in sec["ineligible"].items()} == literal_eligibility(doc)
    assert plan["blocks"]


@settings(max_examples=examples(100))
@given(bodies())
def test_lower_solve_fuse_gives_back_blocks_kept_on_one_target(doc):
    plan, _, _ = _lower(doc)
    run = Run(Loaded("<test>", parse_plan(plan)))
    for stage in STAGES:
        run.run(stage)
    art = run.artifact("fuse")
    if art["status"] != "ok":
        return
    assignment = art["solve"]["assignment"]
    by_orig: dict[str, list[str]] = {}
    for pid, p in plan["provenance"].items():
        by_orig.setdefault(p["block"], []).append(pid)
    member_of = {m: fb["id"] for fb in art["fuse"]["blocks"] for m in fb["members"]}
    for _orig, pieces in by_orig.items():
        if all(pc in assignment for pc in pieces) and len({assignment[pc] for pc in pieces}) == 1:
            assert len({member_of[pc] for pc in pieces}) == 1, pieces
