"""Statement eligibility: per target, which locals are dispatchable and so which
statements and terminators the target can run (and at what cost).

The reference states it as a forward must-analysis over a bitset of locals: the entry
boundary drops the arguments the target cannot read whole, `lhs = rvalue` keeps `lhs`
iff the rvalue is supported under the current state (and, where the target requires it,
`lhs`'s type is serialization-safe), an edge sets the successor's params from its
arguments (a `graph_read` edge clears them), merge points intersect, and the result is
the intersection of the exit states of every `return` block (empty when there is none).

A body that is not SSA (a local assigned in several places, as the compiler's MIR may
be) runs that dataflow literally (`_literal`). When the body is SSA and every use is
dominated by its definition, a local's bit is
the same on every path after its definition. So the analysis is computed here as a
greatest fixpoint over locals (params are the AND of their incoming arguments), and the
return-block intersection becomes: a local whose definition reaches a `return` keeps
its computed bit; one whose definition reaches none keeps the initial "supported"; with
no `return` block at all, nothing is supported. `tests/test_lower_properties.py` checks
this against the literal bitset dataflow on random bodies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from placement_cli.frontends.lower.flow import body_flow, worklist
from placement_cli.frontends.lower.ir import (
    K_CONST,
    K_ENV,
    K_FN,
    K_VERTEX,
    Blk,
    BodyIR,
    Op,
    Stmt,
)
from placement_cli.frontends.lower.profile import Compiled, TargetRules


@dataclass(frozen=True, slots=True)
class Eligibility:
    final: tuple[tuple[bool, ...], ...]  # final[t][local]: dispatchable on target t
    stmt_support: tuple[tuple[int, ...], ...]  # [block][statement] -> target bitset
    term_support: tuple[int, ...]  # [block] -> target bitset
    stmt_cost: tuple[tuple[tuple[float | None, ...], ...], ...]  # [block][statement][target]
    term_cost: tuple[tuple[float | None, ...], ...]  # [block][target]


def universal(r: TargetRules) -> bool:
    """A target that can read everything needs no analysis (the reference's interpreter)."""
    return (
        r.arguments == "full"
        and r.constants == "all"
        and r.closures
        and r.calls
        and not r.equality_safety
        and not r.serialization_safety
    )


class _Rules:
    """The target's rules as plain attributes for the hot loops."""

    def __init__(self, prof: Compiled, t: int) -> None:
        r = prof.rules[t]
        self.t = t
        self.kinds = r.statements
        self.terms = r.terminators
        self.native = r.arguments == "native"
        self.env_fields = r.env_fields
        self.const_prim = r.constants != "none"
        self.const_fn = r.constants == "all"
        self.eq = r.equality_safety
        self.ser = r.serialization_safety
        self.closures = r.closures
        self.calls = r.calls
        self.effects = r.effects
        self.origin = prof.path_origin

    def op_ok(self, op: Op, bits: list[bool]) -> bool:
        k = op.kind
        if k == K_CONST:
            return self.const_prim
        if k == K_FN:
            return self.const_fn
        if bits[op.local]:
            return True
        if not self.native:
            return False
        if k == K_ENV:
            return self.env_fields and op.extra == 1
        if k == K_VERTEX:
            return op.extra >= 0 and bool(self.origin[op.extra] >> self.t & 1)
        return False

    def stmt_ok(self, s: Stmt, bits: list[bool], ser_safe: list[bool]) -> bool:
        if s.kind not in self.kinds:
            return False
        if s.lhs < 0:
            return True
        for op in s.ops:
            if not self.op_ok(op, bits):
                return False
        if s.eq_unsafe and self.eq:
            return False
        if s.closure and not self.closures:
            return False
        if s.kind == "apply" and not self.calls:
            return False
        return not (self.ser and not ser_safe[s.lhs])

    def term_ok(self, body: BodyIR, b: int, bits: list[bool]) -> bool:
        blk = body.blocks[b]
        if blk.term not in self.terms:
            return False
        if blk.term == "graph_read":
            return self.effects
        if blk.term_op is not None and not self.op_ok(blk.term_op, bits):
            return False
        return all(self.op_ok(op, bits) for _, args in blk.succ for op in args)


class _Bits:
    """A bitset (an int) read as `bits[local]`, as the rules read the state."""

    __slots__ = ("v",)

    def __init__(self, v: int) -> None:
        self.v = v

    def __getitem__(self, i: int) -> bool:
        return bool(self.v >> i & 1)


def _literal(
    body: BodyIR,
    R: _Rules,
    full_args: bool,
    order: list[int],
) -> tuple[bool, ...]:
    """The must-analysis as the reference states it, for a body that is not SSA (a local
    assigned in several places): per block an entry state (a bitset of locals, all set
    at first), `lhs = rvalue` sets or clears lhs's bit, an edge sets the successor's
    parameters from its arguments (a graph read clears them), merges intersect, and the
    result is the intersection of the exit states of every `return` block."""
    blocks = body.blocks
    n_loc = len(body.locals)
    full = (1 << n_loc) - 1
    ser = body.ser_safe
    state_in = [full] * len(blocks)
    boundary = full
    if not full_args:
        for a in body.args:
            boundary &= ~(1 << a)
    state_in[body.entry] = boundary
    state_out = [full] * len(blocks)
    bits = _Bits(0)
    changed = True
    while changed:
        changed = False
        for b in order:
            v = state_in[b]
            for st in blocks[b].stmts:
                if st.lhs >= 0:
                    bits.v = v
                    if R.stmt_ok(st, bits, ser):  # type: ignore[arg-type]
                        v |= 1 << st.lhs
                    else:
                        v &= ~(1 << st.lhs)
            state_out[b] = v
            bits.v = v
            gr = blocks[b].term == "graph_read"
            for dst, args in blocks[b].succ:
                em = v
                for k, p in enumerate(blocks[dst].params):
                    ok = not gr and R.op_ok(args[k], bits) and not (R.ser and not ser[p])  # type: ignore[arg-type]
                    em = em | (1 << p) if ok else em & ~(1 << p)
                new = state_in[dst] & em
                if new != state_in[dst]:
                    state_in[dst] = new
                    changed = True
    rets = [b for b, blk in enumerate(blocks) if blk.term == "return"]
    if not rets:
        return tuple([False] * n_loc)
    final = full
    for b in rets:
        final &= state_out[b]
    return tuple(bool(final >> x & 1) for x in range(n_loc))


def _losing(
    blocks: list[Blk],
    preds: list[list[tuple[int, tuple[Op, ...], bool]]],
    R: _Rules,
    bits: list[bool],
    ser: list[bool],
) -> Callable[[int], list[int]]:
    """The eligibility fixpoint's step for one target (`flow.worklist`): a block's
    parameters and statements lose their bit when what fills them cannot run there;
    returns the locals that lost it."""

    def visit(b: int) -> list[int]:
        blk = blocks[b]
        lost: list[int] = []
        for k, p in enumerate(blk.params):
            if not bits[p] or not preds[b]:
                continue  # a parameter no edge fills keeps its initial bit (as the literal dataflow)
            ok = not (R.ser and not ser[p])
            if ok:
                for _, args, gr in preds[b]:
                    if gr or not R.op_ok(args[k], bits):
                        ok = False
                        break
            if not ok:
                bits[p] = False
                lost.append(p)
        for st in blk.stmts:
            if st.lhs >= 0 and bits[st.lhs] and not R.stmt_ok(st, bits, ser):
                bits[st.lhs] = False
                lost.append(st.lhs)
        return lost

    return visit


def analyse(body: BodyIR, prof: Compiled) -> Eligibility:
    """Eligibility of every local, statement and terminator on every target.

    >>> from placement_cli.frontends.lower.stage import parse_body_file
    >>> doc = {"version": 1, "bodies": [{"name": "f", "env": "env", "vertex": "v",
    ...   "locals": {"env": {"tuple": ["int", "closure"]}, "v": {"opaque": "Entity"}, "a": "int", "b": "closure"},
    ...   "blocks": [{"id": "bb0", "statements": [{"assign": "a", "load": "env.0"}, {"assign": "b", "load": "env.1"}],
    ...     "terminator": {"kind": "return", "operand": "a"}}]}]}
    >>> fir, prof = parse_body_file(doc)
    >>> e = analyse(fir.bodies[0], prof)
    >>> e.stmt_support[0], e.term_support[0]  # env.0 on I and P; env.1 (a closure) on I only
    ((3, 1), 3)
    """
    n_loc = len(body.locals)
    blocks = body.blocks
    flow = body_flow(body)
    order = flow.order
    preds = flow.incoming
    has_return = any(blk.term == "return" for blk in blocks)
    # blocks from which a reachable `return` can be reached
    to_ret = [False] * len(blocks)
    stack = [b for b in order if blocks[b].term == "return"]
    rpreds: list[list[int]] = [[] for _ in blocks]
    for u in order:
        for v, _ in blocks[u].succ:
            rpreds[v].append(u)
    for b in stack:
        to_ret[b] = True
    while stack:
        v = stack.pop()
        for u in rpreds[v]:
            if not to_ret[u]:
                to_ret[u] = True
                stack.append(u)
    defblock = [body.entry] * n_loc
    for b, blk in enumerate(blocks):
        for p in blk.params:
            defblock[p] = b
        for s in blk.stmts:
            if s.lhs >= 0:
                defblock[s.lhs] = b
    counts = [True] * n_loc  # whether a local's computed bit survives into the final set
    for x in range(n_loc):
        counts[x] = to_ret[defblock[x]]

    exact = has_return and all(counts)  # the final set is the fixpoint itself

    finals = []
    fixpoints: list[list[bool] | None] = []
    for t, r in enumerate(prof.rules):
        if universal(r):
            finals.append(tuple([True] * n_loc))
            fixpoints.append(None)
            continue
        if body.multi:  # not SSA: the reference's dataflow, literally
            finals.append(_literal(body, _Rules(prof, t), r.arguments == "full", order))
            fixpoints.append(None)
            continue
        R = _Rules(prof, t)
        bits = [True] * n_loc
        full_args = r.arguments == "full"
        for a in body.args:
            bits[a] = full_args
        # A block is revisited only when a local it reads (or a parameter's incoming
        # argument) lost its bit.
        worklist(flow, len(blocks), _losing(blocks, preds, R, bits, body.ser_safe))
        if not has_return:
            final = [False] * n_loc
        else:
            final = [bits[x] if counts[x] else True for x in range(n_loc)]
        finals.append(tuple(final))
        fixpoints.append(bits if exact else None)

    rules = [_Rules(prof, t) for t in range(prof.n)]
    stmt_support, stmt_cost, term_support, term_cost = [], [], [], []
    fl = [list(f) for f in finals]
    # a statement's costs follow from its kind and where it is supported: one tuple each
    cost_of: dict[tuple[str, int], tuple[float | None, ...]] = {}
    for b, blk in enumerate(blocks):
        sup_row, cost_row = [], []
        for s in blk.stmts:
            m = 0
            for t, R in enumerate(rules):
                fx = fixpoints[t]
                if fx is not None and s.lhs >= 0:
                    ok = fx[s.lhs]  # the fixpoint evaluated this very statement under the final set
                else:
                    ok = s.kind in R.kinds and R.stmt_ok(s, fl[t], body.ser_safe)
                if ok:
                    m |= 1 << t
            sup_row.append(m)
            costs = cost_of.get((s.kind, m))
            if costs is None:
                costs = cost_of[s.kind, m] = tuple(
                    float(R.kinds[s.kind]) if m >> t & 1 else None  # type: ignore[index]
                    for t, R in enumerate(rules)
                )
            cost_row.append(costs)
        stmt_support.append(tuple(sup_row))
        stmt_cost.append(tuple(cost_row))
        m = 0
        tc: list[float | None] = []
        for t, R in enumerate(rules):
            if R.term_ok(body, b, fl[t]):
                m |= 1 << t
                tc.append(float(R.terms[blk.term]))  # type: ignore[index]
            else:
                tc.append(None)
        term_support.append(m)
        term_cost.append(tuple(tc))
    return Eligibility(
        tuple(finals), tuple(stmt_support), tuple(term_support), tuple(stmt_cost), tuple(term_cost)
    )
