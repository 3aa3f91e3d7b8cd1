"""`placement import sql QUERY.sql --probe`: a tree file whose times are measured by
running every subtree of the query's plan on every engine (docs/probe.md).

The plan is DataFusion's, numbered once (`engines/fragments.py`): one tree node per
relation, `n0` the root. Every node's whole subtree is run alone on every engine, as
is the query as written: each checked in a warm-up, then all timed in `repeat`
interleaved rounds (`timed_rounds`: wall clock, the result materialised as a canonical
Arrow table), their median kept with the spread (`subtree` in the tree file). A node's
self-time on an engine is its subtree's median minus the slowest child subtree's median
there (children run side by side under the critical-path model), clamped at 0 and
counted in a `clamped-self-time` warning (`stats.self_time`, the rule `execute
--times-out` uses too). Rows and bytes per row are those of the
node's result (the first engine that ran it; engines that return another number of
rows are reported and get no time). An engine that cannot run a subtree (the unparser
or the engine fails) gets no time at that node nor above it, with the reason in an
`engine-cannot-run` warning. The tree file keeps the SQL and the Substrait plan
(`query`) and each node's relation (`plan_node`), so `execute` can run any placement.

With `in_pipeline` (`--in-pipeline`) the probe also times, for every node but the root,
the rest of the query on each engine with the node's result handed in as a table (the
consumer fragment of a cut there: `prepare(plan, root, e, {node})`, the result another
engine's, as a cut hands it over), among the same interleaved rounds. Whole query less
that rest is what the node's subtree costs inside the engine's pipeline, where its
result is never materialised (`above` in the tree file; `--latency measured` reads it,
`algorithms/tree/latency.py`). Those results are held until the rounds end, at most
`held_bytes` of them (Arrow bytes); a node past that, or whose rest an engine cannot
run, goes without, named in an `in-pipeline-not-timed` warning. The checked runs and
their rounds live in `probe_runs`, the tree file in `probe_tree`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

from placement_cli.core.cache_modes import Caches
from placement_cli.core.diagnostics import Diagnostic
from placement_cli.core.errors import InputError, PlacementError, Problem
from placement_cli.engines import registry
from placement_cli.engines.base import deep_stack
from placement_cli.engines.caches import before
from placement_cli.engines.connect import Connections, Settings, Sources, threads
from placement_cli.engines.fragments import Plan, PlanNode, build_plan, new_token, prepare
from placement_cli.engines.measure import hand_off
from placement_cli.engines.probe_runs import NodeProbe, Pending, first_line, timed_rounds
from placement_cli.engines.registry import PLANNER, REFERENCE
from placement_cli.engines.stats import rows_of, same_rows

WARMUP = 1
# `--in-pipeline` holds node results, each engine's, until the timed rounds. Measured from
# the tree files of all 22 TPC-H queries at SF 1 (rows x row width of every node but the
# root, one engine's): at most 1.4 GiB (Q18, Q1; Q21 1.2 GiB), so about 2.8 GiB for two
# engines; this machine kind has 23 GB.
HELD_BYTES = 4 << 30


@dataclass
class Probe:
    """Every node's measurements, in the plan's preorder, and the warnings raised."""

    plan: Plan
    engines: tuple[str, ...]
    repeat: int
    nodes: dict[str, NodeProbe]
    warmup: int = WARMUP
    threads: dict[str, int | None] = field(default_factory=dict)
    # The CPU caches each timed run started with (`engines/caches.py`).
    caches: Caches = "cold"
    # The query as one node run as written by each engine (`probe_native`), not a plan.
    native: bool = False
    # Each engine on the query as written (`as_written`), and the plan root's result.
    as_written: NodeProbe | None = None
    root_table: Any = None
    # Node -> why its result cannot cross a cut exactly (`inexact_cuts`).
    no_cut: dict[str, str] = field(default_factory=dict)
    # The processes whose runs are pooled here (`import sql --probe --forks`).
    forks: int = 1
    # Node -> the rest of the query on each engine, the node's result handed in
    # (`in_pipeline`): its runs, keyed by engine, checked against the root's rows.
    above: dict[str, NodeProbe] = field(default_factory=dict)

    def ran(self, nid: str) -> bool:
        """Whether some engine ran the node's subtree alone."""
        return bool(self.nodes[nid].runs)

    def kids(self, nid: str) -> list[str]:
        """A node's children in the tree: its plan children, a child no engine ran
        alone replaced by that child's own (merged into this node: `merge`)."""
        out: list[str] = []
        stack = list(reversed(self.plan.nodes[nid].children))
        while stack:
            c = stack.pop()
            if self.ran(c):
                out.append(c)
            else:
                stack.extend(reversed(self.plan.nodes[c].children))
        return out

    diagnostics: list[Diagnostic] = field(default_factory=list)


def probe(
    conns: Connections,
    plan: Plan,
    engines: tuple[str, ...],
    repeat: int,
    warmup: int = WARMUP,
    handoffs: bool = False,
    later: list[Pending] | None = None,
    in_pipeline: bool = False,
    held_bytes: int = HELD_BYTES,
    seed: int = 0,
) -> Probe:
    """Run every node's subtree on every engine: `warmup` untimed runs (the result
    checked; with `handoffs`, each node's result but the root's then handed to every
    engine `repeat` times, `time_handoffs`; with `in_pipeline`, the rest of the query
    above each node checked on every engine, `queue_above`), then `repeat` timed runs
    of each, in interleaved rounds (their order drawn from `seed`) with the runs already
    queued in `later` (`timed_rounds`)."""
    pending: list[Pending] = [] if later is None else later
    out = Probe(plan, engines, repeat, {nid: NodeProbe() for nid in plan.nodes}, warmup=warmup)
    held: dict[str, dict[str, Any]] = {}
    held_total = 0  # their Arrow bytes
    skipped: list[str] = []
    for engine in engines:
        # Opened first: an engine that cannot be reached is the run's error (exit 6),
        # never a finding that it cannot run the nodes.
        conns.session(engine)
    for nid, node in plan.nodes.items():
        here = out.nodes[nid]
        tables: dict[str, Any] = {}
        for engine in engines:
            broken = next((c for c in node.children if engine in out.nodes[c].failed), None)
            if broken is not None:
                here.failed[engine] = f"its input {broken} could not run there"
                continue
            try:
                frag = prepare(conns, plan, nid, engine, frozenset())
            except PlacementError:
                raise
            except Exception as exc:  # noqa: BLE001 - the unparser's failure is a finding
                here.failed[engine] = f"{type(exc).__name__}: {first_line(exc)}"
                continue
            table = here.measure(engine, partial(frag.run, {}), warmup, pending)
            if table is not None:
                tables[engine] = table
        here.disagree(tables)
        if nid == plan.root and here.runs:
            out.root_table = next(t for e, t in tables.items() if e in here.runs)
            continue
        if handoffs:
            time_handoffs(conns, here, tables, engines, repeat)
        if not in_pipeline:
            continue
        results = {e: tables[e] for e in engines if e in here.runs and e in tables}
        size = sum(t.nbytes for t in results.values())
        if results and held_total + size <= held_bytes:
            held[nid] = results
            held_total += size
        elif results:
            skipped.append(nid)
    if in_pipeline:
        queue_above(conns, out, held, warmup, pending)
    timed_rounds(pending, repeat, seed, before(conns.settings.caches))
    # The timed runs hold the node results handed in: the rounds are over.
    held.clear()
    pending.clear()
    _report_failures(out)
    if in_pipeline:
        _report_above(out, skipped, held_bytes)
    return out


def queue_above(
    conns: Connections,
    out: Probe,
    held: dict[str, dict[str, Any]],
    warmup: int,
    pending: list[Pending],
) -> None:
    """For each node of `held` (node -> engine -> its result there), the rest of the
    query on every engine e that ran the root, the node's result handed in as a table:
    checked (the root's rows) and its timed runs queued in `pending`
    (`NodeProbe.measure`), into `out.above`. The result handed to e is another
    engine's (the first in order that ran the node; e's own when none did): what a cut
    into e hands over. Engines return a result in batches of their own sizes, and the
    receiving engine's scan of it differs with them."""
    root = out.nodes[out.plan.root]
    for nid, results in held.items():
        rest = NodeProbe(rows=root.rows, row_width=root.row_width, rows_from=root.rows_from)
        for engine in out.engines:
            if engine not in root.runs:
                continue
            try:
                frag = prepare(conns, out.plan, out.plan.root, engine, frozenset({nid}))
            except PlacementError:
                raise
            except Exception as exc:  # noqa: BLE001 - the unparser's failure is a finding
                rest.failed[engine] = f"{type(exc).__name__}: {first_line(exc)}"
                continue
            others = [t for e, t in results.items() if e != engine]
            table = others[0] if others else results[engine]
            rest.measure(engine, partial(frag.run, {nid: table}), warmup, pending)
        out.above[nid] = rest


def _report_above(p: Probe, skipped: list[str], held_bytes: int) -> None:
    """One `in-pipeline-not-timed` warning naming the nodes some engine has no rest
    for: past the bytes held, or a rest that engine could not run (the first reason)."""
    failed = [nid for nid, rest in p.above.items() if rest.failed]
    missing = [nid for nid in p.plan.nodes if nid in skipped or nid in failed]
    if not missing:
        return
    first = missing[0]
    why = (
        f"the node results held reached {held_bytes} bytes"
        if first in skipped
        else "; ".join(f"{e}: {r}" for e, r in p.above[first].failed.items())
    )
    p.diagnostics.append(
        Diagnostic(
            "warning",
            "in-pipeline-not-timed",
            f"{len(missing)} node(s) have no in-pipeline time on some engine "
            f"({', '.join(missing[:8])}{', ...' if len(missing) > 8 else ''}): "
            f"`--latency measured` takes their subtrees as materialised; at {first}: {why}",
            tuple(missing),
        )
    )


def time_handoffs(
    conns: Connections,
    here: NodeProbe,
    tables: dict[str, Any],
    engines: tuple[str, ...],
    repeat: int,
) -> None:
    """The node's result (the first engine's that ran it) made a table of each engine
    and read whole there, once untimed, then `repeat` times (ms, `measure.hand_off`: what the receiving
    side pays; the sender's result is in hand, as a fragment's is when it ends). A
    hand-off an engine refuses is left out: the transfer model then prices it."""
    src = next((e for e in engines if e in here.runs and e in tables), None)
    if src is None:
        return
    for dst in engines:
        try:
            hand_off(conns, src, dst, tables[src])  # a warm-up, as `execute` has its runs
            here.handoffs[dst] = [
                hand_off(conns, src, dst, tables[src]) * 1000.0 for _ in range(max(1, repeat))
            ]
        except PlacementError:
            raise
        except Exception:  # noqa: BLE001 - the model prices what could not be timed
            here.handoffs.pop(dst, None)


def _report_failures(p: Probe) -> None:
    for engine in p.engines:
        failed = [nid for nid, n in p.nodes.items() if engine in n.failed]
        if not failed:
            continue
        # The lowest failures are the causes; nodes above them fail because of them.
        causes = [nid for nid in failed if not p.nodes[nid].failed[engine].startswith("its input")]
        first = causes[0] if causes else failed[0]
        p.diagnostics.append(
            Diagnostic(
                "warning",
                "engine-cannot-run",
                f"{engine} could not run {len(failed)} of {len(p.nodes)} node(s) "
                f"({', '.join(failed[:8])}{', ...' if len(failed) > 8 else ''}): they have no "
                f"time there; at {first}: {p.nodes[first].failed[engine]}",
                tuple(failed),
            )
        )


def merge(p: Probe) -> None:
    """Nodes no engine ran alone are merged into their parent (their time is in its
    subtree's; the tree gets the parent with their children, `Probe.kids`), one
    `node-merged` warning naming them and the first one's reason. The root must have
    run somewhere (else the caller runs the query as written: `probe_native`)."""
    dead = [nid for nid in p.plan.nodes if not p.ran(nid)]
    if not dead:
        return
    first = p.nodes[dead[0]].failed
    why = "; ".join(f"{e}: {r}" for e, r in first.items())
    p.diagnostics.append(
        Diagnostic(
            "warning",
            "node-merged",
            f"{len(dead)} node(s) ran on no engine alone and were merged into their parent "
            f"({', '.join(dead[:8])}{', ...' if len(dead) > 8 else ''}): no cut falls "
            f"there; at {dead[0]} ({p.plan.nodes[dead[0]].op}): {why}",
            tuple(dead),
        )
    )


def as_written(
    conns: Connections, sql: str, engines: tuple[str, ...], warmup: int, later: list[Pending]
) -> tuple[NodeProbe, dict[str, Any]]:
    """The query run as written on every engine (each its own planner: DuckDB's SQL as
    the user wrote it, DataFusion's `ctx.sql`, ...), checked as a node is, its timed
    runs queued in `later` with the nodes', and each engine's result (the first one's,
    then each that gives the same number of rows)."""
    here = NodeProbe()
    tables: dict[str, Any] = {}
    for engine in engines:
        session = conns.session(engine)
        table = here.measure(engine, partial(session.sql, sql), warmup, later)
        if table is not None:
            tables[engine] = table
    here.disagree(tables)
    return here, {e: t for e, t in tables.items() if e in here.runs}


def probe_native(
    sql: str,
    engines: tuple[str, ...],
    repeat: int,
    warmup: int,
    source: str,
    why: str,
    written: NodeProbe,
    tables: dict[str, Any],
) -> Probe:
    """The query as one node (`op` query), run as written on every engine that takes it
    (`written`, `as_written`): what a query still gets when its plan is of no use
    (`why`: the planner cannot plan it, no engine ran the plan's root, or the plan does
    not give the reference engine's answer), with a `planner-cannot-plan` warning.
    Invalid input (exit 3) when no engine takes it, with each engine's reason."""
    first = next(iter(tables.values()), None)
    columns = () if first is None else tuple(first.column_names)
    plan = Plan(sql, {}, {"n0": PlanNode("n0", "query", (), columns)}, new_token(), {})
    out = Probe(plan, engines, repeat, {"n0": written}, warmup=warmup, native=True)
    out.as_written = written
    if not written.runs:
        reasons = [Problem("", why)]
        reasons += [Problem("", f"{e}: {r}") for e, r in written.failed.items()]
        raise InputError(reasons, source)
    out.diagnostics.append(
        Diagnostic(
            "warning",
            "planner-cannot-plan",
            f"{why}: the tree is the whole query as one node, run as written on "
            f"{', '.join(written.runs)}",
            ("n0",),
        )
    )
    _report_failures(out)
    return out


def inexact_cuts(plan: Plan, conns: Connections, engines: tuple[str, ...]) -> dict[str, str]:
    """Node -> why its result cannot cross a cut exactly: every node at or above a read
    of a column that an engine holding the table exports to Arrow as another type
    (`Session.inexact_columns`: a UUID as text, which a filter above compares as text).
    Every ancestor, not only those whose output names the column: a projection may
    rename it, and a plan node's types are not known here; a cut refused too often
    costs a placement, a cut allowed wrongly costs an answer."""
    inexact: dict[str, dict[str, str]] = {}
    for e in engines:
        for table, cols in conns.session(e).inexact_columns().items():
            inexact.setdefault(table, {}).update(cols)
    if not inexact:
        return {}
    why: dict[str, str] = {}
    for nid, node in plan.nodes.items():
        if node.op.startswith("read(") and node.op.endswith(")"):
            table = node.op[5:-1].rsplit(".", 1)[-1]
            hit = [
                f"{c} ({inexact[table][c]})" for c in node.columns if c in inexact.get(table, {})
            ]
            if hit:
                why[nid] = (
                    f"it carries {table}.{', '.join(hit)}, which crosses to another engine as "
                    "another type"
                )
    # Up to the root: a parent carries what its children carry (preorder reversed).
    parent = {c: nid for nid, node in plan.nodes.items() for c in node.children}
    for nid in reversed(list(plan.nodes)):
        if nid in why and nid in parent and parent[nid] not in why:
            why[parent[nid]] = why[nid]
    return why


def _answer_differs(plan_root: Any, tables: dict[str, Any]) -> str | None:
    """How the plan's answer (the root's result) differs from the reference engine's
    answer to the query as written (`registry.REFERENCE`), or None (also when that
    engine did not run the query as written: nothing to judge by)."""
    want = tables.get(REFERENCE.name)
    if want is None or plan_root is None:
        return None
    differs = same_rows(rows_of(plan_root), rows_of(want))
    return None if differs is None else f"{differs} ({REFERENCE.name}'s own answer)"


@deep_stack
def probe_query(
    source: str,
    sql: str,
    sources: Sources,
    settings: Settings,
    engines: tuple[str, ...],
    repeat: int,
    warmup: int = WARMUP,
    handoffs: bool = False,
    in_pipeline: bool = False,
    held_bytes: int = HELD_BYTES,
    seed: int = 0,
) -> Probe:
    """Plan `sql` (of the file `source`) in the planner and probe every node of it on
    `engines` (`probe`, with `handoffs`, `in_pipeline`, `held_bytes` and `seed`); invalid input (exit 3) when
    the planner cannot plan it. Runs on a thread with a deep stack (`base.deep_stack`)."""
    for eng in dict.fromkeys((PLANNER, *(registry.engine(e) for e in engines))):
        eng.modules("import sql --probe")
    conns = Connections(sources, settings)
    try:
        # Each engine on the query as written: the answer the plan must give, and the
        # single-engine ways a placement is judged against.
        # Every timed run of the probe, taken in interleaved rounds once all are checked
        # (`timed_rounds`, in `probe`): the query as written on each engine and every
        # subtree.
        later: list[Pending] = []
        written, tables = as_written(conns, sql, engines, warmup, later)
        native = partial(probe_native, sql, engines, repeat, warmup, source)
        try:
            plan = build_plan(conns, sql)
        except PlacementError:
            raise
        except Exception as exc:  # noqa: BLE001 - the planner's refusal is a finding
            why = f"{PLANNER.name} cannot plan the query: {first_line(exc)}"
            timed_rounds(later, repeat, seed, before(settings.caches))
            out = native(why, written, tables)
        else:
            out = probe(
                conns,
                plan,
                engines,
                repeat,
                warmup,
                handoffs,
                later,
                in_pipeline,
                held_bytes,
                seed,
            )
            differs = _answer_differs(out.root_table, tables)
            if not out.ran(plan.root):
                # No engine ran the plan's root: the plan is of no use; the query as
                # written may still run (and says why not when it does not).
                why = "; ".join(f"{e}: {r}" for e, r in out.nodes[plan.root].failed.items())
                out = native(
                    f"no engine ran the root of {PLANNER.name}'s plan ({why})", written, tables
                )
            elif differs is not None:
                # The plan does not compute what the query asks (a NOT IN's NULLs, an
                # engine's own semantics): no placement of it may be offered.
                why = f"{PLANNER.name}'s plan of the query gives another answer: {differs}"
                out = native(why, written, tables)
            else:
                merge(out)
                out.as_written = written
                out.no_cut = inexact_cuts(plan, conns, engines)
        out.threads = threads(engines, settings)
        out.caches = settings.caches
        return out
    finally:
        conns.close()
