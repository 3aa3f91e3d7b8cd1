"""The seed's placement solver (seeds/001, Phase 2 CSP and Phase 3 DAG refinement),
optimising the true objective.

Super blocks are the live components of the condensation: a trivial one is one block
(a self-loop is a unary constraint already folded into its domain), a cyclic one is a
loop solved as a CSP under a boundary context. The forward pass picks super blocks by
dynamic MRV, assigns trivial ones from a `TargetHeap` of estimated costs, and backtracks
chronologically through an assignment stack (cyclic ones by least-delta perturbation).
Backward and forward sweeps then switch a super block only when the true objective
strictly decreases, until a whole sweep changes nothing.

Where this differs from HashQL's implementation of the same seed (reference §5): every
acceptance test uses the true objective (estimates only order candidates); the CSP bound
is admissible for the objective it prunes; region order is dynamic MRV; CSP results are
cached by boundary context; giving up is reported, never papered over with a default.

The loop CSP (a cyclic super block under its boundary context) is `solve.loops`; this
module holds the forward pass and the refinement sweeps.
"""

from __future__ import annotations

import heapq
from typing import Any

import msgspec

from placement_cli.algorithms.scc import SccResult
from placement_cli.algorithms.solve.budget import Budget
from placement_cli.algorithms.solve.instance import INF, Instance, bits_of
from placement_cli.algorithms.solve.loops import Cyclic, LoopCsp, LoopState


class HeuristicOutcome(msgspec.Struct, frozen=True):
    assignment: tuple[int, ...] | None  # None: the seed's search gave up
    forward: tuple[int, ...] | None  # what the forward pass alone produced
    failed: tuple[int, ...]  # blocks of the super block where the search gave up
    stats: dict[str, int]
    stopped: str | None = None  # "time-limit"/"memory-limit" when the budget cut it short


class Seed(LoopCsp):
    """One solve of one plan: precomputed super blocks plus the search state."""

    def __init__(
        self,
        inst: Instance,
        comps: SccResult,
        max_rounds: int = 100,
        max_backtracks: int = 10_000,
        csp_node_limit: int = 5_000,
        budget: Budget | None = None,
    ) -> None:
        self.inst = inst
        self.budget = budget
        self.cached = 0
        self.max_rounds = max_rounds
        self.max_backtracks = max_backtracks
        self.csp_node_limit = csp_node_limit
        n = inst.n
        self.sb_of = sb_of = [-1] * n
        blocks: list[tuple[int, ...]] = []
        headers: list[int | None] = []
        for comp in comps.components:
            if not comp.live:
                continue
            for b in comp.blocks:
                sb_of[b] = len(blocks)
            blocks.append(comp.blocks)
            headers.append(comp.header)
        self.blocks = blocks
        self.S = len(blocks)
        self.cyc: list[Cyclic | None] = [
            Cyclic(inst, bs, headers[s], sb_of, s) if len(bs) > 1 else None
            for s, bs in enumerate(blocks)
        ]
        self.first = [bs[0] for bs in blocks]
        deg0 = [0] * self.S
        for s, bs in enumerate(blocks):
            for b in bs:
                for nb in inst.nbr[b]:
                    if sb_of[nb] != s:
                        deg0[s] += 1
        self.deg0 = deg0
        self.stats: dict[str, int] = {
            "rounds": 0,
            "passes": 0,
            "backtracks": 0,
            "scc_retries": 0,
            "csp_solves": 0,
            "csp_nodes": 0,
            "csp_proven": 0,
            "cache_hits": 0,
            "switches": 0,
        }
        self.assign: list[int] = [-1] * n

    # ------------------------------------------------------------------ CSP

    # ---------------------------------------------------------- forward pass

    def _size(self, s: int) -> int:
        """MRV size of a super block: its smallest remaining member domain."""
        cur = self.cur
        bs = self.blocks[s]
        if len(bs) == 1:
            return cur[bs[0]].bit_count()
        return min(cur[b].bit_count() for b in bs)

    def _push(self, s: int) -> None:
        heapq.heappush(self.heap, (self._size(s), -self.udeg[s], self.first[s], s))

    def _set(self, b: int, t: int) -> None:
        """Assign b and forward-check its unassigned neighbours (on the trail)."""
        inst = self.inst
        assign, cur, sb_of, trail, udeg, done = (
            self.assign,
            self.cur,
            self.sb_of,
            self.trail,
            self.udeg,
            self.done,
        )
        blocks, heap, first = self.blocks, self.heap, self.first
        assign[b] = t
        s = sb_of[b]
        for n, al in zip(inst.nbr[b], inst.allow[b], strict=True):
            sn = sb_of[n]
            if sn != s:
                udeg[sn] -= 1
            if assign[n] < 0:
                cn = cur[n]
                nc = cn & al[t]
                if nc != cn:
                    trail.append((n, cn))
                    cur[n] = nc
                if sn != s and not done[sn]:
                    bs = blocks[sn]
                    size = nc.bit_count() if len(bs) == 1 else min(cur[x].bit_count() for x in bs)
                    heapq.heappush(heap, (size, -udeg[sn], first[sn], sn))

    def _undo(self, s: int, mark: int) -> None:
        inst = self.inst
        assign, cur, sb_of, trail, udeg, done = (
            self.assign,
            self.cur,
            self.sb_of,
            self.trail,
            self.udeg,
            self.done,
        )
        done[s] = False
        self.n_done -= 1
        for b in self.blocks[s]:
            assign[b] = -1
        touched = []
        for b in self.blocks[s]:
            for n in inst.nbr[b]:
                sn = sb_of[n]
                if sn != s:
                    udeg[sn] += 1
                    touched.append(sn)
        while len(trail) > mark:
            n, old = trail.pop()
            cur[n] = old
            touched.append(sb_of[n])
        for sn in touched:
            if not done[sn]:
                self._push(sn)
        self._push(s)

    def _estimates(self, b: int) -> list[tuple[float, int]]:
        """The TargetHeap of a trivial block: targets that leave every unassigned
        neighbour a target, ordered by block cost + edges to assigned neighbours + for
        each unassigned neighbour the least extra cost it would pay for this choice."""
        inst = self.inst
        n_targets = inst.n_targets
        assign, cur, unary = self.assign, self.cur, inst.unary
        d = cur[b]
        if d & (d - 1) == 0:
            # One candidate: only the forward check matters, not its estimate.
            t = d.bit_length() - 1
            for n, al in zip(inst.nbr[b], inst.allow[b], strict=True):
                if assign[n] < 0 and not al[t] & cur[n]:
                    return []
            return [(0.0, t)] if d else []
        fixed = []
        free = []
        for n, tb, al in zip(inst.nbr[b], inst.tab[b], inst.allow[b], strict=True):
            tn = assign[n]
            if tn >= 0:
                fixed.append((tb, tn))
            else:
                cn = cur[n]
                un = unary[n]
                free.append((tb, al, cn, un, min(un[x] for x in bits_of(cn)) if cn else INF))
        out = []
        ub = unary[b]
        for t in bits_of(cur[b]):
            c = ub[t]
            base = t * n_targets
            for tb, tn in fixed:
                c += tb[base + tn]  # type: ignore[operator]
            for tb, al, cn, un, lo in free:
                sup = al[t] & cn
                if not sup:
                    c = INF
                    break
                best = INF
                for tn in bits_of(sup):
                    x = tb[base + tn] + un[tn]  # type: ignore[operator]
                    if x < best:
                        best = x
                c += best - lo
            if c < INF:
                out.append((c, t))
        out.sort()
        return out

    def _commit_trivial(self, s: int, state: list[Any]) -> None:
        cands, idx = state
        self.stack.append((s, len(self.trail), state))
        self.done[s] = True
        self.n_done += 1
        self._set(self.blocks[s][0], cands[idx][1])

    def _commit_cyclic(self, s: int, state: LoopState, values: tuple[int, ...]) -> None:
        state.values = values
        self.stack.append((s, len(self.trail), state))
        self.done[s] = True
        self.n_done += 1
        for b, t in zip(self.blocks[s], values, strict=True):
            self._set(b, t)

    def _first(self, s: int) -> bool:
        if self.cyc[s] is None:
            cands = self._estimates(self.blocks[s][0])
            if not cands:
                return False
            self._commit_trivial(s, [cands, 0])
            return True
        cyc = self.cyc[s]
        assert cyc is not None
        ctx = tuple(self.assign[n] for _, n, _, _ in cyc.boundary)
        values = self._csp(s, ctx, {})
        if values is None:
            return False
        dom, unary = self._context(s, ctx)
        self._commit_cyclic(s, LoopState(ctx, dom, unary, values), values)
        return True

    def _retry(self, s: int, st: LoopState) -> bool:
        """Least-delta perturbation: change the member whose next candidate costs the
        least more than its current target, force it, re-solve; until the heaps run out."""
        budget = self.budget
        while True:
            if budget is not None and budget.exceeded():
                return False
            pick = -1
            pick_delta = INF
            for v, h in enumerate(st.heaps):
                p = st.ptr[v]
                cur_t = st.values[v]
                while p < len(h) and h[p][1] == cur_t:
                    p += 1
                st.ptr[v] = p
                if p < len(h):
                    delta = h[p][0] - st.est[v][cur_t]
                    if delta < pick_delta:
                        pick, pick_delta = v, delta
            if pick < 0:
                return False
            t = st.heaps[pick][st.ptr[pick]][1]
            st.ptr[pick] += 1
            st.forced[pick] = t
            self.stats["scc_retries"] += 1
            values = self._csp(s, st.ctx, st.forced)
            if values is not None:
                self._commit_cyclic(s, st, values)
                return True
            # The forced target itself is the member's current one from here on, so the
            # next pick for it moves past it.
            st.values = tuple(t if v == pick else x for v, x in enumerate(st.values))

    def _backtrack(self) -> bool:
        """Chronological: undo the most recent super block; take its next alternative or
        keep walking up the stack."""
        stack = self.stack
        while stack:
            s, mark, state = stack.pop()
            self._undo(s, mark)
            if self.cyc[s] is None:
                if state[1] + 1 < len(state[0]):
                    state[1] += 1
                    self._commit_trivial(s, state)
                    return True
            elif self._retry(s, state):
                return True
        return False

    def forward(self) -> bool:
        """The forward pass. False when it gave up (`self.failed` says where)."""
        inst = self.inst
        S = self.S
        self.assign = [-1] * inst.n
        self.cur = list(inst.dom)
        self.trail: list[tuple[int, int]] = []
        self.udeg = list(self.deg0)
        self.done = [False] * S
        self.n_done = 0
        self.stack: list[tuple[int, int, Any]] = []
        self.failed: int = -1
        self.heap: list[tuple[int, int, int, int]] = []
        for s in range(S):
            self._push(s)
        stats = self.stats
        stats["passes"] += 1
        stats["rounds"] += 1
        heap, done, udeg, cur, blocks = self.heap, self.done, self.udeg, self.cur, self.blocks
        while self.n_done < S:
            while True:
                k, nd, _, s = heapq.heappop(heap)
                if done[s] or nd != -udeg[s]:
                    continue
                bs = blocks[s]
                if k == (
                    cur[bs[0]].bit_count() if len(bs) == 1 else min(cur[x].bit_count() for x in bs)
                ):
                    break
            if self._first(s):
                continue
            stats["backtracks"] += 1
            self._push(s)
            budget = self.budget
            if (
                stats["backtracks"] > self.max_backtracks
                or (budget is not None and budget.exceeded())
                or not self._backtrack()
            ):
                self.failed = s
                return False
        return True

    # ------------------------------------------------------- refinement sweeps

    def sweep(self, order: range | list[int]) -> int:
        """Revisit super blocks with every neighbour assigned; switch on a strict
        decrease of the objective (ties keep the current targets). Returns #switches."""
        inst = self.inst
        n_targets = inst.n_targets
        tol = inst.tol
        assign, dom, unary, nbrs, tabs = self.assign, inst.dom, inst.unary, inst.nbr, inst.tab
        switches = 0
        budget = self.budget
        for k, s in enumerate(order):
            # Every switch keeps the assignment feasible, so stopping anywhere is safe.
            if budget is not None and k & 63 == 0 and budget.exceeded():
                break
            cyc = self.cyc[s]
            if cyc is None:
                b = self.blocks[s][0]
                d = dom[b]
                if d & (d - 1) == 0:
                    continue
                t0 = assign[b]
                ns = [assign[n] for n in nbrs[b]]
                tb_list = tabs[b]
                ub = unary[b]
                v0 = INF
                best_t = -1
                best_v = INF
                for t in bits_of(d):
                    c = ub[t]
                    base = t * n_targets
                    for tb, tn in zip(tb_list, ns, strict=True):
                        x = tb[base + tn]
                        if x is None:
                            c = INF
                            break
                        c += x
                    if t == t0:
                        v0 = c
                    elif c < best_v:
                        best_v, best_t = c, t
                if best_t >= 0 and best_v < v0 - tol:
                    assign[b] = best_t
                    switches += 1
            else:
                if all(dom[b] & (dom[b] - 1) == 0 for b in cyc.members):
                    continue
                ctx = tuple(assign[n] for _, n, _, _ in cyc.boundary)
                values = self._csp(s, ctx, {})
                old = tuple(assign[b] for b in cyc.members)
                if values is None or values == old:
                    continue
                _, cu = self._context(s, ctx)
                if self._local(s, cu, values) < self._local(s, cu, old) - tol:
                    for b, t in zip(cyc.members, values, strict=True):
                        assign[b] = t
                    switches += 1
        self.stats["passes"] += 1
        self.stats["switches"] += switches
        return switches

    def refine(self, start_backward: bool = True) -> None:
        """Alternate backward and forward sweeps until one changes nothing (a fixpoint:
        every super block is then the best it can be given its neighbours)."""
        backward = list(range(self.S - 1, -1, -1))
        forward = range(self.S)
        direction_backward = start_backward
        while True:
            if not self.sweep(backward if direction_backward else forward):
                return
            if self.budget is not None and self.budget.reason is not None:
                return
            direction_backward = not direction_backward
            if not direction_backward:
                if self.stats["rounds"] >= self.max_rounds:
                    return
                self.stats["rounds"] += 1


def solve_heuristic(
    inst: Instance,
    comps: SccResult,
    *,
    max_rounds: int = 100,
    max_backtracks: int = 10_000,
    csp_node_limit: int = 5_000,
    budget: Budget | None = None,
) -> HeuristicOutcome:
    """The seed algorithm: forward pass with backtracking, then sweeps to a fixpoint.

    >>> from placement_cli.formats.plan import Plan
    >>> from placement_cli.ir.graph import build_graph
    >>> from placement_cli.algorithms.scc import scc
    >>> from placement_cli.algorithms.solve.complete import build_instance
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"],
    ...     "transitions": {"a": {"a": 0, "b": 3}, "b": {"b": 0}},
    ...     "blocks": [{"id": "x", "cost": {"a": 1, "b": 5},
    ...                 "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
    ...                {"id": "y", "cost": {"a": 9, "b": 1}, "terminator": {"kind": "return"}}]}))
    >>> solve_heuristic(build_instance(g, g.domain), scc(g)).assignment
    (0, 1)
    """
    seed = Seed(inst, comps, max_rounds, max_backtracks, csp_node_limit, budget)
    stopped = None
    if not seed.forward():
        failed = seed.blocks[seed.failed] if seed.failed >= 0 else ()
        stopped = budget.reason if budget is not None else None
        return HeuristicOutcome(None, None, failed, seed.stats, stopped)
    forward = tuple(seed.assign)
    if max_rounds > 0:
        seed.refine()
    stopped = budget.reason if budget is not None else None
    return HeuristicOutcome(tuple(seed.assign), forward, (), seed.stats, stopped)


def refine(
    inst: Instance,
    comps: SccResult,
    assignment: tuple[int, ...],
    *,
    max_rounds: int = 100,
    csp_node_limit: int = 5_000,
    budget: Budget | None = None,
) -> tuple[tuple[int, ...], dict[str, int]]:
    """The seed's sweeps applied to an assignment found elsewhere (the complete fallback,
    a warm start); they stop early, still feasible, when `budget` runs out."""
    seed = Seed(inst, comps, max_rounds, 0, csp_node_limit, budget)
    seed.assign = list(assignment)
    seed.stats["rounds"] = 1
    if max_rounds > 0:
        seed.refine()
    return tuple(seed.assign), seed.stats
