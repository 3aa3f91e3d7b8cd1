"""Exact placement: PBQP reductions, dynamic programming over a tree decomposition, and a
branch-and-reduce search, with lower bounds that hold whether or not the optimum is proven.

The placement objective is a min-sum problem over pairwise cost functions (PBQP, weighted
CSP). Over the live blocks and their pruned domains it becomes:

* a cost vector per block, self-loop diagonals folded in (a forbidden diagonal forbids
  that target);
* one table per pair of neighbouring blocks: every parallel edge in both directions
  summed, infinite where any of them forbids the pair;
* blocks with a single target conditioned away into their neighbours' vectors.

Then, each step exact under min-sum algebra and logged for back-substitution:

1. the PBQP reductions R0, R1, R2 (a block with 0, 1 or 2 neighbours is decided alone,
   folded into its neighbour, or turned into a table between its two neighbours);
2. on what is left (the core), dead-end elimination of dominated values, and the
   reductions again, unless the core is already cheap for step 3;
3. variable elimination, cheapest joint table first (ties by block order): dynamic
   programming over the tree decomposition that order induces, when all its tables fit
   the cell budgets (checked symbolically first);
4. otherwise a depth-first branch and reduce over the core (condition one block, reduce
   again, solve small nodes by step 3), pruned by min-sum diffusion bounds.

A finished run is a proof. Cut short by the time limit or a budget, it returns the best
assignment known with the best proven bound. docs/exact.md has the design, the
invariants and how to measure.

Modules and the methods they implement (each cites its references):

* `core`: the pairwise core type (`Core`) the list-form steps share;
* `model`: the plan as a pairwise min-sum model (PBQP / binary weighted CSP);
* `reductions`: PBQP reductions R0, R1, R2 (Scholz & Eckstein 2002, Hames & Scholz 2006);
* `elimination`: bucket elimination (Dechter 1999);
* `bounds`: mini-bucket elimination (Dechter & Rish 2003), min-sum diffusion and its
  dual bound (Kovalevsky & Koval; Werner 2007);
* `dense`: the diffusion vectorised over the classes of a DSatur colouring (Brelaz 1979);
* `dominance`: dead-end elimination (Desmet et al. 1992, Goldstein 1994);
* `search`, `arraysearch`: branch and reduce (PBQP's RN rule made exact) with
  reduced-cost fixing (Nemhauser & Wolsey 1988);
* `primal`: rounding and iterated conditional modes (Besag 1986);
* `budget`: the exact method's budget (`ExactBudget`); `entry`: `solve_exact`,
  `lower_bound`.
"""

from typing import TYPE_CHECKING, Any

from placement_cli.algorithms.solve.budget import DEFAULT_BUDGET, ExactBudget
from placement_cli.algorithms.solve.exact.entry import ExactOutcome, lower_bound, solve_exact

if TYPE_CHECKING:
    from placement_cli.algorithms.solve.exact.bounds import mini_bucket_bound


def __getattr__(name: str) -> Any:
    """`mini_bucket_bound` on first use: `bounds` (with the elimination it builds on) is
    not imported by a `solve` whose plan reduces or fits the dynamic programming."""
    if name == "mini_bucket_bound":
        # Lazy: the bounds (~0.2 ms, measured), only when asked for.
        from placement_cli.algorithms.solve.exact.bounds import mini_bucket_bound

        return mini_bucket_bound
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_BUDGET",
    "ExactBudget",
    "ExactOutcome",
    "lower_bound",
    "mini_bucket_bound",
    "solve_exact",
]
