"""Each block's domain, base costs and cost row, with the checks of what they are read
from (statement, terminator and block costs, declared domains, premiums): the hot loop
of loading, so each distinct problem-free part is read once.

Statement costs and domains repeat (each is read once per distinct serialisation: equal
bytes, equal values; a checked plan has no NaN, which orjson would write as `null` like
None). Whole statement lists repeat as well (a few dozen distinct ones on 100k blocks):
their support and summed cost are computed once per distinct problem-free list, and with
them, once per distinct serialisation of what else costs (terminator cost, domain, cost,
premium: their types checked once too, where no `null` may hide a NaN), the block's
domain, base and cost row. Rows and bases are shared between blocks: nothing changes
them.
"""

from __future__ import annotations

from typing import Any

from orjson import JSONEncodeError, dumps

from placement_cli.formats.plancheck import check_costs, check_statements
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
        # under one key when its only `null`s are its absent fields (no NaN can hide in
        # it): the block's domain, base and cost row, for problem-free blocks. Otherwise,
        # and the first time, the two keys in `add` (statement list; what else costs)
        # are used. (A hit has the stored key's bytes, so the same count of `null`s: the
        # stored block's count of absent fields, which the new block's must equal.)
        self.whole: dict[bytes, tuple[int, list[float], tuple[float, ...], int]] = {}

    def add(self, i: int, b: dict[str, Any], term: dict[str, Any], check: bool) -> None:
        """Block `i`'s domain, base and cost row, appended (with `check`, the types of
        its statements and other costs checked as they are first read)."""
        chk = self.chk
        at_block = len(chk.problems)
        stmts = b.get("statements")
        tcost = term.get("cost")
        bdomain = b.get("domain")
        bcost = b.get("cost")
        premium = b.get("premium")
        absent = (
            (not stmts) + (tcost is None) + (bdomain is None) + (bcost is None) + (premium is None)
        )
        try:
            wkey: bytes | None = dumps((stmts or None, tcost, bdomain, bcost, premium))
        except (TypeError, JSONEncodeError):
            wkey = None
        hit = self.whole.get(wkey) if wkey is not None else None
        if hit is not None and hit[3] == absent:
            self.domain.append(hit[0])
            self.bases.append(hit[1])
            self.costs.append(hit[2])
            return
        memo: list[Any] | None
        if stmts:
            try:
                lkey: bytes | None = dumps(stmts)
            except (TypeError, JSONEncodeError):
                lkey = None
            memo = self.seen_lists.get(lkey) if lkey is not None else None
            if memo is None:
                if check:
                    check_statements(stmts)
                memo = self._statements(stmts, i)
                if (
                    lkey is not None
                    and len(chk.problems) == at_block
                    and not (check and b"null" in lkey)
                ):
                    self.seen_lists[lkey] = memo
        else:
            memo = self.no_statements
        support, base, rows = memo
        xkey: bytes | None = b""
        nulls = 0  # the `null`s of the absent fields in the key
        if tcost is not None or bdomain is not None or bcost is not None or premium is not None:
            nulls = (tcost is None) + (bdomain is None) + (bcost is None) + (premium is None)
            try:
                xkey = dumps((tcost, bdomain, bcost, premium))
            except (TypeError, JSONEncodeError):
                xkey = None
        got = rows.get(xkey) if xkey is not None else None
        if check and (got is None or xkey.count(b"null") != nulls):  # type: ignore[union-attr]
            # Types as the first block with these bytes had them (it was checked), unless
            # a `null` beyond the absent fields' own may be a NaN here.
            check_costs(b)
        if got is not None:
            self.domain.append(got[0])
            self.bases.append(got[1])
            self.costs.append(got[2])
        else:
            self._block(i, support, base, tcost, bdomain, bcost, premium)
            if xkey is not None and len(chk.problems) == at_block:
                rows[xkey] = (self.domain[-1], self.bases[-1], self.costs[-1])
        if wkey is not None and len(chk.problems) == at_block and wkey.count(b"null") == absent:
            self.whole[wkey] = (self.domain[-1], self.bases[-1], self.costs[-1], absent)

    def _statements(self, stmts: list[Any], i: int) -> list[Any]:
        """[support, base, {}] of the statements of block `i` (problems reported)."""
        chk, p, bit, seen_costs = self.chk, self.p, self.bit, self.seen_costs
        support = self.full
        base = [0.0] * self.n
        for j, st in enumerate(stmts):
            sc = st["cost"]
            try:
                key: bytes | None = dumps(sc)
            except (TypeError, JSONEncodeError):
                key = None
            hit = seen_costs.get(key) if key is not None else None
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
                if key is not None and len(chk.problems) == before:
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
