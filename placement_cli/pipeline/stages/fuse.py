"""Stage `fuse`: merge same-target goto chains (`placement_cli.algorithms.fuse`).

Fusion follows from the plan and the assignment, so a read section is checked against
the recomputed one: first that every fused block's members exist, run on the block's
target under the assignment (no block fuses across targets) and together cover each
live block once, then the members against fusion's as block indices and the small
fields one by one (field by field, for the message, only when they differ). Fusion is
computed either way: its fused graph is what `islands` runs on (docs/section-checks.md).
The fused plan itself is not written: the plan and `fuse.blocks` give it
(`FuseResult.plan_json` builds it for whoever wants it).
"""

from __future__ import annotations

from itertools import chain
from operator import itemgetter
from typing import Any

import msgspec

from placement_cli.algorithms.fuse import FuseOptions, FuseResult, fuse
from placement_cli.pipeline.checks import Problems, compare
from placement_cli.pipeline.stage import Output, Stage, StageRun


def section(res: FuseResult, g: Any) -> dict[str, Any]:
    return res.to_json(g)


def compute(run: StageRun, options: FuseOptions | None) -> Output:
    res = fuse(run.g, run.value("solve"), options)  # type: ignore[arg-type]
    return Output(res, section(res, run.g), res.diagnostics)


def check(run: StageRun, sec: dict[str, Any]) -> Output:
    g = run.g
    a = run.value("solve")
    # The fused graph is what `islands` runs on, so fusion is computed either way
    # (`fuse` decides the chains in one linear pass; checking a read section's chains
    # for maximality would cost that pass again and still leave the graph to build).
    res = fuse(g, a, run.options.get("fuse"))  # type: ignore[arg-type]
    if res.graph is not None and len(sec) == 6:
        rest = _rest(res, g)
        if all(sec[k] == v for k, v in rest.items()) and _same_blocks(sec["blocks"], res, g):
            # The blocks go on as read (the writer sorts keys), the small fields as
            # `fuse` gives them (`1` for a read `1.0`).
            return Output(res, {"blocks": sec["blocks"], **rest})
    return _check_slowly(run, sec, res)


def _same_blocks(fused_blocks: list[dict[str, Any]], res: FuseResult, g: Any) -> bool:
    """Whether the read `blocks` are the ones `res.to_json(g)` writes, compared column
    by column (ids, targets, member counts, all members in one flattened list) with no
    id looked up: equal members are known, live blocks on their block's target, each
    in one fused block, all of them covered.

    >>> from placement_cli.pipeline.run import parse_plan
    >>> g = parse_plan({"version": 1, "targets": ["t"], "blocks": [
    ...     {"id": "a", "terminator": {"kind": "goto", "successors": [{"block": "b"}]}},
    ...     {"id": "b", "terminator": {"kind": "return"}}]})
    >>> res = fuse(g, (0, 0))
    >>> blocks = res.to_json(g)["blocks"]; blocks
    [{'id': 'a', 'target': 't', 'members': ['a', 'b']}]
    >>> _same_blocks(blocks, res, g), _same_blocks([{**blocks[0], "members": ["b", "a"]}], res, g)
    (True, False)
    """
    fg = res.graph
    assert fg is not None
    if len(fused_blocks) != len(res.members) or set(map(len, fused_blocks)) - {3}:
        return False
    if list(map(_ID, fused_blocks)) != list(fg.block_ids):
        return False
    if list(map(_TARGET, fused_blocks)) != list(map(g.targets.__getitem__, res.assignment)):
        return False
    given = list(map(_MEMBERS, fused_blocks))
    if list(map(len, given)) != list(map(len, res.members)):
        return False
    return list(chain.from_iterable(given)) == list(
        map(g.block_ids.__getitem__, chain.from_iterable(res.members))
    )


_ID = itemgetter("id")
_TARGET = itemgetter("target")
_MEMBERS = itemgetter("members")


def _check_slowly(run: StageRun, sec: dict[str, Any], res: FuseResult) -> Output:
    """The checks naming each problem of a section that is not the one `res` writes."""
    g = run.g
    a = run.value("solve")
    pr = Problems("fuse")
    seen = [-1] * g.n_blocks  # block -> the fused block it is a member of
    index, live, targets = g.index, g.live, g.targets
    fused_blocks = sec["blocks"]
    given: list[tuple[int, ...]] = []  # the members as block indices
    for f, fb in enumerate(fused_blocks):
        members, fb_target = fb["members"], fb["target"]
        mine: list[int] = []
        for j, bid in enumerate(members):
            b = index.get(bid)
            # The common case first, without building the problem's path.
            if (
                b is not None
                and seen[b] == -1
                and a is not None
                and live[b]
                and targets[a[b]] == fb_target
            ):
                seen[b] = f
                mine.append(b)
                continue
            where = f"blocks[{f}].members[{j}]"
            if b is None:
                pr.add(where, f"unknown block '{bid}'")
            elif seen[b] != -1:
                pr.add(where, f"block '{bid}' is already a member of blocks[{seen[b]}]")
            elif a is None or not live[b]:
                pr.add(where, f"block '{bid}' has no target, so it cannot be fused")
            else:
                seen[b] = f
                pr.add(
                    where,
                    f"block '{bid}' runs on '{targets[a[b]]}', not on the fused block's target '{fb_target}': fusion never crosses targets",
                )
        if members and fb["id"] != members[0]:
            pr.add(f"blocks[{f}].id", f"a fused block keeps its first member's id '{members[0]}'")
        given.append(tuple(mine))
    pr.raise_if_any()
    if a is not None:
        left = [g.block_ids[b] for b in range(g.n_blocks) if live[b] and seen[b] == -1]
        if left:
            pr.add(
                "blocks",
                f"live block '{left[0]}' is in no fused block"
                + (f" (and {len(left) - 1} more)" if len(left) > 1 else ""),
            )
    merged = sec["merged"]
    if merged != sum(len(fb["members"]) - 1 for fb in fused_blocks if fb["members"]):
        pr.add("merged", f"{merged} does not match the fused blocks' members")
    pr.raise_if_any()
    if res.graph is not None and given == list(res.members) and len(sec) == 6:
        # Every member is known, live and on its block's target, every id its first
        # member's, so equal members make equal `blocks` (compared as indices, not as
        # strings); then the five small fields. The blocks go on as read (the writer
        # sorts keys), the small fields as `fuse` gives them (`1` for a read `1.0`).
        rest = _rest(res, g)
        if all(len(fb) == 3 for fb in fused_blocks) and all(sec[k] == v for k, v in rest.items()):
            return Output(res, {"blocks": fused_blocks, **rest})
    expected = section(res, g)
    if sec != expected:  # checked types: no 1 == True confusion in declared fields
        compare(pr, sec, expected)
        pr.raise_if_any()
    return Output(res, expected)


def _rest(res: FuseResult, g: Any) -> dict[str, Any]:
    """The fields of `res.to_json(g)` after `blocks`, in its order, without building the blocks.

    >>> from placement_cli.pipeline.run import parse_plan
    >>> from placement_cli.algorithms.fuse import fuse
    >>> g = parse_plan({"version": 1, "targets": ["t"], "blocks": [{"id": "a", "terminator": {"kind": "return"}}]})
    >>> res = fuse(g, (0,))
    >>> {"blocks": res.to_json(g)["blocks"], **_rest(res, g)} == res.to_json(g)
    True
    """
    js = FuseResult.to_json(msgspec.structs.replace(res, graph=None), g)
    del js["blocks"]
    return js


def summary(sec: dict[str, Any]) -> str:
    return f"{len(sec['blocks'])} blocks after fusion" if "blocks" in sec else ""


STAGE = Stage(
    name="fuse",
    requires=("solve",),
    options=FuseOptions,
    compute=compute,
    check=check,
    doc=__doc__ or "",
    summary=summary,
)
