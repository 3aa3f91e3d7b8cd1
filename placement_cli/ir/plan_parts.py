"""The semantic checks of a plan's parts other than its blocks' costs, each with what it
builds (`build_graph` runs them in the plan's order, so problems keep that order): the
targets, the block ids and the entry, the transition matrices, the paths, and each
block's paths and terminator. Every check adds its problems to one `Checker`. The plan
is a `structs.Plan` (msgspec checked its types): nothing here checks a type.
"""

from __future__ import annotations

from itertools import chain
from operator import itemgetter
from typing import Any, cast

from msgspec.json import encode as dumps

from placement_cli.core.errors import Problem
from placement_cli.ir.indexed import Matrix, identity_matrix, make_matrix

SUCCESSOR_COUNT = {
    "goto": (1, 1),
    "graph_read": (1, 1),
    "switch": (1, None),
    "return": (0, 0),
    "unreachable": (0, 0),
}


class Checker:
    """The problems found so far, in the order the plan's parts were read."""

    __slots__ = ("problems",)

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append(Problem(path, message))


def target_index(targets: tuple[str, ...], p: str, chk: Checker) -> dict[str, int]:
    """Target -> its index (the first of duplicates, each duplicate a problem)."""
    tindex: dict[str, int] = {}
    for i, t in enumerate(targets):
        if t in tindex:
            chk.add(f"{p}targets[{i}]", f"duplicate target '{t}'")
        else:
            tindex[t] = i
    return tindex


def block_index(
    blocks: list[Any], p: str, chk: Checker
) -> tuple[list[str], list[int], dict[str, int]]:
    """The block ids, each block's parameter count, and id -> index (duplicates are
    problems). Ids and parameter counts are read across blocks (an edge's destination),
    in one pass before the blocks' own."""
    ids = []
    nparams = []
    for b in blocks:
        ids.append(b.id)
        nparams.append(len(b.params))
    index = dict(zip(ids, range(len(ids)), strict=True))
    if len(index) != len(ids):
        index = {}
        for i, bid in enumerate(ids):
            if bid in index:
                chk.add(
                    f"{p}blocks[{i}].id",
                    f"duplicate block id '{bid}' (first at blocks[{index[bid]}])",
                )
            else:
                index[bid] = i
    return ids, nparams, index


def entry_index(doc: Any, index: dict[str, int], p: str, chk: Checker) -> int:
    """The entry block's index: the plan's `entry`, else the first block."""
    plan_entry = doc.entry
    if plan_entry is None:
        return 0
    if plan_entry in index:
        return index[plan_entry]
    chk.add(f"{p}entry", f"unknown block '{plan_entry}'")
    return 0


def matrix_cost(
    raw: dict[str, dict[str, float]], path: str, tindex: dict[str, int], n: int, chk: Checker
) -> tuple[float | None, ...]:
    """A transition matrix's flat cost table (None: not allowed), its problems reported."""
    cost: list[float | None] = [None] * (n * n)
    for src, row in raw.items():
        s = tindex.get(src)
        if s is None:
            chk.add(f"{path}.{src}", f"unknown target '{src}'")
            continue
        for dst, c in row.items():
            d = tindex.get(dst)
            if d is None:
                chk.add(f"{path}.{src}.{dst}", f"unknown target '{dst}'")
                continue
            if s == d and c != 0:
                chk.add(f"{path}.{src}.{dst}", f"a same-target transition costs 0, not {c:g}")
                c = 0.0
            cost[s * n + d] = float(c)
    return tuple(cost)


class _Shape:
    """What an explicit matrix's layout (its targets and each row's, in file order)
    decides, worked out once per layout: `gather` picks the flat cost table out of the
    matrix's values listed row by row (with a None appended for every entry not given),
    `diagonal` picks the values a same-target transition has, and `out`/`inc` are the
    allowed destinations and sources (`indexed.Matrix`)."""

    __slots__ = ("gather", "diagonal", "zeros", "out", "inc")

    def __init__(self, positions: list[int], n: int) -> None:
        given = len(positions)
        where = [given] * (n * n)  # index of the value at each flat position
        for j, at in enumerate(positions):
            where[at] = j
        # (`itemgetter` of one index gives the item, not a tuple: one target's table.)
        self.gather = itemgetter(*where) if len(where) > 1 else lambda v: (v[where[0]],)
        diag = [j for j, at in enumerate(positions) if at // n == at % n]
        self.diagonal = itemgetter(*diag, given) if diag else None
        self.zeros = (0.0,) * len(diag) + (None,)
        out = [0] * n
        inc = [0] * n
        for at in positions:
            out[at // n] |= 1 << (at % n)
            inc[at % n] |= 1 << (at // n)
        self.out, self.inc = tuple(out), tuple(inc)


class Matrices:
    """The plan's transition matrices, each distinct one interned once: the default
    (`transitions`), the named ones (`matrices`), and each edge's (`edge`)."""

    __slots__ = (
        "n",
        "tindex",
        "p",
        "chk",
        "cache",
        "by_bytes",
        "asked",
        "found",
        "shapes",
        "pair",
        "diagonal",
        "default",
        "named",
    )

    def __init__(
        self, doc: Any, targets: tuple[str, ...], tindex: dict[str, int], p: str, chk: Checker
    ) -> None:
        n = self.n = len(targets)
        self.tindex, self.p, self.chk = tindex, p, chk
        self.cache: dict[tuple[float | None, ...], Matrix] = {}
        # Explicit matrices repeat (a plan has a handful of distinct ones on 100k edges):
        # converted once per distinct serialisation (bytes equal: the same keys, values
        # and value types), problem-free ones only, so a faulty one is reported at every use.
        # A plan whose matrices rarely repeat (a compiler's own costs on every edge) stops
        # asking after `_TRIAL` edges: the serialising costs more than it saves there.
        self.by_bytes: dict[bytes, Matrix] | None = {}
        self.asked = self.found = 0
        self.shapes: dict[tuple[Any, ...], _Shape] = {}
        pair: dict[str, dict[str, int]] = {}
        for s, src in reversed(list(enumerate(targets))):  # first index wins
            pair[src] = {dst: s * n + d for d, dst in reversed(list(enumerate(targets)))}
        self.pair = pair
        self.diagonal = [s * n + s for s in range(n)]
        transitions = doc.transitions
        if transitions is not None:
            self.default = self.intern(matrix_cost(transitions, f"{p}transitions", tindex, n, chk))
        else:
            self.default = self.intern(identity_matrix(n).cost)
        self.named = {
            name: self.intern(matrix_cost(raw, f"{p}matrices.{name}", tindex, n, chk))
            for name, raw in doc.matrices.items()
        }

    def intern(self, cost: tuple[float | None, ...]) -> Matrix:
        m = self.cache.get(cost)
        if m is None:
            m = self.cache[cost] = make_matrix(self.n, cost)
        return m

    def edge(self, tr: Any, i: int, k: int) -> Matrix:
        """The matrix of edge `k` of block `i` (its `transitions`: absent, a name, or a
        matrix)."""
        if tr is None:
            return self.default
        if isinstance(tr, str):
            mat = self.named.get(tr)
            if mat is None:
                self.chk.add(
                    f"{self.p}blocks[{i}].terminator.successors[{k}].transitions",
                    f"unknown matrix '{tr}' (not in the top-level matrices)",
                )
                return self.default
            return mat
        by_bytes = self.by_bytes
        if by_bytes is None:
            return self._convert(tr, i, k)
        key = dumps(tr)
        got = by_bytes.get(key)
        self.asked += 1
        if got is not None:
            self.found += 1
            return got
        if self.asked == _TRIAL and self.found * 2 < self.asked:
            self.by_bytes = None
        before = len(self.chk.problems)
        m = self._convert(tr, i, k)
        if len(self.chk.problems) == before:
            by_bytes[key] = m
        return m

    def _convert(self, raw: dict[str, dict[str, float]], i: int, k: int) -> Matrix:
        """Intern a matrix: the values of a layout seen before are put in place by its
        `_Shape` at C speed; a new layout is worked out once, and any irregularity goes
        through `matrix_cost`, which reports it. (The `Struct`s hold every cost as a
        float, so the values are the table's as they are.)"""
        layout = (tuple(raw), *map(tuple, raw.values()))
        shape = self.shapes.get(layout)
        if shape is None:
            shape = self._shape(raw)
            if shape is None:
                return self._reported(raw, i, k)
            self.shapes[layout] = shape
        given: list[float] = [*chain.from_iterable(map(dict.values, raw.values()))]
        top = max(given) if given else 0.0  # (`default=` costs a keyword parse per call)
        values = cast("list[float | None]", given)  # the same list, then None appended
        values.append(None)
        if shape.diagonal is not None and shape.diagonal(values) != shape.zeros:
            return self._reported(raw, i, k)
        cost = shape.gather(values)
        m = self.cache.get(cost)
        if m is None:
            m = self.cache[cost] = Matrix(
                self.n, cost, shape.out, shape.inc, top if top > 0.0 else 0.0
            )
        return m

    def _shape(self, raw: dict[str, dict[str, float]]) -> _Shape | None:
        """The `_Shape` of a matrix's layout, None when it names an unknown target."""
        positions = []
        pair = self.pair
        try:
            for src, row in raw.items():
                at = pair[src]
                positions += [at[dst] for dst in row]
        except KeyError:
            return None
        return _Shape(positions, self.n)

    def _reported(self, raw: dict[str, dict[str, float]], i: int, k: int) -> Matrix:
        path = f"{self.p}blocks[{i}].terminator.successors[{k}].transitions"
        return self.intern(matrix_cost(raw, path, self.tindex, self.n, self.chk))


_TRIAL = 4096  # edges after which `Matrices.edge` judges its serialised-matrix cache


def path_indices(
    doc: Any, tindex: dict[str, int], p: str, chk: Checker
) -> tuple[dict[str, int], list[int]]:
    """Path name -> its index, and each path's origin targets as a bitset. Paths are
    numbered in name order, not map order: artifacts write maps with sorted keys, so map
    order would differ between a plan and its own artifact."""
    path_index: dict[str, int] = {}
    path_origin: list[int] = []
    for name, origins in sorted(doc.paths.items()):
        m = 0
        for j, t in enumerate(origins):
            if t not in tindex:
                chk.add(f"{p}paths.{name}[{j}]", f"unknown target '{t}'")
            else:
                m |= 1 << tindex[t]
        if not origins:
            chk.add(f"{p}paths.{name}", "a path needs at least one origin target")
        path_index[name] = len(path_origin)
        path_origin.append(m)
    return path_index, path_origin


_NO_PATHS: tuple[int, ...] = ()


def block_paths(
    names: list[str] | None, i: int, path_index: dict[str, int], p: str, chk: Checker
) -> tuple[int, ...]:
    """The indices of the paths block `i` reads (each once, in the block's order)."""
    if not names:
        return _NO_PATHS
    bpaths: list[int] = []
    for j, name in enumerate(names):
        pi = path_index.get(name)
        if pi is None:
            chk.add(
                f"{p}blocks[{i}].paths[{j}]",
                f"unknown path '{name}' (not in the top-level paths)",
            )
        elif pi not in bpaths:
            bpaths.append(pi)
    return tuple(bpaths)


def check_terminator(b: Any, kind: str, successors: Any, i: int, p: str, chk: Checker) -> None:
    """A block's successor count for its terminator's kind, and no parameter twice."""
    lo, hi = SUCCESSOR_COUNT[kind]
    k = len(successors)
    if k < lo or (hi is not None and k > hi):
        want = f"exactly {lo}" if lo == hi else f"at least {lo}"
        chk.add(
            f"{p}blocks[{i}].terminator.successors",
            f"a '{kind}' terminator has {want} successor(s), got {k}",
        )
    params = b.params
    if params and len(params) > 1 and len(set(params)) != len(params):
        seen: set[str] = set()
        for j, prm in enumerate(params):
            if prm in seen:
                chk.add(f"{p}blocks[{i}].params[{j}]", f"duplicate parameter '{prm}'")
            seen.add(prm)
