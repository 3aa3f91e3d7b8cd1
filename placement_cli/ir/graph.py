"""Building a plan's indexed form and checking its semantic rules (`build_graph`; the
form itself: `placement_cli.ir.indexed`, whose names are re-exported here).

A plan's types are checked by msgspec (`placement_cli.formats.structs`) or by the
models (`placement_cli.formats.plan`); its meaning (references, duplicates,
argument counts, matrices' targets and diagonals, the objective's range) is checked here
and nowhere else. Afterwards blocks are indices in input order, targets bit positions,
domains int bitsets (`placement_cli.ir.indexed.Graph`).
"""

from __future__ import annotations

from typing import Any

from msgspec.json import encode as dumps

from placement_cli.core.errors import InputError, Problem
from placement_cli.core.io import gc_paused
from placement_cli.core.limits import objective_problems
from placement_cli.core.problems import validation_problems
from placement_cli.formats.checking import Reject
from placement_cli.formats.structs import Plan as PlanStruct
from placement_cli.formats.structs import convert_plan, decode_plan, from_model
from placement_cli.ir.indexed import (
    INF,
    Graph,
    Matrix,
    assemble,
    bits,
    identity_matrix,
    make_matrix,
    popcount,
)

__all__ = [
    "INF",
    "SUCCESSOR_COUNT",
    "Graph",
    "Matrix",
    "assemble",
    "bits",
    "build_graph",
    "identity_matrix",
    "make_matrix",
    "popcount",
]

SUCCESSOR_COUNT = {
    "goto": (1, 1),
    "graph_read": (1, 1),
    "switch": (1, None),
    "return": (0, 0),
    "unreachable": (0, 0),
}


class _Checker:
    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append(Problem(path, message))


def _matrix(
    raw: dict[str, dict[str, float]], path: str, tindex: dict[str, int], n: int, chk: _Checker
) -> tuple[float | None, ...]:
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


def build_graph(plan: Any, prefix: str = "", *, check: bool = False) -> Graph:
    """Check every semantic rule of the plan format and build the indexed form.

    `plan` is a `structs.Plan` (msgspec checked its types), a validated pydantic
    `plan.Plan` (read as its `structs.Plan`), or a plan's JSON bytes or parsed document
    (with `check`, or a `dict`): decoded or converted to a `structs.Plan` first, and
    `Reject` raised when msgspec refuses it (the caller then asks the models, which say
    why). All problems are collected and raised together as one `InputError`.

    >>> from placement_cli.formats.plan import Plan
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"],
    ...     "blocks": [{"id": "b0", "terminator": {"kind": "return"}}]}))
    >>> g.block_ids, g.domain
    (('b0',), (3,))
    """
    if type(plan) is PlanStruct:
        doc = plan
    elif check or type(plan) is dict:
        got = decode_plan(plan) if type(plan) is bytes else convert_plan(plan)
        if got is None:
            raise Reject("plan")
        doc = got
    else:
        doc = from_model(plan)
    chk = _Checker()
    p = prefix
    targets = tuple(doc.targets)
    n = len(targets)
    tindex: dict[str, int] = {}
    for i, t in enumerate(targets):
        if t in tindex:
            chk.add(f"{p}targets[{i}]", f"duplicate target '{t}'")
        else:
            tindex[t] = i
    full = (1 << n) - 1
    blocks = doc.blocks

    # Ids and parameter counts are read across blocks (an edge's destination): their
    # types are checked first, in the one pass that collects them (each pass over 100k
    # block dicts costs a cache miss per block).
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
    entry = 0
    plan_entry = doc.entry
    if plan_entry is not None:
        if plan_entry in index:
            entry = index[plan_entry]
        else:
            chk.add(f"{p}entry", f"unknown block '{plan_entry}'")

    mat_cache: dict[tuple[float | None, ...], Matrix] = {}

    def intern(cost: tuple[float | None, ...]) -> Matrix:
        m = mat_cache.get(cost)
        if m is None:
            m = mat_cache[cost] = make_matrix(n, cost)
        return m

    transitions = doc.transitions
    if transitions is not None:
        default = intern(_matrix(transitions, f"{p}transitions", tindex, n, chk))
    else:
        default = intern(identity_matrix(n).cost)
    named = {
        name: intern(_matrix(raw, f"{p}matrices.{name}", tindex, n, chk))
        for name, raw in doc.matrices.items()
    }

    path_index: dict[str, int] = {}
    path_origin: list[int] = []
    # Paths are numbered in name order, not map order: artifacts write maps with sorted
    # keys, so map order would differ between a plan and its own artifact.
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

    domain: list[int] = []
    bases: list[list[float]] = []
    costs: list[tuple[float, ...]] = []
    edge_src: list[int] = []
    edge_dst: list[int] = []
    edge_pos: list[int] = []
    edge_mat: list[Matrix] = []
    succ: list[tuple[int, ...]] = []
    block_paths: list[tuple[int, ...]] = []
    no_paths: tuple[int, ...] = ()

    # The hot loop of loading: block paths (`bp`) are formatted only for a problem.
    bit = {t: (i, 1 << i) for i, t in reversed(list(enumerate(targets)))}  # first index wins
    pair: dict[str, dict[str, int]] = {}
    for s, src in reversed(list(enumerate(targets))):
        pair[src] = {dst: s * n + d for d, dst in reversed(list(enumerate(targets)))}
    diagonal = [s * n + s for s in range(n)]
    nn = n * n

    # Explicit matrices repeat (a plan has a handful of distinct ones on 100k edges):
    # converted once per distinct serialisation (bytes equal: the same keys, values and
    # value types), problem-free ones only, so a faulty one is reported at every use.
    by_bytes: dict[bytes, Matrix] = {}

    def matrix(raw: dict[str, dict[str, float]], i: int, k: int, key: bytes | None) -> Matrix:
        """The Matrix of edge `k` of block `i`, not yet known by its serialisation `key`."""
        before = len(chk.problems)
        m = convert(raw, i, k)
        if key is not None and len(chk.problems) == before:
            by_bytes[key] = m
        return m

    def convert(raw: dict[str, dict[str, float]], i: int, k: int) -> Matrix:
        """Intern a matrix, the common case at C speed; any irregularity goes through
        `_matrix`, which reports it."""
        cost: list[Any] = [None] * nn
        try:
            for src, row in raw.items():
                at = pair[src]
                for dst, c in row.items():
                    cost[at[dst]] = c
        except KeyError:
            return intern(
                _matrix(
                    raw, f"{p}blocks[{i}].terminator.successors[{k}].transitions", tindex, n, chk
                )
            )
        for d in diagonal:
            c = cost[d]
            if c is not None and c != 0:
                return intern(
                    _matrix(
                        raw,
                        f"{p}blocks[{i}].terminator.successors[{k}].transitions",
                        tindex,
                        n,
                        chk,
                    )
                )
        return intern(tuple(None if c is None else float(c) for c in cost))

    # Statement costs and domains repeat too: each distinct problem-free one is read
    # once (statement costs by their serialisation: equal bytes, equal values). Whole
    # statement lists repeat as well (a few dozen distinct ones on 100k blocks): their
    # support and summed cost are computed once per distinct problem-free list, and with
    # them, once per distinct serialisation of what else costs (terminator cost, domain,
    # cost, premium), the block's domain, base and cost row. Rows and bases are shared
    # between blocks: nothing changes them.
    seen_costs: dict[bytes, tuple[int, tuple[tuple[int, float], ...]]] = {}
    seen_lists: dict[bytes, list[Any]] = {}  # -> [support, base, {extras key: (domain, base, row)}]
    seen_domains: dict[tuple[str, ...], int] = {}
    no_statements: list[Any] = [full, [0.0] * n, {}]

    def statement_costs(stmts: list[Any], i: int) -> list[Any]:
        """[support, base, {}] of the statements of block `i` (problems reported)."""
        support = full
        base = [0.0] * n
        for j, st in enumerate(stmts):
            sc = st.cost
            key = dumps(sc)
            hit = seen_costs.get(key)
            if hit is None:
                m = 0
                adds = []
                before = len(chk.problems)
                for t, c in sc.items():
                    got = bit.get(t)
                    if got is None:
                        chk.add(f"{p}blocks[{i}].statements[{j}].cost.{t}", f"unknown target '{t}'")
                    elif c is not None:
                        m |= got[1]
                        adds.append((got[0], c))
                if len(chk.problems) == before:
                    seen_costs[key] = (m, tuple(adds))
            else:
                m, adds = hit  # type: ignore[assignment]
            for ti, c in adds:  # in map order: the same float sums
                base[ti] += c
            support &= m
        return [support, base, {}]

    def block_costs(
        i: int,
        b: Any,
        support: int,
        base: list[float],
        tcost: Any,
        bdomain: Any,
        bcost: Any,
        premium: Any,
    ) -> None:
        """Block `i`'s domain, base and cost row from its statements' support and base
        (not changed: shared), appended to `domain`, `bases` and `costs`."""
        if tcost is not None:
            base = list(base)
            m = 0
            for t, c in tcost.items():
                got = bit.get(t)
                if got is None:
                    chk.add(f"{p}blocks[{i}].terminator.cost.{t}", f"unknown target '{t}'")
                elif c is not None:
                    m |= got[1]
                    base[got[0]] += c
            support &= m
        dom = support
        if bdomain is not None:
            key_d = tuple(bdomain)
            given = seen_domains.get(key_d, -1)
            if given < 0:
                given = 0
                before = len(chk.problems)
                for j, t in enumerate(bdomain):
                    got = bit.get(t)
                    if got is None:
                        chk.add(f"{p}blocks[{i}].domain[{j}]", f"unknown target '{t}'")
                    elif given & got[1]:
                        chk.add(f"{p}blocks[{i}].domain[{j}]", f"duplicate target '{t}'")
                    else:
                        given |= got[1]
                if len(chk.problems) == before:
                    seen_domains[key_d] = given
            dom &= given
        if bcost is not None:
            base = [0.0] * n
            for t, c in bcost.items():
                got = bit.get(t)
                if got is None:
                    chk.add(f"{p}blocks[{i}].cost.{t}", f"unknown target '{t}'")
                else:
                    base[got[0]] = float(c)
        bases.append(base)
        total = list(base)
        if premium is not None:
            for t, c in premium.items():
                got = bit.get(t)
                if got is None:
                    chk.add(f"{p}blocks[{i}].premium.{t}", f"unknown target '{t}'")
                else:
                    total[got[0]] += c
        if dom != full or INF in total:
            for ti in range(n):
                if not dom >> ti & 1:
                    total[ti] = INF
                elif total[ti] == INF:
                    chk.add(
                        f"{p}blocks[{i}].cost", f"cost on '{targets[ti]}' overflows to infinity"
                    )
        domain.append(dom)
        costs.append(tuple(total))

    # What a block's costs follow from (its statements and other costs) is read under
    # one key: the block's domain, base and cost row, for problem-free blocks. Otherwise,
    # and the first time, the two keys below (statement list; what else costs) are used.
    whole: dict[bytes, tuple[int, list[float], tuple[float, ...]]] = {}

    for i, b in enumerate(blocks):
        term = b.terminator
        kind = term.kind
        at_block = len(chk.problems)
        stmts = b.statements
        tcost = term.cost
        bdomain = b.domain
        bcost = b.cost
        premium = b.premium
        wkey = dumps((stmts, tcost, bdomain, bcost, premium))
        hit = whole.get(wkey)
        if hit is not None:
            domain.append(hit[0])
            bases.append(hit[1])
            costs.append(hit[2])
        else:
            memo: list[Any] | None
            if stmts:
                lkey = dumps(stmts)
                memo = seen_lists.get(lkey)
                if memo is None:
                    memo = statement_costs(stmts, i)
                    if len(chk.problems) == at_block:
                        seen_lists[lkey] = memo
            else:
                memo = no_statements
            support, base, rows = memo
            xkey = dumps((tcost, bdomain, bcost, premium))
            got = rows.get(xkey)
            if got is not None:
                domain.append(got[0])
                bases.append(got[1])
                costs.append(got[2])
            else:
                block_costs(i, b, support, base, tcost, bdomain, bcost, premium)
                if len(chk.problems) == at_block:
                    rows[xkey] = (domain[-1], bases[-1], costs[-1])
            if len(chk.problems) == at_block:
                whole[wkey] = (domain[-1], bases[-1], costs[-1])

        names = b.paths
        if names:
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
            block_paths.append(tuple(bpaths))
        else:
            block_paths.append(no_paths)

        successors = term.successors
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
            seen_params: set[str] = set()
            for j, prm in enumerate(params):
                if prm in seen_params:
                    chk.add(f"{p}blocks[{i}].params[{j}]", f"duplicate parameter '{prm}'")
                seen_params.add(prm)
        first_edge = len(edge_src)  # a block's edges are consecutive ids
        for k, e in enumerate(successors):
            tr = e.transitions
            dst = index.get(e.block)
            if dst is None:
                chk.add(
                    f"{p}blocks[{i}].terminator.successors[{k}].block",
                    f"unknown block '{e.block}'",
                )
                dst = -1
            else:
                want_n = nparams[dst]
                got_n = len(e.args)
                if got_n != want_n:
                    chk.add(
                        f"{p}blocks[{i}].terminator.successors[{k}].args",
                        f"block '{e.block}' takes {want_n} argument(s), got {got_n}",
                    )
            if tr is None:
                mat = default
            elif isinstance(tr, str):
                mat = named.get(tr)  # type: ignore[assignment]
                if mat is None:
                    chk.add(
                        f"{p}blocks[{i}].terminator.successors[{k}].transitions",
                        f"unknown matrix '{tr}' (not in the top-level matrices)",
                    )
                    mat = default
            else:
                mkey = dumps(tr)
                got_m = by_bytes.get(mkey)
                mat = got_m if got_m is not None else matrix(tr, i, k, mkey)
            edge_src.append(i)
            edge_dst.append(dst)
            edge_pos.append(k)
            edge_mat.append(mat)
        last = len(edge_src)
        succ.append((first_edge,) if last == first_edge + 1 else tuple(range(first_edge, last)))

    chk.problems += objective_problems(costs, edge_mat, p)
    if chk.problems:
        raise InputError(chk.problems)

    return assemble(
        plan=doc,
        block_ids=tuple(ids),
        index=index,
        entry=entry,
        domain=domain,
        cost=costs,
        bases=bases,
        edge_src=edge_src,
        edge_dst=edge_dst,
        edge_pos=edge_pos,
        edge_mat=edge_mat,
        succ=succ,
        block_paths=block_paths,
        path_names=tuple(path_index),
        path_origin=tuple(path_origin),
        default_matrix=default,
    )


def parse_plan(doc: Any, prefix: str = "") -> Graph:
    """Validate a plan document (already parsed) with the models and build its indexed
    form (the library entry point: the document is read, never kept or changed)."""
    # pydantic (a fifth of a second) is imported only when a document needs the models.
    from pydantic import ValidationError

    # Lazy: the pydantic models (0.2 s, measured), only when a document needs them.
    from placement_cli.formats.plan import (
        Plan,
    )

    with gc_paused():
        try:
            plan = Plan.model_validate(doc)
        except ValidationError as exc:
            raise InputError(validation_problems(exc, prefix)) from None
        return build_graph(plan, prefix)


def checked_graph(doc: Any, prefix: str = "") -> Graph:
    """The graph of a plan's JSON bytes or parsed document, its types checked by msgspec
    (`build_graph(..., check=True)`): raises `Reject` when they are not certainly what
    the models accept, else `InputError` for the plan's problems."""
    with gc_paused():
        return build_graph(doc, prefix, check=True)
