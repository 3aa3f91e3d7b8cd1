"""The checked, indexed form of a body file for `lower`: locals and blocks are indices,
operands are classified once (local, env field, vertex path, argument, constant,
function). `compile.compile_file` builds it; `flow.body_flow` gives a body's control flow.

`op_text` and `render` give an operand and a statement as the plan's text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from placement_cli.formats.body_structs import Statement, is_const, is_fn
from placement_cli.frontends.lower.types import Ty, Types

# operand kinds
K_LOCAL, K_ARG, K_ENV, K_VERTEX, K_CONST, K_FN = range(6)


@dataclass(frozen=True, slots=True)
class Op:
    kind: int
    local: int  # -1 for constants
    ty: Ty | None  # None: a constant (always equality-safe)
    extra: int = 0  # K_ENV: 1 when the field is representable; K_VERTEX: path index or -1
    text: str = ""


@dataclass(slots=True)
class Stmt:
    kind: str  # load unary binary aggregate apply input storage nop
    lhs: int  # -1 for storage/nop
    ops: tuple[Op, ...]
    text: str
    eq_unsafe: bool = False  # a ==/!= whose operand types can collide in jsonb
    closure: bool = False  # a closure aggregate
    callee: str | None = None  # apply of a function-pointer constant
    agg: str = ""  # aggregate kind


@dataclass(slots=True)
class Blk:
    id: str
    params: list[int]
    stmts: list[Stmt]
    term: str
    term_op: Op | None
    succ: list[tuple[int, tuple[Op, ...]]]
    term_text: str = ""


@dataclass(slots=True)
class Flow:
    """A body's control flow, computed once (`body_flow`) and shared by the dominance
    check, the eligibility and the size analyses."""

    order: list[int]  # reverse postorder of the reachable blocks
    rpo_num: list[int]  # each block's position in `order`; -1: unreachable
    incoming: list[list[tuple[int, tuple[Op, ...], bool]]]  # per block: (pred, args, graph read)
    users: list[list[int]]  # per local: see `local_users`


@dataclass(slots=True)
class BodyIR:
    name: str
    locals: list[str]
    types: list[Ty]
    args: list[int]
    env: int
    vertex: int
    entry: int
    blocks: list[Blk]
    index: dict[str, int] = field(default_factory=dict)
    ser_safe: list[bool] = field(default_factory=list)
    multi: frozenset[int] = frozenset()  # locals defined more than once: the body is not SSA
    flow: Flow | None = None  # see `body_flow`


@dataclass(slots=True)
class FileIR:
    name: str | None
    bodies: list[BodyIR]
    place: int
    types: Types
    path_types: list[Ty]
    warnings: list[tuple[str, str, str]] = field(default_factory=list)  # (code, block id, message)


def op_text(raw: object) -> str:
    if isinstance(raw, str):
        return raw
    if is_fn(raw):
        return f"fn {raw.fn}"
    if is_const(raw):
        v = raw.const
        return (
            "()"
            if v is None
            else (
                "true"
                if v is True
                else "false"
                if v is False
                else repr(v)
                if isinstance(v, str)
                else str(v)
            )
        )
    return str(raw)


def render(st: Statement, k: str) -> str:
    """The statement as one line of text (the plan's `text` when the file gives none)."""
    if st.text is not None:
        return st.text
    if st.assign is None:
        if st.nop:
            return "nop"
        return (
            f"storage_live({st.storage_live})"
            if st.storage_live
            else f"storage_dead({st.storage_dead})"
        )
    if k == "load":
        rhs = st.load if isinstance(st.load, str) else op_text(st.load)
    elif k == "unary" and st.unary is not None:
        rhs = f"{st.unary.op}{op_text(st.unary.operand)}"
    elif k == "binary" and st.binary is not None:
        left, right = st.binary.left, st.binary.right
        rhs = (
            f"{left if isinstance(left, str) else op_text(left)} {st.binary.op} "
            f"{right if isinstance(right, str) else op_text(right)}"
        )
    elif k == "aggregate" and st.aggregate is not None:
        a = st.aggregate
        rhs = f"{a.kind}({', '.join(op_text(o) for o in a.operands)})"
    elif k == "apply" and st.apply is not None:
        rhs = f"apply {op_text(st.apply.func)}({', '.join(op_text(o) for o in st.apply.args)})"
    else:
        rhs = f"input {st.input}"
    return f"{st.assign} = {rhs}"
