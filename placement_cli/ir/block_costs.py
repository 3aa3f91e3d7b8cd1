"""Each block's domain, base costs and cost row, with the checks of what they are read
from (statement, terminator and block costs, declared domains, premiums): the hot loop
of loading, so each distinct problem-free part is read once.

Statement costs and domains repeat (each is read once per distinct serialisation: equal
bytes, equal values). Whole statement lists repeat as well (a few dozen distinct ones on
100k blocks): their support and summed cost are computed once per distinct problem-free
list, and with them, once per distinct serialisation of what else costs (terminator
cost, domain, cost, premium), the block's domain, base and cost row. Rows and bases are
shared between blocks: nothing changes them. The blocks are `structs.Block`s (msgspec
checked their types): nothing here checks a type.
"""

from __future__ import annotations

from typing import Any

from msgspec.json import encode as dumps

from placement_cli.ir.indexed import INF
from placement_cli.ir.plan_parts import Checker


class BlockCosts:
    """Reads each block's costs (`add`, in block order) into `domain`, `bases`, `costs`."""

    __slots__ = (
        "targets",
        "n",
        "full",
        "bit",
        "p",
        "chk",
        "domain",
        "bases",
        "costs",
        "seen_costs",
        "seen_lists",
        "seen_domains",
        "no_statements",
        "whole",
    )

    def __init__(self, targets: tuple[str, ...], p: str, chk: Checker) -> None:
        n = self.n = len(targets)
        self.targets, self.p, self.chk = targets, p, chk
        self.full = full = (1 << n) - 1
        # Target -> (index, bit); block paths are formatted only for a problem.
        self.bit = {
            t: (i, 1 << i) for i, t in reversed(list(enumerate(targets)))
        }  # first index wins
        self.domain: list[int] = []
        self.bases: list[list[float]] = []
        self.costs: list[tuple[float, ...]] = []
        self.seen_costs: dict[bytes, tuple[int, tuple[tuple[int, float], ...]]] = {}
        # statement list -> [support, base, {extras key: (domain, base, row)}]
        self.seen_lists: dict[bytes, list[Any]] = {}
        self.seen_domains: dict[tuple[str, ...], int] = {}
        self.no_statements: list[Any] = [full, [0.0] * n, {}]
        # What a block's costs follow from (its statements and other costs) is read
        # under one key: the block's domain, base and cost row, for problem-free blocks.
        # Otherwise, and the first time, the two keys in `add` (statement list; what else
        # costs) are used.
        self.whole: dict[bytes, tuple[int, list[float], tuple[float, ...]]] = {}

    def add(self, i: int, b: Any, term: Any) -> None:
        """Block `i`'s domain, base and cost row, appended (`b`: a `structs.Block`, `term`:
        its terminator)."""
        chk = self.chk
        at_block = len(chk.problems)
        stmts = b.statements
        tcost = term.cost
        bdomain = b.domain
        bcost = b.cost
        premium = b.premium
        wkey = dumps((stmts, tcost, bdomain, bcost, premium))
        hit = self.whole.get(wkey)
        if hit is not None:
            self.domain.append(hit[0])
            self.bases.append(hit[1])
            self.costs.append(hit[2])
            return
        memo: list[Any] | None
        if stmts:
            lkey = dumps(stmts)
            memo = self.seen_lists.get(lkey)
            if memo is None:
                memo = self._statements(stmts, i)
                if len(chk.problems) == at_block:
                    self.seen_lists[lkey] = memo
        else:
            memo = self.no_statements
        support, base, rows = memo
        xkey = dumps((tcost, bdomain, bcost, premium))
        got = rows.get(xkey)
        if got is not None:
            self.domain.append(got[0])
            self.bases.append(got[1])
            self.costs.append(got[2])
        else:
            self._block(i, support, base, tcost, bdomain, bcost, premium)
            if len(chk.problems) == at_block:
                rows[xkey] = (self.domain[-1], self.bases[-1], self.costs[-1])
        if len(chk.problems) == at_block:
            self.whole[wkey] = (self.domain[-1], self.bases[-1], self.costs[-1])

    def _statements(self, stmts: list[Any], i: int) -> list[Any]:
        """[support, base, {}] of the statements of block `i` (problems reported)."""
        chk, p, bit, seen_costs = self.chk, self.p, self.bit, self.seen_costs
        support = self.full
        base = [0.0] * self.n
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

    def _block(
        self,
        i: int,
        support: int,
        base: list[float],
        tcost: Any,
        bdomain: Any,
        bcost: Any,
        premium: Any,
    ) -> None:
        """Block `i`'s domain, base and cost row from its statements' support and base
        (not changed: shared), appended to `domain`, `bases` and `costs`."""
        chk, p, bit, n = self.chk, self.p, self.bit, self.n
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
            given = self.seen_domains.get(key_d, -1)
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
                    self.seen_domains[key_d] = given
            dom &= given
        if bcost is not None:
            base = [0.0] * n
            for t, c in bcost.items():
                got = bit.get(t)
                if got is None:
                    chk.add(f"{p}blocks[{i}].cost.{t}", f"unknown target '{t}'")
                else:
                    base[got[0]] = float(c)
        self.bases.append(base)
        total = list(base)
        if premium is not None:
            for t, c in premium.items():
                got = bit.get(t)
                if got is None:
                    chk.add(f"{p}blocks[{i}].premium.{t}", f"unknown target '{t}'")
                else:
                    total[got[0]] += c
        if dom != self.full or INF in total:
            for ti in range(n):
                if not dom >> ti & 1:
                    total[ti] = INF
                elif total[ti] == INF:
                    chk.add(
                        f"{p}blocks[{i}].cost",
                        f"cost on '{self.targets[ti]}' overflows to infinity",
                    )
        self.domain.append(dom)
        self.costs.append(tuple(total))
