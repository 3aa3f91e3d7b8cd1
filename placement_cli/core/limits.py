"""Limits on hostile or accidental input: size, nesting, alias expansion, magnitude.

Every limit ends the run with exit 3 and a one-line reason before the work it guards
starts, instead of a hang, a memory blow-up, a `RecursionError` or an objective that
overflows to infinity. See docs/reliability.md.

`Limits` is a frozen settings object; `Limits.from_env()` reads the one limit users
are expected to change, the input size (`PLACEMENT_MAX_INPUT_BYTES`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Protocol

import msgspec

from placement_cli.core.errors import Problem, UsageError

ENV_MAX_INPUT = "PLACEMENT_MAX_INPUT_BYTES"
DEFAULT_MAX_INPUT_BYTES = 1 << 30  # 1 GiB
# Plans nest about 8 levels (blocks[].terminator.successors[].transitions.a.b); a tree
# file's recorded Substrait plan nests with the query (TPC-DS Q64: 110 levels). 250
# reads back whatever the writer can write (orjson refuses to write deeper than 254
# levels) while staying far below Python's recursion limit.
DEFAULT_MAX_DEPTH = 250
# YAML aliases may add this many expanded nodes, plus ALIAS_FACTOR per node written
# out in the document: `*matrix` on every edge of a large plan is fine, a "billion
# laughs" (nine levels of ten-fold aliases) is refused at once.
DEFAULT_ALIAS_NODES = 1_000_000
ALIAS_FACTOR = 10
# The objective (block costs plus transition costs) must stay below this, so that
# sums, bounds and gaps computed in floats never reach infinity.
MAX_OBJECTIVE = 1e300

# The largest count (a number of runs, a plan node's index) a file may hold: what an
# artifact can write back (orjson writes integers of at most 64 bits; a larger one read
# from YAML made the tree's artifact fail at writing).
COUNT_MAX = 2**63 - 1


class Limits(msgspec.Struct, frozen=True):
    """Input limits. Doctest:

    >>> Limits().max_input_bytes
    1073741824
    >>> Limits.from_env({"PLACEMENT_MAX_INPUT_BYTES": "1000"}).max_input_bytes
    1000
    """

    max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES
    max_depth: int = DEFAULT_MAX_DEPTH
    alias_nodes: int = DEFAULT_ALIAS_NODES
    max_objective: float = MAX_OBJECTIVE

    @classmethod
    def from_env(cls, env: dict[str, str] | os._Environ[str] | None = None) -> Limits:
        raw = (os.environ if env is None else env).get(ENV_MAX_INPUT, "").strip()
        if not raw:
            return cls()
        try:
            value = int(raw)
        except ValueError:
            value = -1
        if value < 1:
            raise UsageError(
                f"{ENV_MAX_INPUT} must be a positive number of bytes, got {raw[:40]!r}"
            )
        return cls(max_input_bytes=value)

    def alias_budget(self, own_nodes: int) -> int:
        """Expanded nodes aliases may add to a document of `own_nodes` written nodes."""
        return self.alias_nodes + ALIAS_FACTOR * own_nodes


class _Matrix(Protocol):
    @property
    def top(self) -> float: ...


def objective_problems(
    costs: Sequence[Sequence[float]],
    edge_mat: Sequence[_Matrix],
    prefix: str = "",
    limit: float = MAX_OBJECTIVE,
) -> list[Problem]:
    """A problem when the objective of some assignment could reach `limit`: the sum
    over blocks of the block's largest finite cost plus, over edges, the edge's largest
    allowed transition cost. That sum bounds every assignment's objective (live blocks
    are a subset), so below it no cost, bound or gap can overflow a float.

    >>> objective_problems([(1.0, float("inf"))], [])
    []
    >>> objective_problems([(1e308,), (1e308,)], [])[0].message[:44]
    'costs too large: the objective could exceed '
    """
    total = 0.0
    inf = float("inf")
    # Rows repeat as shared objects (a plan's plain blocks with equal statements): each
    # is scanned once, by identity (all are alive in `costs`, so no id is reused).
    tops: dict[int, float] = {}
    for row in costs:
        top = tops.get(id(row))
        if top is None:
            if inf in row:
                top = 0.0
                for c in row:
                    if top < c < inf:
                        top = c
            else:
                top = max(row, default=0.0)
                if not top > 0.0:  # the scan's start (costs are never NaN)
                    top = 0.0
            tops[id(row)] = top
        total += top
        if total >= limit:
            break
    if total < limit:
        for m in edge_mat:
            total += m.top
            if total >= limit:
                break
    if total < limit:
        return []
    return [
        Problem(
            prefix.rstrip("."),
            f"costs too large: the objective could exceed {limit:g} (the sum of every block's "
            "largest cost and every edge's largest transition cost must stay below it)",
        )
    ]
