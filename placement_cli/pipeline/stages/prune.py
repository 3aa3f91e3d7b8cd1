"""Stage `prune`: arc consistency (`placement_cli.algorithms.prune`).

Its section is a decision later stages reuse (the domains `solve` runs on), so a read
section is checked for what it claims, not recomputed: every block listed once with
targets of its plan domain in target order, and `removed` naming exactly the (block,
target) pairs the plan domain has and `domains` lacks, each with a real edge at that
block.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import and_, invert
from typing import Any

from placement_cli.algorithms.prune import PruneOptions, prune
from placement_cli.pipeline.checks import Problems, dump
from placement_cli.pipeline.stage import Output, Stage, StageRun


def compute(run: StageRun, options: PruneOptions | None) -> Output:
    g = run.g
    res = prune(g, options)
    return Output(res.domains, res.to_json(g), res.diagnostics, res.status, res)


def check(run: StageRun, sec: dict[str, Any]) -> Output:
    g = run.g
    fast = proved(g, sec, run.shared)
    if fast is not None:
        return Output(fast, dump(sec), (), _status(g, fast))
    pr = Problems("prune")
    tindex = {t: i for i, t in enumerate(g.targets)}
    domains = list(g.domain)
    seen = [False] * g.n_blocks
    index, plan_domain = g.index, g.domain
    # A domain list's bitset, or -1 when it is not known targets in target order; plans
    # repeat a few distinct lists, so each is read once. A block whose list is clean
    # and inside its plan domain needs nothing more; any other gets the loop below,
    # which names each problem.
    masks: dict[tuple[str, ...], int] = {}
    for bid, ts in sec["domains"].items():
        b = index.get(bid)
        if b is None:
            pr.add(f"domains.{bid}", f"unknown block '{bid}'")
            continue
        seen[b] = True
        key = tuple(ts)
        m = masks.get(key)
        if m is None:
            m = masks[key] = _mask(ts, tindex)
        if m >= 0 and not m & ~plan_domain[b]:
            domains[b] = m
            continue
        m = 0
        last = -1
        for j, t in enumerate(ts):
            ti = tindex.get(t)
            if ti is None:
                pr.add(f"domains.{bid}[{j}]", f"unknown target '{t}'")
            elif ti <= last:
                pr.add(f"domains.{bid}[{j}]", f"target '{t}' out of target order or repeated")
            elif not g.domain[b] >> ti & 1:
                pr.add(
                    f"domains.{bid}",
                    f"not a subset of the block's domain in the plan: '{t}' cannot run it",
                )
            else:
                m |= 1 << ti
                last = ti
        domains[b] = m
    for b, ok in enumerate(seen):
        if not ok:
            pr.add(f"domains.{g.block_ids[b]}", "missing: every block is listed")
    pr.raise_if_any()
    gone: set[tuple[int, int]] = set()
    gsucc, gdst = g.succ, g.edge_dst
    for j, r in enumerate(sec["removed"]):
        r_block, r_target, edge = r["block"], r["target"], r["edge"]
        rb = index.get(r_block)
        rt = tindex.get(r_target)
        if rb is None:
            pr.add(f"removed[{j}].block", f"unknown block '{r_block}'")
            continue
        if rt is None:
            pr.add(f"removed[{j}].target", f"unknown target '{r_target}'")
            continue
        if not plan_domain[rb] >> rt & 1 or domains[rb] >> rt & 1:
            pr.add(
                f"removed[{j}]",
                f"'{r_target}' on '{r_block}' was not removed: not in the plan domain, or still in prune.domains",
            )
        elif (rb, rt) in gone:
            pr.add(f"removed[{j}]", f"'{r_target}' on '{r_block}' listed twice")
        gone.add((rb, rt))
        e_from, e_index, e_to = edge["from"], edge["index"], edge["to"]
        u, v = index.get(e_from), index.get(e_to)
        if u is None or v is None or e_index >= len(gsucc[u]) or gdst[gsucc[u][e_index]] != v:
            pr.add(f"removed[{j}].edge", f"no edge {e_from}[{e_index}] -> {e_to} in the plan")
        elif rb not in (u, v):
            pr.add(
                f"removed[{j}].edge",
                f"edge {e_from}[{e_index}] -> {e_to} does not touch '{r_block}'",
            )
    for b in range(g.n_blocks):
        lost = g.domain[b] & ~domains[b]
        if not lost:
            continue
        for lt in range(g.n_targets):
            if lost >> lt & 1 and (b, lt) not in gone:
                pr.add(
                    "removed",
                    f"'{g.targets[lt]}' on '{g.block_ids[b]}' is missing from prune.domains but not listed as removed",
                )
    pr.raise_if_any()
    return Output(tuple(domains), dump(sec), (), _status(g, domains))


def _status(g: Any, domains: Sequence[int]) -> str:
    """The status a read section implies: a live block with nothing left cannot be placed."""
    if 0 in domains and any(g.live[b] and not domains[b] for b in range(g.n_blocks)):
        return "infeasible"
    return "ok"


def proved(
    g: Any, sec: dict[str, Any], shared: dict[str, Any] | None = None
) -> tuple[int, ...] | None:
    """The pruned domains when the read section holds (what `check` accepts), else None
    (then `check`'s loops name each problem). The other way round from `check`: the
    domains the section must list are the plan's minus `removed`, so each block's list
    is compared with that domain's one canonical list (string equality, no hashing of
    the lists' strings), and each removal is checked once: known, in the plan domain,
    listed once, on a real edge touching its block. Given `shared`, the ids `domains`
    lists and their block indices go there as `"listed"` (`solve`'s check reuses them).

    >>> from placement_cli.pipeline.run import parse_plan
    >>> g = parse_plan({"version": 1, "targets": ["a", "b"], "blocks": [
    ...     {"id": "x", "domain": ["a"], "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
    ...     {"id": "y", "terminator": {"kind": "return"}}]})
    >>> sec = {"domains": {"x": ["a"], "y": ["a"]},
    ...        "removed": [{"block": "y", "target": "b", "edge": {"from": "x", "index": 0, "to": "y"}}]}
    >>> proved(g, sec)
    (1, 1)
    >>> proved(g, {**sec, "removed": []}) is None
    True
    """
    n, nt = g.n_blocks, g.n_targets
    index, targets, plan_domain = g.index, g.targets, g.domain
    tindex = {t: i for i, t in enumerate(targets)}
    removed = sec["removed"]
    lost = [0] * n
    gsucc, gdst = g.succ, g.edge_dst
    for r in removed:
        rb = index.get(r["block"])
        rt = tindex.get(r["target"])
        if rb is None or rt is None:
            return None
        bit = 1 << rt
        if not plan_domain[rb] & bit or lost[rb] & bit:  # not in the plan domain, or twice
            return None
        lost[rb] |= bit
        edge = r["edge"]
        e_index = edge["index"]
        u, v = index.get(edge["from"]), index.get(edge["to"])
        if (
            u is None
            or v is None
            or e_index >= len(gsucc[u])
            or gdst[gsucc[u][e_index]] != v
            or rb not in (u, v)
        ):
            return None
    domains = tuple(map(and_, plan_domain, map(invert, lost)))
    doms = sec["domains"]
    if len(doms) != n:
        return None
    blocks = list(map(index.get, doms))  # the keys' hashes are cached: cheap
    if None in blocks:  # n distinct known blocks: every block once
        return None
    canonical = {m: [targets[t] for t in range(nt) if m >> t & 1] for m in set(domains)}
    if list(doms.values()) != list(map(canonical.__getitem__, map(domains.__getitem__, blocks))):
        return None
    if shared is not None:
        shared["listed"] = (list(doms), blocks)
    return domains


def _mask(ts: list[str], tindex: dict[str, int]) -> int:
    """The bitset of a domain list of known targets in target order, else -1.

    >>> _mask(["a", "c"], {"a": 0, "b": 1, "c": 2}), _mask(["c", "a"], {"a": 0, "c": 2}), _mask(["x"], {})
    (5, -1, -1)
    """
    m = 0
    last = -1
    for t in ts:
        ti = tindex.get(t)
        if ti is None or ti <= last:
            return -1
        m |= 1 << ti
        last = ti
    return m


def summary(sec: dict[str, Any]) -> str:
    return f"removed {len(sec['removed'])} (block, target) pairs" if "removed" in sec else ""


STAGE = Stage(
    name="prune",
    requires=(),
    options=PruneOptions,
    compute=compute,
    check=check,
    doc=__doc__ or "",
    summary=summary,
)
