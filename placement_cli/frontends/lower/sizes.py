"""Sizes (information units with a cardinality axis, both as ranges) and liveness.

A size is `(units_lo, units_hi, card_lo, card_hi)`, `inf` for an unbounded upper bound.
The static phase reads it off the type (one unit per primitive value, unit 0, a
collection `elements x cardinality` with an unknown cardinality [0, inf)); the dynamic
phase runs forward through the assignments (an aggregate is the sum of its operands, a
load its operand, a block parameter the range hull of its incoming arguments, widened to
inf on a loop that keeps growing it). A call of another body of the file gets that
body's return size evaluated at the argument sizes: the affine size function applied at
the call site (memoised per callee and argument sizes; recursion falls back to the type).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from placement_cli.frontends.lower.flow import body_flow, worklist
from placement_cli.frontends.lower.ir import (
    K_ARG,
    K_CONST,
    K_ENV,
    K_FN,
    K_VERTEX,
    BodyIR,
    FileIR,
    Op,
)
from placement_cli.frontends.lower.types import UNKNOWN as UNKNOWN_TY
from placement_cli.frontends.lower.types import Ty, Types

if TYPE_CHECKING:
    from placement_cli.frontends.lower.split import Piece

Size = tuple[float, float, float, float]
INF = math.inf
ONE: Size = (1.0, 1.0, 1.0, 1.0)
ZERO: Size = (0.0, 0.0, 1.0, 1.0)
WIDEN_AFTER = 4


def static_size(t: Ty, types: Types, seen: frozenset[str] = frozenset()) -> Size:
    """Units and cardinality from the type alone.

    >>> from placement_cli.frontends.lower.types import Types
    >>> ts = Types({}, [])
    >>> static_size(ts.parse({"tuple": ["int", "bool", "unit"]}, "t"), ts)
    (2.0, 2.0, 1.0, 1.0)
    >>> static_size(ts.parse({"list": "int"}, "t"), ts)
    (0.0, inf, 0.0, inf)
    """
    k = t.kind
    if k == "ref":
        if t.name in seen:
            return (0.0, INF, 1.0, 1.0)
        return static_size(types.resolve(t), types, seen | {t.name})
    if k == "prim":
        return ZERO if t.name == "unit" else ONE
    if k == "closure":
        return ONE
    if k == "unknown":
        return (0.0, INF, 1.0, 1.0)
    if k in ("struct", "tuple"):
        lo = hi = 0.0
        for i in t.items:
            s = static_size(i, types, seen)
            lo += s[0]
            hi += s[1]
        return (lo, hi, 1.0, 1.0)
    if k in ("list", "dict"):
        hi = sum(static_size(i, types, seen)[1] for i in t.items)
        return (0.0, INF if hi > 0 else 0.0, 0.0, INF)
    if k == "union":
        return hull([static_size(i, types, seen) for i in t.items])
    if k == "opaque":
        return static_size(t.items[0], types, seen) if t.items else (0.0, INF, 1.0, 1.0)
    return (0.0, INF, 1.0, 1.0)


def hull(sizes: list[Size]) -> Size:
    return (
        min(s[0] for s in sizes),
        max(s[1] for s in sizes),
        min(s[2] for s in sizes),
        max(s[3] for s in sizes),
    )


def _widen(old: Size, new: Size) -> Size:
    """Every bound that moved jumps to its limit (0 below, unbounded above)."""
    return (
        0.0 if new[0] < old[0] else new[0],
        INF if new[1] > old[1] else new[1],
        0.0 if new[2] < old[2] else new[2],
        INF if new[3] > old[3] else new[3],
    )


class SizeAnalysis:
    """Dynamic sizes of every local of every body, evaluated on demand."""

    def __init__(
        self, fir: FileIR, path_size: tuple[tuple[float, float], ...], path_names: tuple[str, ...]
    ) -> None:
        self.fir = fir
        self.path_names = path_names
        self.types = fir.types
        self.path_size = path_size
        self.by_name = {b.name: b for b in fir.bodies}
        self.memo: dict[tuple[str, tuple[Size, ...]], Size] = {}
        self.static_memo: dict[int, Size] = {}
        self.active: set[str] = set()

    def body_sizes(self, body: BodyIR, arg_sizes: list[Size]) -> list[Size]:
        types = self.types
        n = len(body.locals)
        memo = self.static_memo

        def static_of(t: Ty) -> Size:
            got = memo.get(id(t))  # by id: parsed types are shared, and kept alive by the file
            if got is None:
                got = memo[id(t)] = static_size(t, types)
            return got

        static = [static_of(t) for t in body.types]
        size: list[Size | None] = [None] * n
        for a, s in zip(body.args, arg_sizes, strict=False):
            size[a] = s
        for a in body.args:
            if size[a] is None:
                size[a] = static[a]
        blocks = body.blocks
        flow = body_flow(body)
        incoming = flow.incoming
        rounds = [0] * n
        multi = body.multi

        def opsize(op: Op) -> Size | None:
            k = op.kind
            if k == K_CONST:
                return ZERO if op.text == "()" else ONE
            if k == K_FN:
                return ONE
            if k == K_VERTEX:
                if op.extra >= 0 and op.text.split(".", 1)[1] == self.path_names[op.extra]:
                    lo, hi = self.path_size[op.extra]
                    return (lo, hi, 1.0, 1.0)
                # unresolved, or deeper than the declared path: the type's size
                return static_of(op.ty) if op.ty is not None else (0.0, INF, 1.0, 1.0)
            if k == K_ENV or op.text != body.locals[op.local]:
                return static_of(op.ty) if op.ty is not None else ONE
            return size[op.local]

        def visit(b: int) -> list[int]:
            blk = blocks[b]
            moved: list[int] = []
            for k, p in enumerate(blk.params):
                got: list[Size] = []
                for _, args, gr in incoming[b]:
                    sz = static[p] if gr else opsize(args[k])
                    if sz is not None:
                        got.append(sz)
                if not got:
                    continue
                new: Size = hull(got)
                old = size[p]
                if old is not None:
                    new = hull([old, new])
                    if new != old:
                        rounds[p] += 1
                        if rounds[p] > WIDEN_AFTER:
                            new = _widen(old, new)
                if new != old:
                    size[p] = new
                    moved.append(p)
            for st in blk.stmts:
                if st.lhs < 0:
                    continue
                o0 = st.ops[0] if st.ops else None
                if (
                    st.kind == "load"
                    and o0 is not None
                    and o0.kind == K_VERTEX
                    and o0.ty == UNKNOWN_TY
                    and (o0.extra < 0 or o0.text.split(".", 1)[1] != self.path_names[o0.extra])
                ):
                    new2: Size | None = static[
                        st.lhs
                    ]  # a part of a path, of unknown type: the local's type
                else:
                    new2 = self._stmt_size(
                        st.kind, st.agg, st.callee, st.ops, opsize, static[st.lhs]
                    )
                if new2 is not None and st.lhs in multi:
                    # assigned in several places (not SSA): the hull of every definition,
                    # widened like a growing parameter so the worklist ends
                    old2 = size[st.lhs]
                    if old2 is not None:
                        new2 = hull([old2, new2])
                        if new2 != old2:
                            rounds[st.lhs] += 1
                            if rounds[st.lhs] > WIDEN_AFTER:
                                new2 = _widen(old2, new2)
                if new2 is not None and new2 != size[st.lhs]:
                    size[st.lhs] = new2
                    moved.append(st.lhs)
            return moved

        # A block is revisited only when a local it reads changed size.
        worklist(flow, len(blocks), visit)
        return [static[i] if x is None else x for i, x in enumerate(size)]

    def _stmt_size(
        self, kind: str, agg: str, callee: str | None, ops: tuple[Op, ...], opsize, static: Size
    ) -> Size | None:  # type: ignore[no-untyped-def]
        if kind == "load":
            return opsize(ops[0])  # type: ignore[no-any-return]
        if kind == "aggregate":
            got = [opsize(o) for o in ops]
            if any(g is None for g in got):
                return None
            lo = float(sum(g[0] for g in got))
            hi = float(sum(g[1] for g in got))
            if agg == "list":
                return (lo, hi, float(len(ops)), float(len(ops)))
            if agg == "dict":
                return (lo, hi, float(len(ops) // 2), float(len(ops) // 2))
            if agg == "closure":
                return (lo + 1, hi + 1, 1.0, 1.0)
            return (lo, hi, 1.0, 1.0)
        if kind == "apply" and callee is not None:
            args = [opsize(o) for o in ops[1:]]
            if any(a is None for a in args):
                return None
            return self.call(callee, args, static)
        return static

    def call(self, callee: str, args: list[Size], fallback: Size) -> Size:
        """The callee's return size at these argument sizes."""
        key = (callee, tuple(args))
        got = self.memo.get(key)
        if got is not None:
            return got
        body = self.by_name.get(callee)
        if body is None or callee in self.active:
            return fallback
        self.active.add(callee)
        try:
            sizes = self.body_sizes(body, args)
            rets = []
            for blk in body.blocks:
                if blk.term == "return":
                    op = blk.term_op
                    if op is None:
                        rets.append(ZERO)
                    elif op.kind in (K_CONST, K_FN):
                        rets.append(ONE)
                    elif op.kind == K_ARG or op.text == body.locals[op.local]:
                        rets.append(sizes[op.local])
                    else:
                        rets.append(static_size(op.ty, self.types) if op.ty is not None else ONE)
            out = hull(rets) if rets else fallback
        finally:
            self.active.discard(callee)
        self.memo[key] = out
        return out


def liveness(body: BodyIR, pieces: list[Piece], succ: list[list[int]]) -> list[set[int]]:
    """live_in per piece over the non-argument locals (arguments are not transferred:
    the environment counts 0 and the vertex is charged per block as the path premium)."""
    blocks = body.blocks
    args = set(body.args)
    gen: list[set[int]] = []
    kill: list[set[int]] = []
    for pc in pieces:
        blk = blocks[pc.orig]
        g: set[int] = set()
        kl: set[int] = set(blk.params) if pc.start == 0 else set()
        for s in blk.stmts[pc.start : pc.end]:
            for op in s.ops:
                if op.local >= 0 and op.local not in kl and op.local not in args:
                    g.add(op.local)
            if s.lhs >= 0:
                kl.add(s.lhs)
        if pc.term:
            ops = ([blk.term_op] if blk.term_op is not None else []) + [
                o for _, a in blk.succ for o in a
            ]
            for op in ops:
                if op.local >= 0 and op.local not in kl and op.local not in args:
                    g.add(op.local)
        gen.append(g)
        kill.append(kl)
    n = len(pieces)
    live_in: list[set[int]] = [set(g) for g in gen]
    changed = True
    while changed:
        changed = False
        for p in range(n - 1, -1, -1):
            out: set[int] = set()
            for q in succ[p]:
                out |= live_in[q]
            new = gen[p] | (out - kill[p])
            if len(new) != len(live_in[p]):
                live_in[p] = new
                changed = True
    return live_in
