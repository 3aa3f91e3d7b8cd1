"""A checked body's control flow: reverse postorder, predecessors, dominators and the
blocks that read each local (`body_flow`, computed once and shared by the dominance
check, the eligibility and the size analyses).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable

from placement_cli.frontends.lower.ir import Blk, BodyIR, Flow, Op
from placement_cli.ir import cfg


def dom_intervals(idom: list[int], num: list[int], entry: int) -> tuple[list[int], list[int]]:
    """Pre/post numbers of the dominator tree: a dominates b iff b's interval nests in a's."""
    n = len(idom)
    kids: list[list[int]] = [[] for _ in range(n)]
    for b in range(n):
        if num[b] >= 0 and b != entry:
            kids[idom[b]].append(b)
    pre = [-1] * n
    post = [-1] * n
    clock = 0
    stack = [(entry, 0)]
    pre[entry] = clock
    clock += 1
    while stack:
        u, k = stack[-1]
        if k < len(kids[u]):
            stack[-1] = (u, k + 1)
            v = kids[u][k]
            pre[v] = clock
            clock += 1
            stack.append((v, 0))
        else:
            stack.pop()
            post[u] = clock
            clock += 1
    return pre, post


def dominators(blocks: list[Blk], entry: int) -> tuple[list[int], list[int]]:
    """Immediate dominators over the reachable blocks (`placement_cli.ir.cfg.dominators`).
    Returns (idom, rpo number); unreachable blocks have rpo number -1."""
    n = len(blocks)
    order = reverse_postorder(blocks, entry)
    num = rpo_numbers(order, n)
    preds: list[list[int]] = [[] for _ in range(n)]
    for u in order:
        for v, _ in blocks[u].succ:
            if v >= 0:
                preds[v].append(u)
    return cfg.dominators(entry, order, preds, n), num


def rpo_numbers(order: list[int], n: int) -> list[int]:
    """Each block's position in the reverse postorder `order`; -1 for a block not in it.

    >>> rpo_numbers([2, 0], 3)
    [1, -1, 0]
    """
    num = [-1] * n
    for k, b in enumerate(order):
        num[b] = k
    return num


def local_users(blocks: list[Blk], order: list[int], n_loc: int) -> list[list[int]]:
    """Per local, the blocks a forward worklist revisits when the local's value changes:
    those with a statement reading it, and the targets of edges passing it as an
    argument (in `order`, repeats kept: revisiting is idempotent). The eligibility and
    size analyses share it.

    >>> from placement_cli.frontends.lower.ir import K_LOCAL, Stmt
    >>> x = Op(K_LOCAL, 0, None)
    >>> b = [Blk("a", [], [], "goto", None, [(1, (x,))]), Blk("b", [1], [Stmt("load", 2, (x,), "")], "return", None, [])]
    >>> local_users(b, [0, 1], 3)
    [[1, 1], [], []]
    """
    users: list[list[int]] = [[] for _ in range(n_loc)]
    for u in order:
        for st in blocks[u].stmts:
            for op in st.ops:
                if op.local >= 0:
                    users[op.local].append(u)
        for v, args in blocks[u].succ:
            for op in args:
                if op.local >= 0:
                    users[op.local].append(v)
    return users


def body_flow(body: BodyIR) -> Flow:
    """The body's `Flow`, computed on first use (a body's blocks do not change after
    `compile_file`)."""
    f = body.flow
    if f is None:
        blocks = body.blocks
        order = reverse_postorder(blocks, body.entry)
        incoming: list[list[tuple[int, tuple[Op, ...], bool]]] = [[] for _ in blocks]
        for u in order:
            gr = blocks[u].term == "graph_read"
            for v, args in blocks[u].succ:
                if v >= 0:
                    incoming[v].append((u, args, gr))
        users = local_users(blocks, order, len(body.locals))
        f = body.flow = Flow(order, rpo_numbers(order, len(blocks)), incoming, users)
    return f


def reverse_postorder(blocks: list[Blk], entry: int) -> list[int]:
    """Reverse postorder from `entry`, successors in listed order (unknown ones, -1, skipped)."""
    return cfg.reverse_postorder(entry, [[v for v, _ in b.succ if v >= 0] for b in blocks])


def worklist(flow: Flow, n_blocks: int, visit: Callable[[int], Iterable[int]]) -> None:
    """A forward dataflow to its fixpoint: every reachable block once in reverse
    postorder, then again only when a local it reads changed. `visit(b)` updates block
    b's facts and returns the locals whose value changed; the blocks that read them
    (`flow.users`) are queued, and the queue is always taken in reverse postorder. The
    eligibility and the size analyses run on it.

    >>> from placement_cli.frontends.lower.ir import K_LOCAL, Stmt
    >>> x = Op(K_LOCAL, 0, None)
    >>> b = [Blk("a", [], [], "goto", None, [(1, (x,))]), Blk("b", [1], [Stmt("load", 2, (x,), "")], "return", None, [])]
    >>> flow = Flow([0, 1], [0, 1], [[], [(0, (x,), False)]], local_users(b, [0, 1], 3))
    >>> seen = []
    >>> worklist(flow, 2, lambda blk: seen.append(blk) or ([0] if len(seen) == 1 else []))
    >>> seen
    [0, 1]
    """
    order, rpo_num, users = flow.order, flow.rpo_num, flow.users
    dirty = [True] * n_blocks
    heap = list(range(len(order)))
    while heap:
        b = order[heapq.heappop(heap)]
        dirty[b] = False
        for x in visit(b):
            for u in users[x]:
                if not dirty[u]:
                    dirty[u] = True
                    heapq.heappush(heap, rpo_num[u])
