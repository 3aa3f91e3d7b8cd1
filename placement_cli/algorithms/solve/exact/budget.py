"""The exact method's tuning settings: one frozen budget object passed in, never module
globals (tests and callers build their own with `dataclasses.replace`). No method of its
own: each knob's comment names the step that reads it (references there)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExactBudget:
    """Cell, sweep and memory budgets of the exact method.

    >>> ExactBudget().table == 1 << 21, ExactBudget(reductions=False).reductions
    (True, False)
    """

    # One elimination step may build a joint table of at most this many cells (K^(w+1)):
    # 2^21 cells are ~64 MiB of Python floats while they exist, and a few seconds of work.
    table: int = 1 << 21
    # All elimination steps together: beyond this the work alone exceeds any sensible
    # time limit, and the argmin tables (one byte per cell) stay bounded.
    total: int = 1 << 26
    # The core goes to dynamic programming when its whole elimination builds at most this
    # many cells (a second or two of pure Python); wider cores go to the search.
    dp: int = 1 << 18
    # Below this many cells the core goes straight to dynamic programming, without first
    # looking for dominated values.
    cheap_dp: int = 1 << 14
    # A search node whose remaining elimination builds at most this many cells is solved
    # by dynamic programming on the spot instead of branching further.
    leaf_dp: int = 1 << 12
    # Min-sum diffusion sweeps: at most this many at the root of the search (fewer once
    # the bound stalls), and this many at every node.
    root_sweeps: int = 200
    node_sweeps: int = 2
    # The root's sweeps stop once 8 more raised the bound by at most this share of it.
    root_stall: float = 1e-4
    # The numpy sweeps move each block this many times the diffusion's step
    # (over-relaxation; 1.0: the plain diffusion). Measured on random cores: 1.4 reaches
    # the plain diffusion's bound in about a third of the sweeps; 1.8 oscillates.
    diffusion_relax: float = 1.4
    # ... and at the root, where the sweeps start cold: 1.6 there (with 1.4 at the nodes,
    # which go on warm from their parent's messages) took 15 to 20% fewer sweeps and a
    # quarter fewer nodes on random cores of 200 to 1,000 blocks, 5 to 8 targets (seeds
    # 0 to 7); 1.6 at the nodes too, or 1.7 at the root, more nodes again.
    root_relax: float = 1.6
    # ... on cores of at most this many blocks; larger ones use `diffusion_relax` at the
    # root too (on 2,000-block plans, cores of 1,100 to 1,200 blocks, 1.6 there was a
    # wash: fewer sweeps on most plans, twice as many on one).
    root_relax_max_blocks: int = 1000
    # The diffusion's colour classes come from DSatur (dense.dsatur_colouring: 3 classes where the
    # greedy colouring in block order leaves 4 or 5, so a cheaper sweep) on cores of at
    # most this many blocks, from the greedy colouring on larger ones. Measured with
    # `root_relax` 1.6: on random 500/1,000-block plans with 6 to 8 targets DSatur took
    # 976 sweeps and 41 nodes against greedy's 1,098 and 63; on 2,000-block plans (cores
    # of 1,100 to 1,200 blocks) 2,486 and 199 against 2,378 and 126; on 200-block plans
    # about even. Which order converges faster varies from plan to plan.
    dsatur_max_blocks: int = 1000
    # At the root, a rounding that found nothing new waits twice as long for the next.
    primal_backoff: bool = True
    # The search keeps one copy of the core per level of its path: at most this many
    # blocks and pair entries in all (a few hundred MiB), beyond which it stops as if out
    # of time.
    search_memory: int = 4_000_000
    # The root's diffusion runs on numpy arrays (when numpy is installed) for cores of at
    # least this many blocks; 0 sends every core there (tests), a huge value none.
    dense_min_blocks: int = 24
    # Dead-end elimination on the core before the dynamic programming or the search:
    # sweeps over the core per stage, and stages (each stage then reduces again). More
    # cost more than they save on random cores (measured), and the search masks
    # dominated values around every branch anyway.
    dominance_rounds: int = 1
    dominance_stages: int = 1
    # ... also on a core too wide for the dynamic programming (one that goes to the
    # search). Off: the search's root bounds the core as it is, and its reduced-cost
    # fixing removes values on its own (measured faster on random cores).
    search_dominance: bool = False
    # The primal heuristic (primal.py): round the reparametrisation to an assignment and
    # polish it, at the root every 8 sweeps and at every search node; off, the search
    # alone finds assignments (tests turn it off to exercise the search).
    primal: bool = True
    # Reduced-cost fixing: after the bound at the root and at every node, drop each value
    # whose bound with the block fixed to it (the bound, minus the block's least term,
    # plus that value's term) cannot beat the incumbent.
    fixing: bool = True
    # The search's upper levels on the root's arrays (arraysearch.py): a child node is
    # its parent's arrays with the branching block's other values made infinite, until
    # the blocks left undecided fit the dynamic programming; then the list search (with
    # its reductions) finishes the node. Off: every node is the list search's.
    array_search: bool = True
    # ... and the list search takes a node once its reductions would leave at most this
    # share of the undecided blocks (measured on random cores of 200 to 1,000 blocks).
    array_handoff: float = 0.75
    # ... and masks dominated values (dead-end elimination) in every block the arrays'
    # fixing cut, not only in the blocks it left with one value (and their neighbours):
    # off, measured the same nodes and sweeps on random cores of 120 to 300 blocks, 5 to
    # 7 targets, for a third less time in the node that takes over.
    handoff_dominance: bool = False
    # Mini-bucket lower bound: the largest table one mini-bucket may build.
    mini_bucket_table: int = 1 << 14
    # The specialised R0/R1/R2 pass before the generic elimination (tests turn it off to
    # send whole plans through the generic elimination and the search).
    reductions: bool = True


DEFAULT_BUDGET = ExactBudget()
