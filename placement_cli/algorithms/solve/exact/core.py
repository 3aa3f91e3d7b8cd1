"""The pairwise core in list form (`Core`): what the reductions, the bounds, dead-end
elimination, the primal heuristic and the list search read and change in place.

A core is a pairwise min-sum problem (a PBQP instance, a binary weighted CSP; see
Scholz & Eckstein 2002 for PBQP, Cooper et al. 2010 for weighted CSPs): one cost vector
per block and one cost table per pair of neighbouring blocks; an assignment costs the sum
of its entries. Blocks are numbered by the owner (plan block ids for the reductions of a
whole plan, positions 0..m-1 in the search), and the lists are indexed by that number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

import msgspec

# Domain sizes by block: a list (the search's positions) or a dict (plan blocks).
Sizes: TypeAlias = Sequence[int] | Mapping[int, int]
# A block's neighbour tables: partner -> the pair's flat table.
Tables: TypeAlias = dict[int, list[float]]


class Core(msgspec.Struct, frozen=True):
    """A pairwise min-sum core, changed in place by the steps that take it.

    Invariants (every function taking a `Core` keeps them):

    * `sizes[x]` is block x's domain size; it never changes while the core lives (a value
      ruled out keeps its index and costs `inf`).
    * `un[x]` is x's unary cost vector, `len(un[x]) == sizes[x]`, or None once x has left
      the core (reduced, conditioned or never in it); `nb[x]` is None exactly then too.
    * `nb[x]` maps each neighbour y of x to their pair table, and `nb[x][y] is nb[y][x]`:
      one flat list shared by both ends, with the lower block's values as the rows
      (cell `i * sizes[max(x, y)] + j` for the lower block's value i and the higher's j).
      A pair appears once: parallel tables are summed into it.
    * Costs are floats, `inf` for forbidden; `+inf` is the only infinity (the
      reparametrisations never write `-inf` or `nan` into a list core).

    The lists are shared, not copied, by the functions that take a core; `copy` gives a
    branch its own (the tables themselves are shared until a step replaces them: every
    step builds a new table rather than writing into one).

    >>> c = Core([2, 2], [[1.0, 0.0], [0.0, 3.0]], [{1: [0.0, 1.0, 1.0, 0.0]}, {}])
    >>> c.nb[1][0] = c.nb[0][1]
    >>> d = c.copy(); d.un[0][0] = 9.0; c.un[0], d.nb[1][0] is c.nb[0][1]
    ([1.0, 0.0], True)
    """

    sizes: Sizes
    un: list[list[float] | None]
    nb: list[Tables | None]

    def copy(self) -> Core:
        """Own unary lists and neighbour dicts (tables shared: steps never write into one)."""
        return Core(
            self.sizes,
            [u if u is None else u[:] for u in self.un],
            [d if d is None else dict(d) for d in self.nb],
        )

    def tables(self, x: int) -> Tables:
        """Block x's neighbour tables (x must still be in the core)."""
        nx = self.nb[x]
        assert nx is not None, x
        return nx

    def unary(self, x: int) -> list[float]:
        """Block x's unary costs (x must still be in the core)."""
        ux = self.un[x]
        assert ux is not None, x
        return ux
