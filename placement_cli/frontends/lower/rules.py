"""Why a target cannot run a statement, a terminator or a block parameter: the rule of
the eligibility analysis that rules it out, one registered code per rule
(`placement codes RULE`; the wording `explain` prints is `core.rule_codes.RULE_WORDS`).

`analyse` (eligibility.py) decides *whether*; this module says *why*, for what it
excluded only, by asking the same questions in the same order as `_Rules.op_ok`,
`stmt_ok` and `term_ok` against the same final dispatchable sets (a property test holds
the two together: a reason exactly where the support says no). A rule that holds because
an operand is a local the target cannot compute is `excluded-operand`, with the local
(`via`) and where it is defined (`at`: `[block, statement]`, or `[block]` for a block
parameter), so `explain` can follow it to the rule at its root; `unsupported-kind`
names the statement's or terminator's `kind`.

The record, `lower.excluded` (model: `formats/lower_rules.py`), per original block, only
what is excluded: `statements` (index -> target -> exclusion), `terminator` (target ->
exclusion), `params` (local -> target -> exclusion; `edge`: the incoming edge's
source block), and, for a body read from the
compiler's MIR text, `text` (index -> the statement in MIR terms).
"""

from __future__ import annotations

from typing import Any

from placement_cli.formats.body_structs import Body, Statement, is_const, is_fn
from placement_cli.frontends.lower.eligibility import Eligibility, _Rules, universal
from placement_cli.frontends.lower.ir import K_ARG, K_CONST, K_ENV, K_FN, K_VERTEX, BodyIR, Op, Stmt
from placement_cli.frontends.lower.profile import Compiled

# Block-level rules of a target (enforced by the transition matrices, applied by prune).
LOOP_BANNED = "loop-banned"
NOT_ENTERABLE = "not-enterable"


def op_why(R: _Rules, op: Op, bits: list[bool], no_return: bool) -> str | None:
    """The rule that makes operand `op` unreadable on R's target (None: readable)."""
    k = op.kind
    if k == K_CONST:
        return None if R.const_prim else "no-constants"
    if k == K_FN:
        return None if R.const_fn else ("no-function-pointers" if R.const_prim else "no-constants")
    if bits[op.local]:
        return None
    if k == K_ENV and R.native:
        if not R.env_fields:
            return "no-env-fields"
        return None if op.extra == 1 else "unrepresentable-env-field"
    if k == K_VERTEX and R.native:
        if op.extra < 0:
            return "unresolvable-path"
        return None if R.origin[op.extra] >> R.t & 1 else "path-not-stored"
    if k in (K_ARG, K_ENV, K_VERTEX):
        return "whole-argument" if R.native else "unreadable-argument"
    return "no-return" if no_return else "excluded-operand"


def stmt_why(
    R: _Rules, s: Stmt, bits: list[bool], ser_safe: list[bool], no_return: bool
) -> tuple[str, Op | None] | None:
    """(rule, the operand it is about) for a statement R's target cannot run; None: it can.
    The order is `_Rules.stmt_ok`'s."""
    if s.kind not in R.kinds:
        if s.kind == "apply":
            return "no-calls", None
        if s.closure:
            return "no-closures", None
        return "unsupported-kind", None
    if s.lhs < 0:
        return None
    for op in s.ops:
        why = op_why(R, op, bits, no_return)
        if why is not None:
            return why, op
    if s.eq_unsafe and R.eq:
        return "equality-unsafe", None
    if s.closure and not R.closures:
        return "no-closures", None
    if s.kind == "apply" and not R.calls:
        return "no-calls", None
    if R.ser and not ser_safe[s.lhs]:
        return "serialization-unsafe", None
    return None


def term_why(
    R: _Rules, body: BodyIR, b: int, bits: list[bool], no_return: bool
) -> tuple[str, Op | None] | None:
    """The order of `_Rules.term_ok`."""
    blk = body.blocks[b]
    if blk.term == "graph_read":
        return None if blk.term in R.terms and R.effects else ("effectful", None)
    if blk.term not in R.terms:
        return "unsupported-kind", None
    ops = [blk.term_op] if blk.term_op is not None else []
    ops.extend(op for _, args in blk.succ for op in args)
    for op in ops:
        why = op_why(R, op, bits, no_return)
        if why is not None:
            return why, op
    return None


def _mir_namer(body: BodyIR, src: Body) -> dict[str, str]:
    """Body-format local name -> the compiler's `%N` (the MIR reader names a let `_N`
    and the arguments by their role, in order)."""
    names = {}
    for i, a in enumerate(
        src.args if src.args is not None else [body.locals[x] for x in body.args]
    ):
        names[a] = f"%{i}"
    for nm in body.locals:
        if nm not in names and nm[:1] == "_" and nm[1:].isdigit():
            names[nm] = "%" + nm[1:]
    return names


def _mir_op(raw: object, names: dict[str, str]) -> str:
    if is_const(raw):
        v = raw.const
        if v is None or isinstance(v, bool):
            return "null" if v is None else ("true" if v else "false")
        return f'"{v}"' if isinstance(v, str) else str(v)
    if is_fn(raw):
        return f"({raw.fn} as FnPtr)"
    head, dot, rest = str(raw).partition(".")
    return names.get(head, head) + dot + rest


def mir_statement(st: Statement, names: dict[str, str], closure_call: bool = False) -> str:
    """A statement as the compiler's MIR printer writes it (`%3 = apply %2.0 %2.1 12`)."""
    if st.assign is None:
        if st.nop:
            return "nop"
        nm = st.storage_live or st.storage_dead or ""
        return f"{'let' if st.storage_live else 'drop'} {names.get(nm, nm)}"

    def o(x: object) -> str:
        return _mir_op(x, names)

    lhs = names.get(st.assign, st.assign)
    if st.load is not None:
        rhs = o(st.load)
    elif st.unary is not None:
        rhs = f"{st.unary.op}{o(st.unary.operand)}"
    elif st.binary is not None:
        rhs = f"{o(st.binary.left)} {st.binary.op} {o(st.binary.right)}"
    elif st.apply is not None:
        f, args = st.apply.func, [o(a) for a in st.apply.args]
        if closure_call:  # a closure is (function pointer, environment)
            rhs = " ".join(["apply", f"{o(f)}.0", f"{o(f)}.1", *args])
        else:
            rhs = " ".join(["apply", o(f), *args])
    elif st.aggregate is not None:
        ag = st.aggregate
        ops = [o(x) for x in ag.operands]
        if ag.kind == "struct" and ag.fields:
            rhs = "(" + ", ".join(f"{k}: {v}" for k, v in zip(ag.fields, ops, strict=False)) + ")"
        elif ag.kind == "tuple":
            rhs = "(" + ", ".join(ops) + ")"
        elif ag.kind == "dict":
            rhs = (
                "dict("
                + ", ".join(f"{ops[i]}: {ops[i + 1]}" for i in range(0, len(ops) - 1, 2))
                + ")"
            )
        else:
            rhs = f"{ag.kind}(" + ", ".join(ops) + ")"
    else:
        name = st.input or ""
        exists = name.startswith("exists(") and name.endswith(")")
        rhs = f"input EXISTS {name[7:-1]}" if exists else f"input LOAD {name}"
    return f"{lhs} = {rhs}"


def _closure_call(s: Stmt) -> bool:
    ty = s.ops[0].ty if s.kind == "apply" and s.ops else None
    return ty is not None and ty.kind == "closure"


def exclusions(
    body: BodyIR, prof: Compiled, elig: Eligibility, src: Body | None = None
) -> dict[str, Any]:
    """`lower.excluded`: per original block, the rule behind every target a statement,
    the terminator or a block parameter is excluded from. `src`: the body as read from
    the compiler's MIR text (its statements are then also given in MIR terms)."""
    blocks = body.blocks
    n_loc = len(body.locals)
    names = body.locals
    mir = _mir_namer(body, src) if src is not None else None

    def shown(x: int) -> str:
        nm = names[x]
        return mir.get(nm, nm) if mir is not None else nm

    # where each local is defined: [block, statement] or [block] for a parameter (the
    # first definition in block order: the only one when the body is SSA)
    at: list[list[Any] | None] = [None] * n_loc
    for blk in blocks:
        for p in blk.params:
            if at[p] is None:
                at[p] = [blk.id]
        for j, s in enumerate(blk.stmts):
            if s.lhs >= 0 and at[s.lhs] is None:
                at[s.lhs] = [blk.id, j]

    has_return = any(blk.term == "return" for blk in blocks)
    rules = [_Rules(prof, t) for t in range(prof.n)]
    fl = [list(f) for f in elig.final]
    ser = body.ser_safe
    memo: dict[tuple[str, int, str], dict[str, Any]] = {}

    def record(rule: str, op: Op | None, kind: str = "") -> dict[str, Any]:
        x = op.local if op is not None and rule == "excluded-operand" else -1
        got = memo.get((rule, x, kind))
        if got is None:
            got = {"code": rule}
            if x >= 0:
                got["via"] = shown(x)
                if at[x] is not None:
                    got["at"] = at[x]
            if kind:
                got["kind"] = kind
            memo[rule, x, kind] = got
        return got

    out: dict[str, Any] = {}
    tnames = prof.names
    full = (1 << prof.n) - 1
    no_return = not has_return
    # Most exclusions are a kind the target does not run (embedding runs loads only):
    # decided by (kind, closure) alone, once per target. A target without analysis (it
    # runs everything) is never excluded and is not asked.
    cands = [
        (t, R, tnames[t], R.kinds, fl[t])
        for t, R in enumerate(rules)
        if not universal(prof.rules[t])
    ]
    by_kind: dict[tuple[int, str, bool], dict[str, Any]] = {}
    idx = [str(j) for j in range(max((len(blk.stmts) for blk in blocks), default=0))]

    for b, blk in enumerate(blocks):
        entry: dict[str, Any] = {}
        sup = elig.stmt_support[b]
        stmts: dict[str, Any] = {}
        for j, s in enumerate(blk.stmts):
            m = sup[j]
            if m == full:
                continue
            row = {}
            for t, R, name, kinds, bits in cands:
                if m >> t & 1:
                    continue
                if s.kind not in kinds:
                    key = (t, s.kind, s.closure)
                    rec = by_kind.get(key)
                    if rec is None:
                        why = stmt_why(R, s, bits, ser, no_return)
                        assert why is not None
                        rec = by_kind[key] = record(
                            *why, s.kind if why[0] == "unsupported-kind" else ""
                        )
                    row[name] = rec
                    continue
                why = stmt_why(R, s, bits, ser, no_return)
                if why is None:  # (the support and the rules disagree: a bug)
                    why = ("excluded-operand", None)
                row[name] = record(*why, s.kind if why[0] == "unsupported-kind" else "")
            stmts[idx[j]] = row
        if stmts:
            entry["statements"] = stmts
            if src is not None and mir is not None:
                sts = src.blocks[b].statements
                entry["text"] = {
                    k: mir_statement(sts[int(k)], mir, _closure_call(blk.stmts[int(k)]))
                    for k in stmts
                }
        tm = elig.term_support[b]
        if tm != full:
            row = {}
            for t, R in enumerate(rules):
                if not tm >> t & 1:
                    why = term_why(R, body, b, fl[t], no_return) or ("excluded-operand", None)
                    row[tnames[t]] = record(*why, blk.term if why[0] == "unsupported-kind" else "")
            entry["terminator"] = row
        params: dict[str, Any] = {}
        for k, p in enumerate(blk.params):
            row = {}
            for t, R in enumerate(rules):
                if fl[t][p]:
                    continue
                row[tnames[t]] = _param_why(R, body, b, k, p, fl[t], no_return, record)
            if row:
                params[shown(p)] = row
        if params:
            entry["params"] = params
        if entry:
            out[blk.id] = entry
    return out


def _param_why(
    R: _Rules, body: BodyIR, b: int, k: int, p: int, bits: list[bool], no_return: bool, record: Any
) -> dict[str, Any]:
    """Why block parameter `p` (the `k`th of block `b`) is not dispatchable: the first
    incoming edge whose argument the target cannot compute, a graph read that fills it,
    or its type."""
    if no_return:
        return record("no-return", None)  # type: ignore[no-any-return]
    if R.ser and not body.ser_safe[p]:
        return record("serialization-unsafe", None)  # type: ignore[no-any-return]
    flow = body.flow
    incoming = flow.incoming[b] if flow is not None else []
    for u, args, gr in incoming:
        if gr:
            rec = dict(record("effectful", None))
            rec["edge"] = body.blocks[u].id
            return rec
        why = op_why(R, args[k], bits, no_return)
        if why is not None:
            rec = dict(record(why, args[k]))
            rec["edge"] = body.blocks[u].id
            return rec
    if body.vertex == p or body.env == p or p in body.args:
        return record("whole-argument" if R.native else "unreadable-argument", None)  # type: ignore[no-any-return]
    return record("excluded-operand", None)  # type: ignore[no-any-return]


def target_rules(prof: Compiled) -> dict[str, list[str]]:
    """`lower.target_rules`: the block-level rules each target is under (the transition
    matrices enforce them; prune removes the target from the blocks they rule out)."""
    out: dict[str, list[str]] = {}
    for name, r in zip(prof.names, prof.rules, strict=True):
        got = ([NOT_ENTERABLE] if not r.enterable else []) + ([LOOP_BANNED] if not r.loops else [])
        if got:
            out[name] = got
    return out
