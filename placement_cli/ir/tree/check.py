"""Checking a tree file (its `formats.tree_structs.TreeFile`) against itself: names
resolved (engines, children, explicit transfers), duplicates, sizes a transfer model
charges for, one root, no cycle, no sum that could overflow. Every problem at once, each with its field path;
the result is the indexed `TreeInput`.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter

import numpy as np

from placement_cli.core.errors import InputError, Problem
from placement_cli.formats.tree_structs import LinearTransfer, TreeFile
from placement_cli.ir.tree.model import INF, Explicit, TreeInput

FLOAT_MAX = 1.7976931348623157e308


@dataclass(frozen=True, slots=True)
class Raw:
    """Explicit transfers as columns, in input order."""

    child: list[str]
    src: list[str]
    dst: list[str]
    cost: np.ndarray


def check_tree(
    f: TreeFile, raw: Raw | None, source: str, pre: str, ref: dict[str, str]
) -> TreeInput:
    """The checked, indexed input of a type-checked file. `raw` holds the explicit
    transfers when the reader took them out of the document (`read._split_explicit`),
    None when they are still in `f`; `pre` is the field-path prefix of the file."""
    problems: list[Problem] = []
    eidx: dict[str, int] = {}
    for i, name in enumerate(f.engines):
        if name in eidx:
            problems.append(Problem(f"{pre}engines[{i}]", f"duplicate engine '{name}'"))
        else:
            eidx[name] = i

    ids = list(map(attrgetter("id"), f.nodes))
    index = dict(zip(ids, range(len(ids)), strict=True))
    if len(index) < len(ids):
        index = {}
        for i, node in enumerate(f.nodes):
            if node.id in index:
                problems.append(
                    Problem(
                        f"{pre}nodes[{i}].id",
                        f"duplicate id '{node.id}' (first at nodes[{index[node.id]}])",
                    )
                )
            else:
                index[node.id] = i

    times, kids, has_parent = _rows(f, eidx, index, pre, problems)

    problems += _check_linear(f, eidx, pre)
    if raw is None:
        ex = f.transfer.explicit
        raw = Raw(
            [x.child for x in ex],
            [x.from_ for x in ex],
            [x.to for x in ex],
            np.array([x.cost for x in ex], dtype=np.float64),
        )
    explicit, ex_problems = _explicit_arrays(raw, eidx, index, pre)
    problems += ex_problems
    problems += _check_sizes(f, has_parent, pre)

    post: list[int] = []
    cycle = _find_cycle(f, kids, index, pre, post)
    if cycle is not None:
        problems.append(cycle)

    root = -1
    if f.root is not None:
        if f.root in index:
            root = index[f.root]
        else:
            problems.append(Problem(f"{pre}root", f"unknown node '{f.root}'"))
    elif cycle is None:
        tops = [i for i in range(len(f.nodes)) if not has_parent[i]]
        if len(tops) == 1:
            root = tops[0]
        elif len(tops) > 1:
            shown = ", ".join(f"'{f.nodes[i].id}' (nodes[{i}])" for i in tops[:5])
            more = f" and {len(tops) - 5} more" if len(tops) > 5 else ""
            problems.append(
                Problem(
                    f"{pre}root",
                    f"several nodes have no parent: {shown}{more}; set `root` to the one to place",
                )
            )
    if not problems:
        over = _overflow(f, kids, times, has_parent, explicit, post, pre)
        if over is not None:
            problems.append(over)
    if problems:
        raise InputError(problems, source)
    return TreeInput(
        source=source,
        file=f,
        prefix=pre,
        engines=tuple(f.engines),
        ids=tuple(ids),
        kids=tuple(kids),
        time=tuple(times),
        root=root,
        explicit=explicit,
        ref=ref,
    )


def _rows(
    f: TreeFile, eidx: dict[str, int], index: dict[str, int], pre: str, problems: list[Problem]
) -> tuple[list[tuple[float, ...]], list[tuple[int, ...]], list[bool]]:
    """Each node's times by engine (INF where it cannot run), its children as indices
    and whether it has a parent; a problem for each unknown name."""
    n_e = len(f.engines)
    times: list[tuple[float, ...]] = []
    kids: list[tuple[int, ...]] = []
    has_parent = [False] * len(f.nodes)
    for i, node in enumerate(f.nodes):
        row = [INF] * n_e
        for name, t in node.time.items():
            e = eidx.get(name)
            if e is None:
                problems.append(Problem(f"{pre}nodes[{i}].time.{name}", f"unknown engine '{name}'"))
            elif t is not None:
                row[e] = float(t)
        times.append(tuple(row))
        ks = []
        for j, c in enumerate(node.children):
            x = index.get(c)
            if x is None:
                problems.append(Problem(f"{pre}nodes[{i}].children[{j}]", f"unknown node '{c}'"))
            else:
                ks.append(x)
                has_parent[x] = True
        kids.append(tuple(ks))
    return times, kids, has_parent


def _check_linear(f: TreeFile, eidx: dict[str, int], pre: str) -> list[Problem]:
    out = []
    for src, row in f.transfer.linear.items():
        if src not in eidx:
            out.append(Problem(f"{pre}transfer.linear.{src}", f"unknown engine '{src}'"))
        for dst in row:
            if dst not in eidx:
                out.append(Problem(f"{pre}transfer.linear.{src}.{dst}", f"unknown engine '{dst}'"))
            elif dst == src:
                out.append(
                    Problem(
                        f"{pre}transfer.linear.{src}.{dst}",
                        "same engine: an edge inside one engine is not a cut and costs nothing",
                    )
                )
    return out


def _explicit_arrays(
    raw: Raw, eidx: dict[str, int], index: dict[str, int], pre: str
) -> tuple[Explicit, list[Problem]]:
    """Resolve names to indices in bulk; problems (unknown names, same engine, duplicate
    keys) are looked for entry by entry only when the bulk checks find one."""
    n = len(index)
    if not len(raw.cost):
        return Explicit.empty(n), []
    child = np.array(list(map(index.get, raw.child, repeat(-1))), dtype=np.int64)
    src = np.array(list(map(eidx.get, raw.src, repeat(-1))), dtype=np.int64)
    dst = np.array(list(map(eidx.get, raw.dst, repeat(-1))), dtype=np.int64)
    cost = raw.cost
    out: list[Problem] = []
    bad = (child < 0) | (src < 0) | (dst < 0) | (src == dst)
    if bad.any():
        for i in np.flatnonzero(bad).tolist():
            at = f"{pre}transfer.explicit[{i}]"
            if child[i] < 0:
                out.append(Problem(f"{at}.child", f"unknown node '{raw.child[i]}'"))
            for field, name, arr in (("from", raw.src[i], src), ("to", raw.dst[i], dst)):
                if arr[i] < 0:
                    out.append(Problem(f"{at}.{field}", f"unknown engine '{name}'"))
            if raw.src[i] == raw.dst[i]:
                out.append(
                    Problem(
                        f"{at}.to",
                        "same engine as `from`: an edge inside one engine is not a cut and costs nothing",
                    )
                )
    n_e = len(eidx) + 1
    key = (child + 1) * n_e * n_e + (src + 1) * n_e + (dst + 1)
    order = np.argsort(key, kind="stable")
    sk = key[order]
    dup = np.flatnonzero(sk[1:] == sk[:-1]) + 1
    if len(dup):
        runs_start = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]])
        head = np.repeat(order[runs_start], np.diff(np.r_[runs_start, len(sk)]))
        found = sorted(zip(order[dup].tolist(), head[dup].tolist(), strict=True))
        for i, j in found:
            out.append(
                Problem(
                    f"{pre}transfer.explicit[{i}]",
                    f"duplicate transfer for child '{raw.child[i]}' from '{raw.src[i]}' to '{raw.dst[i]}' (first at transfer.explicit[{j}])",
                )
            )
    if out:
        out.sort(key=lambda p: _entry_pos(p.path))
        return Explicit.empty(n), out
    return Explicit.of(child, src, dst, cost, n), []


def _entry_pos(path: str) -> int:
    i = path.index("explicit[") + len("explicit[")
    return int(path[i : path.index("]", i)])


def _models(f: TreeFile) -> list[LinearTransfer]:
    ms = [m for row in f.transfer.linear.values() for m in row.values()]
    return ms + ([f.transfer.default] if f.transfer.default is not None else [])


def _check_sizes(f: TreeFile, has_parent: list[bool], pre: str) -> list[Problem]:
    """A child's output size is needed as soon as some linear model charges for it;
    guessing 0 rows would make every cut look free."""
    ms = _models(f)
    per_row = any(m.per_row > 0 for m in ms)
    per_width = any(m.per_width > 0 for m in ms)
    per_byte = any(m.per_byte > 0 for m in ms)
    out = []
    for i, node in enumerate(f.nodes):
        if not has_parent[i]:
            continue
        if (per_row or per_byte) and node.rows is None:
            why = "per_row" if per_row else "per_byte"
            out.append(
                Problem(f"{pre}nodes[{i}].rows", f"required: a linear transfer model has {why} > 0")
            )
        if (per_width or per_byte) and node.row_width is None:
            why = "per_byte" if per_byte else "per_width"
            out.append(
                Problem(
                    f"{pre}nodes[{i}].row_width", f"required: a linear transfer model has {why} > 0"
                )
            )
    return out


def _overflow(
    f: TreeFile,
    kids: list[tuple[int, ...]],
    times: list[tuple[float, ...]],
    has_parent: list[bool],
    ex: Explicit,
    post: list[int],
    pre: str,
) -> Problem | None:
    """Every number the DP forms is the latency of part of some placement, so it is at
    most the heaviest root-to-leaf path with each node at its largest finite time and
    each edge at its largest finite transfer. When that bound is finite no sum can
    overflow (and +inf keeps meaning "impossible"); otherwise the file is refused,
    naming the first subtree (children first) whose bound overflows."""
    ms = _models(f)
    n = len(f.nodes)
    with np.errstate(over="ignore", invalid="ignore"):
        up = np.full(
            n, max((m.fixed for m in ms), default=0.0)
        )  # largest finite transfer of each node's output
        rows = np.array([nd.rows or 0.0 for nd in f.nodes], dtype=np.float64)
        width = np.array([nd.row_width or 0.0 for nd in f.nodes], dtype=np.float64)
        for coef, x in (("per_row", rows), ("per_width", width), ("per_byte", None)):
            c = max((getattr(m, coef) for m in ms), default=0.0)
            if c:
                up += c * (rows * width if x is None else x)
        if len(ex):
            np.maximum.at(up, ex.child, ex.cost)
        up[~np.array(has_parent, dtype=bool)] = 0.0
        t = np.array(times, dtype=np.float64).reshape(n, -1)
        top = np.where(t < INF, t, 0.0).max(axis=1)
    up_l = up.tolist()
    top_l = top.tolist()
    bound = [0.0] * n
    for v in post:
        ks = kids[v]
        if not ks:
            b = top_l[v]
        elif len(ks) == 1:
            c = ks[0]
            b = top_l[v] + (bound[c] + up_l[c])
        else:
            b = top_l[v] + max([bound[c] + up_l[c] for c in ks])
        if not b <= FLOAT_MAX:  # inf or nan
            return Problem(
                f"{pre}nodes[{v}]",
                f"costs too large: a placement of the subtree under '{f.nodes[v].id}' can take longer than the largest "
                "finite number (about 1.8e308) of self-times and transfers, so latencies cannot be compared; "
                "scale the costs down (null, not a huge number, marks an engine that cannot run a node)",
            )
        bound[v] = b
    return None


def _find_cycle(
    f: TreeFile, kids: list[tuple[int, ...]], index: dict[str, int], pre: str, post: list[int]
) -> Problem | None:
    """The first cycle met by an iterative DFS in input order, as a Problem naming the
    node that is its own ancestor and the chain that proves it. Fills `post` with the
    nodes children first (complete only when there is no cycle)."""
    n = len(kids)
    color = [0] * n  # 0 new, 1 on the DFS stack, 2 done
    for start in range(n):
        if color[start]:
            continue
        stack = [(start, 0)]
        color[start] = 1
        while stack:
            v, j = stack[-1]
            if j < len(kids[v]):
                stack[-1] = (v, j + 1)
                c = kids[v][j]
                if color[c] == 1:
                    chain = [x for x, _ in stack]
                    chain = chain[chain.index(c) :] + [c]
                    names = " -> ".join(f.nodes[x].id for x in chain)
                    pos = _child_pos(f, v, c, index)
                    return Problem(
                        f"{pre}nodes[{v}].children[{pos}]",
                        f"cycle: node '{f.nodes[c].id}' is its own ancestor ({names})",
                    )
                if color[c] == 0:
                    color[c] = 1
                    stack.append((c, 0))
            else:
                color[v] = 2
                post.append(v)
                stack.pop()
    return None


def _child_pos(f: TreeFile, v: int, c: int, index: dict[str, int]) -> int:
    for j, name in enumerate(f.nodes[v].children):
        if index.get(name) == c:
            return j
    return 0  # unreachable: c was found among v's children
