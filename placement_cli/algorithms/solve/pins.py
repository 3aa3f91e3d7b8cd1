"""Pins, forbids and the warm start of `solve` (`placement_cli.algorithms.solve.driver`):
checking `--pin` / `--forbid` against the plan, narrowing the domains by them, and the first
incumbent a warm start gives the methods."""

from __future__ import annotations

from placement_cli.algorithms.solve.context import Ctx
from placement_cli.algorithms.solve.objective import UNASSIGNED, feasible_for
from placement_cli.algorithms.solve.options import Pair, SolveOptions
from placement_cli.core.diagnostics import Diagnostic
from placement_cli.core.errors import InputError, Problem
from placement_cli.ir.graph import Graph


def pin_text(opts: SolveOptions) -> str:
    parts = [f"--pin {b}={t}" for b, t in opts.pins] + [
        f"--forbid {b}={t}" for b, t in opts.forbids
    ]
    return ", ".join(parts)


def check_pins(g: Graph, opts: SolveOptions) -> None:
    """Unknown blocks or targets (and blocks that never run) are input errors: exit 3."""
    problems: list[Problem] = []
    for flag, pairs in (("--pin", opts.pins), ("--forbid", opts.forbids)):
        for b, t in pairs:
            where = f"{flag} {b}={t}"
            if b not in g.index:
                problems.append(Problem(where, f"unknown block {b!r:.60}"))
            elif not g.live[g.index[b]]:
                problems.append(
                    Problem(where, f"block {b!r:.60} is unreachable and takes no target")
                )
            if t not in g.targets:
                problems.append(
                    Problem(where, f"unknown target {t!r:.60} (targets: {', '.join(g.targets)})")
                )
    if problems:
        raise InputError(problems)


def pin_domains(
    g: Graph, domains: tuple[int, ...], opts: SolveOptions
) -> tuple[tuple[int, ...], Diagnostic | None]:
    """The domains narrowed by the pins and forbids, or a diagnostic naming the pin that
    no target of the (pruned) domain satisfies."""
    dom = list(domains)
    for b_id, t_name in opts.pins:
        b, t = g.index[b_id], g.targets.index(t_name)
        if not domains[b] >> t & 1:
            left = ", ".join(g.target_list(domains[b])) or "none"
            return domains, Diagnostic(
                "error",
                "pin-infeasible",
                f"pin {b_id}={t_name} is impossible: block '{b_id}' cannot run on "
                f"'{t_name}' (its targets after pruning: {left})",
                (b_id,),
            )
        dom[b] &= 1 << t
        if not dom[b]:
            others = [f"{x}={y}" for x, y in opts.pins if x == b_id]
            return domains, Diagnostic(
                "error",
                "pin-infeasible",
                f"pins {', '.join(others)} are impossible together: block '{b_id}' "
                "runs on one target",
                (b_id,),
            )
    for b_id, t_name in opts.forbids:
        b, t = g.index[b_id], g.targets.index(t_name)
        dom[b] &= ~(1 << t)
        if not dom[b]:
            named = [f"{x}={y}" for x, y in opts.forbids if x == b_id] + [
                f"{x}={y}" for x, y in opts.pins if x == b_id
            ]
            return domains, Diagnostic(
                "error",
                "pin-infeasible",
                f"forbidding {', '.join(named)} leaves block '{b_id}' no target",
                (b_id,),
            )
    return tuple(dom), None


def warm_incumbent(c: Ctx, warm: tuple[Pair, ...]) -> tuple[int, ...] | None:
    """The earlier assignment on this plan: blocks matched by id, targets by name. Blocks
    that are new, or whose old target is no longer allowed, are repaired greedily: the
    matched blocks keep their targets and a cheapest-first search with arc consistency
    places the rest. None when no repair exists within a tenth of the budget (a cold
    start then)."""
    g, inst = c.g, c.inst
    old = dict(warm)
    a = [UNASSIGNED] * g.n_blocks
    missing = 0
    for b in inst.live:
        t_name = old.get(g.block_ids[b])
        t = g.targets.index(t_name) if t_name in g.targets else -1
        if t >= 0 and inst.dom[b] >> t & 1:
            a[b] = t
        else:
            missing += 1
    c.stats["warm_matched"] = len(inst.live) - missing
    if not missing and feasible_for(g, c.domains, a):
        return tuple(a)
    # Lazy: the complete search (~0.6 ms, measured), only for a warm start.
    from placement_cli.algorithms.solve.complete import search, whole

    sub = whole(inst)
    dom = [1 << a[b] if a[b] >= 0 else inst.dom[b] for b in sub.blocks]
    # A tenth of what is left: a failed repair must leave the real search its time.
    sub_budget = c.budget.share(0.1)
    f = search(
        sub,
        dom,
        [inst.unary[b] for b in sub.blocks],
        mac=True,
        bound=False,
        budget=sub_budget,
        first_only=True,
    )
    if f.values is None:
        c.stats["warm_repaired"] = False
        return None
    c.stats["warm_repaired"] = True
    for i, b in enumerate(sub.blocks):
        a[b] = f.values[i]
    return tuple(a)
