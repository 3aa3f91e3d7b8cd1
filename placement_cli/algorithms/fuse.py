"""`fuse`: merge same-target blocks joined by argument-free gotos (seed "Fusion and islands").

Block B merges into its predecessor A when B is not the entry, A is B's only (live)
predecessor, A ends in a `goto` to B with no arguments, B has no parameters, and both
run on the same target. Chains collapse transitively: the fused block keeps the chain
head's id and input position, the members' statements in execution order and the
tail's terminator. The fused edges were same-target (cost 0), so the placement's
objective does not change; the artifact checks and reports that.

Dead (unreachable) blocks are not placed, so they are left out of the fused plan.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import msgspec

from placement_cli.algorithms.solve.objective import Cost, evaluate
from placement_cli.core.diagnostics import Diagnostic
from placement_cli.core.io import gc_paused, num
from placement_cli.formats.structs import Block, Edge, Statement, Terminator
from placement_cli.ir.graph import INF, Graph, assemble
from placement_cli.ir.normalize import normalize


class FuseOptions(msgspec.Struct, frozen=True):
    """Options of `fuse` (none yet): a frozen Struct, so unknown ones are refused.
    Not a slotted dataclass: building that class cost ~0.2 ms of every process that
    imports the stage (measured), for a class with no fields."""


class FuseResult(msgspec.Struct, frozen=True):
    """The fused layout. `graph` and `assignment` are None when there was no placement."""

    graph: Graph | None
    assignment: tuple[int, ...]  # target per fused block
    members: tuple[tuple[int, ...], ...]  # original blocks per fused block, execution order
    block_of: tuple[int, ...]  # original block -> fused block (-1: dead, not placed)
    dropped: tuple[int, ...]  # dead original blocks, input order
    cost_before: Cost | None
    cost_after: Cost | None
    diagnostics: tuple[Diagnostic, ...]

    @property
    def status(self) -> str:
        return "infeasible" if any(d.severity == "error" for d in self.diagnostics) else "ok"

    @property
    def merged(self) -> int:
        """How many blocks fusion removed (absorbed into a predecessor)."""
        return sum(len(m) - 1 for m in self.members)

    @property
    def cost_preserved(self) -> bool:
        a, b = self.cost_before, self.cost_after
        if a is None or b is None:
            return False
        # Summing members per fused block regroups float additions; only rounding may differ.
        return math.isclose(a.total, b.total, rel_tol=1e-9, abs_tol=1e-9)

    def to_json(self, g: Graph) -> dict[str, Any]:
        fg = self.graph
        ids = g.block_ids
        blocks = []
        if fg is not None:
            blocks = [
                {
                    "id": fg.block_ids[f],
                    "target": g.targets[self.assignment[f]],
                    "members": [ids[b] for b in ms],
                }
                for f, ms in enumerate(self.members)
            ]
        return {
            "blocks": blocks,
            "merged": self.merged,
            "dropped": [ids[b] for b in self.dropped],
            "cost_preserved": self.cost_preserved,
            "cost_before": _cost_json(self.cost_before),
            "cost_after": _cost_json(self.cost_after),
        }

    def plan_json(self, g: Graph) -> dict[str, Any] | None:
        """The fused plan, normalised (the compact form of `normalize(graph)`). Artifacts
        no longer carry it (it follows from the plan and `fuse.blocks`); it is here for
        callers that want the fused plan as a plan file."""
        fg = self.graph
        if fg is None:
            return None
        return normalize(fg)


class FusedBlock(msgspec.Struct):
    """A block of the fused plan made of several members: the fields of a plan `Block`
    (what `normalize(graph)` and the views read), without building a model for each
    (building a `Block` for each was a fifth of the pass on large plans). Read-only."""

    id: str
    params: list[str]
    statements: list[Statement]
    domain: list[str] | None
    cost: dict[str, float] | None
    paths: list[str]
    premium: dict[str, float] | None
    terminator: Terminator


def _cost_json(c: Cost | None) -> dict[str, float | int] | None:
    if c is None:
        return None
    return {"total": num(c.total), "blocks": num(c.blocks), "edges": num(c.edges)}


def _no_placement(g: Graph, code: str, message: str, blocks: tuple[str, ...]) -> FuseResult:
    diag = Diagnostic("error", code, message, blocks)
    return FuseResult(None, (), (), tuple(-1 for _ in range(g.n_blocks)), (), None, None, (diag,))


def check_assignment(
    g: Graph, assignment: tuple[int, ...] | None
) -> tuple[str, str, tuple[str, ...]] | None:
    """Why `assignment` is not a placement of every live block, or None when it is.

    Returned as (code, message, block ids) so callers can turn it into their diagnostic.
    """
    if assignment is None or len(assignment) != g.n_blocks:
        return ("no-assignment", "no placement to work on: the solve stage gave no assignment", ())
    nt = g.n_targets
    bad = tuple(
        [
            bid
            for bid, is_live, t in zip(g.block_ids, g.live, assignment, strict=True)
            if is_live and not 0 <= t < nt
        ]
    )
    if bad:
        shown = ", ".join(bad[:10]) + (", ..." if len(bad) > 10 else "")
        return (
            "no-assignment",
            f"no placement to work on: {len(bad)} reachable block(s) have no target ({shown})",
            bad,
        )
    return None


def fuse(g: Graph, assignment: tuple[int, ...], options: FuseOptions | None = None) -> FuseResult:
    """Collapse same-target goto chains of a placed plan into single blocks.

    >>> from placement_cli.formats.plan import Plan
    >>> from placement_cli.ir.graph import build_graph
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"], "blocks": [
    ...     {"id": "x", "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
    ...     {"id": "y", "terminator": {"kind": "goto", "successors": [{"block": "z"}]}},
    ...     {"id": "z", "terminator": {"kind": "return"}}]}))
    >>> r = fuse(g, (0, 0, 0))
    >>> r.graph.block_ids, r.members, r.merged, r.cost_preserved
    (('x',), ((0, 1, 2),), 2, True)
    """
    why = check_assignment(g, assignment)
    if why is not None:
        return _no_placement(g, *why)
    before = evaluate(g, assignment)
    if before is None:
        return _no_placement(
            g,
            "assignment-infeasible",
            "the assignment puts a block outside its domain or crosses a forbidden transition",
            (),
        )
    with gc_paused():
        return _fuse(g, assignment, before)


def _fuse(g: Graph, assignment: tuple[int, ...], before: Cost) -> FuseResult:
    n = g.n_blocks
    live = g.live
    docs = g.plan.blocks
    # parent[b]: the block b merges into; child[a]: the block merged into a.
    parent = [-1] * n
    child = [-1] * n
    src = g.edge_src
    entry = g.entry
    for b, (is_live, pred) in enumerate(zip(live, g.pred, strict=True)):
        if not is_live or b == entry:
            continue
        # Dead predecessors do not count: they are dropped, so they never reach b.
        if len(pred) == 1:
            only = pred[0]
            if not live[src[only]]:
                continue
        else:
            only = -1
            count = 0
            for e in pred:
                if live[src[e]]:
                    count += 1
                    only = e
            if count != 1:
                continue
        a = src[only]
        # The index checks before the plan's fields (reading a block costs more).
        if a == b or assignment[a] != assignment[b]:
            continue
        if docs[b].params:
            continue
        term = docs[a].terminator
        if term.kind != "goto" or term.successors[0].args:
            continue
        parent[b] = a
        child[a] = b

    members: list[tuple[int, ...]] = []
    block_of = [-1] * n
    for h in range(n):
        if not live[h] or parent[h] != -1:
            continue
        f = len(members)
        chain = [h]
        block_of[h] = f
        c = child[h]
        while c != -1:
            chain.append(c)
            block_of[c] = f
            c = child[c]
        members.append(tuple(chain))
    # Every live block is reached from the entry, and the entry heads its chain, so a
    # parent cycle (which would leave blocks unvisited) cannot occur among live blocks.
    dropped = tuple([b for b in range(n) if not live[b]])

    fg, fassign = _fused_graph(g, assignment, members, block_of)
    after = evaluate(fg, fassign)
    diags: list[Diagnostic] = []
    if dropped:
        ids = tuple(g.block_ids[b] for b in dropped)
        diags.append(
            Diagnostic(
                "info",
                "unreachable-dropped",
                f"{len(ids)} unreachable block(s) are not placed and left out of the fused plan",
                ids,
            )
        )
    res = FuseResult(fg, fassign, tuple(members), tuple(block_of), dropped, before, after, ())
    if not res.cost_preserved:
        now = "an infeasible placement" if after is None else f"{after.total:g}"
        diags.append(
            Diagnostic(
                "warning",
                "fuse-cost-changed",
                f"fusion changed the placement's cost from {before.total:g} to {now}; this is a bug",
            )
        )
    return msgspec.structs.replace(res, diagnostics=tuple(diags))


def _fused_graph(
    g: Graph, assignment: tuple[int, ...], members: list[tuple[int, ...]], block_of: list[int]
) -> tuple[Graph, tuple[int, ...]]:
    """The fused plan's indexed Graph, derived from `g` without re-checking it.

    What `fuse` and `islands` read (domains, costs, paths, edges) is built here; the fused
    plan's blocks (statements, renamed terminators, the merged blocks' fields), which only
    the fused plan as a document needs (`plan_json`, `normalize(graph)`), are built on the
    first read of `graph.plan.blocks` (that was most of this function on large plans)."""
    targets = g.targets
    nt = len(targets)
    plan = g.plan
    base_of = g._memo["base"]
    ids = g.block_ids
    tindex = {t: i for i, t in enumerate(targets)}
    gsucc, gdst, gpos, gmat = g.succ, g.edge_dst, g.edge_pos, g.edge_mat
    gdomain, gcost, gpaths = g.domain, g.cost, g.block_paths
    docs = plan.blocks

    # Most fused blocks are single blocks: their fields are the original's, taken in
    # bulk; the merged ones are then computed one by one over their members.
    # (`map` of a sequence's `__getitem__`: the same lists as comprehensions, at C speed.)
    heads = [ms[0] for ms in members]
    tails = [ms[-1] for ms in members]
    domain = list(map(gdomain.__getitem__, heads))
    cost = list(map(gcost.__getitem__, heads))
    bases = list(map(base_of.__getitem__, heads))
    block_paths = list(map(gpaths.__getitem__, heads))
    fassign = list(map(assignment.__getitem__, heads))
    premiums: dict[int, dict[str, float] | None] = {}  # fused block of 2+ members -> its premium
    full = (1 << nt) - 1
    in_dom: dict[int, list[int]] = {}  # domain bitset -> its targets
    for f, chain in enumerate(members):
        if len(chain) == 1:
            continue
        dom = full
        for m in chain:
            dom &= gdomain[m]
        ts = in_dom.get(dom)
        if ts is None:
            ts = in_dom[dom] = [t for t in range(nt) if dom >> t & 1]
        base = [0.0] * nt
        prem: list[float] | None = None  # made on the first premium (most chains have none)
        paths: list[int] = []
        seen: set[int] | None = None
        for m in chain:
            bm = base_of[m]
            for t in ts:
                base[t] += bm[t]
            pm = docs[m].premium
            if pm:
                if prem is None:
                    prem = [0.0] * nt
                    has_prem = [False] * nt
                for tname, c in pm.items():
                    t = tindex[tname]
                    prem[t] += c
                    has_prem[t] = True
            mp = gpaths[m]
            if mp:
                if seen is None:
                    seen = set()
                for p in mp:
                    if p not in seen:
                        seen.add(p)
                        paths.append(p)
        domain[f] = dom
        if prem is None:
            premiums[f] = None
            cost[f] = tuple([base[t] if dom >> t & 1 else INF for t in range(nt)])
        else:
            premiums[f] = {targets[t]: prem[t] for t in range(nt) if has_prem[t]} or None
            cost[f] = tuple([base[t] + prem[t] if dom >> t & 1 else INF for t in range(nt)])
        bases[f] = base
        block_paths[f] = tuple(paths)

    # A fused block's edges are its tail's, in order; edge ids follow fused block order.
    outs = list(map(gsucc.__getitem__, tails))
    old_edges = [e for out in outs for e in out]
    edge_src = [f for f, out in enumerate(outs) for _ in out]
    edge_dst = list(map(block_of.__getitem__, map(gdst.__getitem__, old_edges)))
    edge_pos = list(map(gpos.__getitem__, old_edges))
    edge_mat = list(map(gmat.__getitem__, old_edges))
    succ: list[tuple[int, ...]] = []
    k = 0
    for out in outs:
        c = len(out)
        succ.append((k,) if c == 1 else tuple(range(k, k + c)))
        k += c

    def fused_blocks() -> list[Block | FusedBlock]:
        plan_blocks = plan.blocks
        # new_id[b]: the id b is known by after fusion (its chain head's), None when dropped;
        # renamed[b]: whether that differs from b's own id (ids are unique: head != b).
        new_id = [None if f == -1 else ids[heads[f]] for f in block_of]
        renamed = [f == -1 or heads[f] != b for b, f in enumerate(block_of)]
        path_names = g.path_names
        blocks: list[Block | FusedBlock] = []
        for f, chain in enumerate(members):
            head, tail = chain[0], chain[-1]
            out = gsucc[tail]
            term = plan_blocks[tail].terminator
            # A successor that was absorbed elsewhere is renamed to its chain head. (For live
            # code this never triggers: an absorbed block's only predecessor is its head chain.)
            for e in out:
                if renamed[gdst[e]]:
                    term = Terminator(
                        kind=term.kind,
                        successors=[
                            # (never a dropped block's None: see above)
                            Edge(block=new_id[d], args=s.args, transitions=s.transitions)  # type: ignore[arg-type]
                            for s, d in zip(term.successors, (gdst[e] for e in out), strict=True)
                        ],
                        cost=term.cost,
                    )
                    break
            if len(chain) == 1:
                pb = plan_blocks[head]
                if term is not pb.terminator:
                    pb = msgspec.structs.replace(pb, terminator=term)
                blocks.append(pb)
                continue
            dom, base = domain[f], bases[f]
            statements: list[Statement] = []
            for m in chain:
                statements.extend(plan_blocks[m].statements)
            hp = plan_blocks[head]
            blocks.append(
                FusedBlock(
                    hp.id,
                    list(hp.params),
                    statements,
                    [targets[t] for t in range(nt) if dom >> t & 1],
                    {targets[t]: base[t] for t in range(nt) if dom >> t & 1},
                    [path_names[p] for p in block_paths[f]],
                    premiums[f],
                    term,
                )
            )
        return blocks

    fplan = FusedPlan(
        fused_blocks,
        name=plan.name,
        targets=plan.targets,
        entry=ids[g.entry],
        transitions=plan.transitions,
        paths=plan.paths,
    )
    block_ids = tuple(ids[ms[0]] for ms in members)
    fg = assemble(
        plan=fplan,
        block_ids=block_ids,
        entry=block_of[g.entry],
        domain=domain,
        cost=cost,
        bases=bases,
        edge_src=edge_src,
        edge_dst=edge_dst,
        edge_pos=edge_pos,
        edge_mat=edge_mat,
        succ=succ,
        block_paths=block_paths,
        path_names=g.path_names,
        path_origin=g.path_origin,
        default_matrix=g.default_matrix,
    )
    return fg, tuple(fassign)


class FusedPlan:
    """The fused plan: the fields of a `structs.Plan` (what `normalize(graph)` and the
    views read), its `blocks` built by `build` on first read, so a fused graph used only
    for its indices never builds them.

    >>> p = FusedPlan(lambda: ["b"], name=None, targets=["a"], entry="b", transitions=None, paths={})
    >>> p.blocks, p.version, p.matrices, p.provenance
    (['b'], 1, {}, None)
    """

    version = 1
    matrices: dict[str, Any] = {}
    provenance = None
    lower = None

    def __init__(
        self,
        build: Any,
        *,
        name: str | None,
        targets: list[str],
        entry: str,
        transitions: Any,
        paths: dict[str, list[str]],
    ) -> None:
        self._build = build
        self.name = name
        self.targets = targets
        self.entry = entry
        self.transitions = transitions
        self.paths = paths

    @functools.cached_property
    def blocks(self) -> list[Any]:
        got = self._build()
        self._build = None
        return got  # type: ignore[no-any-return]
