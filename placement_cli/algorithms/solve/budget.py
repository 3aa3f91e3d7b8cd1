"""The budgets of the solve pass, in one module:

* `Budget`: the time and memory limits every search of `solve` observes (the heuristic,
  the complete search, and the exact method through the share of it the driver gives it);
* `ExactBudget`: the exact method's own cell, sweep and search settings, grouped by the
  step that reads them (`CellBudget`, `DiffusionSettings`, `SearchSettings`,
  `DominanceSettings`); no field repeats one of `Budget`'s;
* `slack`: the tolerance below which two costs count as equal.

Kept apart from the engines that check them, so callers build a budget without importing
a search.
"""

from __future__ import annotations

import os
import sys
import time

import msgspec

from placement_cli.algorithms.solve.instance import INF


def slack(best: float) -> float:
    """How much better than `best` a cost must be to count as an improvement. Float sums
    in different orders differ in the last bits; a relative 1e-9 keeps B&B from chasing
    (and proving) differences that are rounding noise."""
    return 1e-9 * (1.0 + abs(best))


def _rss_bytes() -> int:
    """Resident set size of this process now (Linux /proc), else its peak so far."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(peak) * (1 if sys.platform == "darwin" else 1024)


try:
    _PAGE = os.sysconf("SC_PAGE_SIZE")
except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
    _PAGE = 4096


class Budget:
    """The deadline and memory bound every search of `solve` observes.

    `deadline` is a `time.monotonic()` instant (None: no deadline); `memory_bytes`
    bounds how much the process may grow beyond its size when the budget was made
    (None: no bound), so parsing a large plan does not count against the search.
    Searches call `exceeded()` every few hundred nodes; the first limit that fires is
    remembered in `reason` ("time-limit" or "memory-limit"), so the caller can say
    honestly why it stopped.

    >>> b = Budget(deadline=0.0)
    >>> b.exceeded(), b.reason
    (True, 'time-limit')
    >>> Budget().exceeded()
    False
    """

    __slots__ = ("deadline", "memory_bytes", "_base", "_calls", "reason")

    def __init__(self, deadline: float | None = None, memory_bytes: int | None = None) -> None:
        self.deadline = deadline
        self.memory_bytes = memory_bytes
        self._base = _rss_bytes() if memory_bytes is not None else 0
        self._calls = 0
        self.reason: str | None = None

    def exceeded(self) -> bool:
        if self.reason is not None:
            return True
        if self.deadline is not None and time.monotonic() > self.deadline:
            self.reason = "time-limit"
            return True
        if self.memory_bytes is not None:
            # Reading /proc costs microseconds: only every 16th call.
            self._calls += 1
            if self._calls & 15 == 0 and _rss_bytes() - self._base > self.memory_bytes:
                self.reason = "memory-limit"
                return True
        return False

    @classmethod
    def within(cls, seconds: float, memory_bytes: int | None = None) -> Budget:
        """A budget of `seconds` from now (a time limit turned into the deadline once).

        >>> Budget.within(60.0).remaining() > 59
        True
        """
        return cls(time.monotonic() + max(0.0, seconds), memory_bytes)

    def share(self, fraction: float) -> Budget:
        """A budget for one part of the work: `fraction` of the time left (its own
        deadline), the same memory bound from now.

        >>> Budget().share(0.5).deadline is None
        True
        """
        deadline = None if self.deadline is None else time.monotonic() + self.remaining() * fraction
        return Budget(deadline, self.memory_bytes)

    def remaining(self) -> float:
        """Seconds left before the deadline (inf without one, never negative)."""
        if self.deadline is None:
            return INF
        return max(0.0, self.deadline - time.monotonic())


# --------------------------------------------------------------------------- exact method


class CellBudget(msgspec.Struct, frozen=True):
    """How many table cells the exact method's dynamic programming may build
    (`elimination.py`; cells of a joint table: the product of its blocks' domain sizes).

    >>> CellBudget().table == 1 << 21
    True
    """

    # One elimination step may build a joint table of at most this many cells (K^(w+1)):
    # 2^21 cells are ~64 MiB of Python floats while they exist, and a few seconds of work.
    table: int = 1 << 21
    # The core goes to dynamic programming when its whole elimination builds at most this
    # many cells (a second or two of pure Python); wider cores go to the search.
    dp: int = 1 << 18
    # Below this many cells the core goes straight to dynamic programming, without first
    # looking for dominated values.
    cheap_dp: int = 1 << 14
    # A search node whose remaining elimination builds at most this many cells is solved
    # by dynamic programming on the spot instead of branching further.
    leaf_dp: int = 1 << 12
    # Mini-bucket lower bound (`bounds.mini_bucket_bound`): the largest table one
    # mini-bucket may build.
    mini_bucket: int = 1 << 14


class DiffusionSettings(msgspec.Struct, frozen=True):
    """Min-sum diffusion (`bounds.diffuse`, `dense.DenseCore`): sweeps, step and layout."""

    # Sweeps: at most this many at the root of the search (fewer once the bound stalls),
    # and this many at every node.
    root_sweeps: int = 200
    node_sweeps: int = 2
    # The root's sweeps stop once 8 more raised the bound by at most this share of it.
    root_stall: float = 1e-4
    # The numpy sweeps move each block this many times the diffusion's step
    # (over-relaxation; 1.0: the plain diffusion). Measured on random cores: 1.4 reaches
    # the plain diffusion's bound in about a third of the sweeps; 1.8 oscillates.
    relax: float = 1.4
    # ... and at the root, where the sweeps start cold: 1.6 there (with 1.4 at the nodes,
    # which go on warm from their parent's messages) took 15 to 20% fewer sweeps and a
    # quarter fewer nodes on random cores of 200 to 1,000 blocks, 5 to 8 targets (seeds
    # 0 to 7); 1.6 at the nodes too, or 1.7 at the root, more nodes again.
    root_relax: float = 1.6
    # ... on cores of at most this many blocks; larger ones use `relax` at the root too
    # (on 2,000-block plans, cores of 1,100 to 1,200 blocks, 1.6 there was a wash: fewer
    # sweeps on most plans, twice as many on one).
    root_relax_max_blocks: int = 1000
    # The colour classes come from DSatur (dense.dsatur_colouring: 3 classes where the
    # greedy colouring in block order leaves 4 or 5, so a cheaper sweep) on cores of at
    # most this many blocks, from the greedy colouring on larger ones. Measured with
    # `root_relax` 1.6: on random 500/1,000-block plans with 6 to 8 targets DSatur took
    # 976 sweeps and 41 nodes against greedy's 1,098 and 63; on 2,000-block plans (cores
    # of 1,100 to 1,200 blocks) 2,486 and 199 against 2,378 and 126; on 200-block plans
    # about even. Which order converges faster varies from plan to plan.
    dsatur_max_blocks: int = 1000
    # The diffusion runs on numpy arrays (when numpy is installed) for cores of at least
    # this many blocks; 0 sends every core there (tests), a huge value none.
    dense_min_blocks: int = 24


class SearchSettings(msgspec.Struct, frozen=True):
    """The branch and reduce search (`search.py`, `arraysearch.py`, `primal.py`)."""

    # The primal heuristic (primal.py): round the reparametrisation to an assignment and
    # polish it, at the root every 8 sweeps and at every search node; off, the search
    # alone finds assignments (tests turn it off to exercise the search).
    primal: bool = True
    # At the root, a rounding that found nothing new waits twice as long for the next.
    primal_backoff: bool = True
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
    # The search keeps one copy of the core per level of its path: at most this many
    # blocks and pair entries in all (a few hundred MiB), beyond which it stops as if out
    # of time.
    memory: int = 4_000_000


class DominanceSettings(msgspec.Struct, frozen=True):
    """Dead-end elimination on the whole core (`dominance.remove_dominated`) before the
    dynamic programming or the search. More sweeps or stages cost more than they save
    on random cores (measured), and the search masks dominated values around every
    branch anyway."""

    # Sweeps over the core per stage, and stages (each stage then reduces again).
    rounds: int = 1
    stages: int = 1
    # ... also on a core too wide for the dynamic programming (one that goes to the
    # search). Off: the search's root bounds the core as it is, and its reduced-cost
    # fixing removes values on its own (measured faster on random cores).
    search_cores: bool = False


class ExactBudget(msgspec.Struct, frozen=True):
    """The exact method's settings, one group per step. The time limit is not here: the
    exact method observes the deadline its caller derives from the run's `Budget`.

    >>> ExactBudget().cells.table == 1 << 21, ExactBudget(reductions=False).reductions
    (True, False)
    """

    cells: CellBudget = msgspec.field(default_factory=CellBudget)
    diffusion: DiffusionSettings = msgspec.field(default_factory=DiffusionSettings)
    search: SearchSettings = msgspec.field(default_factory=SearchSettings)
    dominance: DominanceSettings = msgspec.field(default_factory=DominanceSettings)
    # The specialised R0/R1/R2 pass before the generic elimination (tests turn it off to
    # send whole plans through the generic elimination and the search).
    reductions: bool = True


DEFAULT_BUDGET = ExactBudget()
