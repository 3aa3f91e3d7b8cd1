"""`tree` artifacts in the views: `show` draws the operator tree (engines, cuts, the
critical path), `validate` checks the artifact against its tree file, `diff` compares
two of them.

A tree artifact records its result (engines, cuts, critical path, latency, frontier)
and names its input (`input_ref`: file name, path and sha256); it carries the input
itself only when written with `--include-input`. The input is found, in this order: the
file given with `--tree`, the input inside the artifact, the recorded path taken from
the artifact's folder, then from the current directory, the named file next to the
artifact, the named file in the current directory: the first of these that exists and
has the recorded sha256 (a file given with `--tree` must have it too).
"""

from __future__ import annotations

import hashlib
import math
import os
from pathlib import Path
from typing import Any

from placement_cli.algorithms.tree.decide import decide
from placement_cli.algorithms.tree.latency import MODELS, latency, model_tree, solve
from placement_cli.algorithms.tree.measure import critical_path, cut_edges, evaluate
from placement_cli.core.errors import InputError, Problem
from placement_cli.core.io import num, read_bytes
from placement_cli.ir.tree.build import build_tree
from placement_cli.ir.tree.model import INF, Tree, TreeInput, TreeLimits
from placement_cli.ir.tree.read import load_tree, parse_tree
from placement_cli.views.data import fmt_num
from placement_cli.views.diagram import CRITICAL, CRITICAL_CUT, CUT, LEGEND, Diagram, Edge, Node
from placement_cli.views.diff import changes
from placement_cli.views.diff_text import value_text
from placement_cli.views.text import TextTable
from placement_cli.views.tree_sniff import TreeArtifact


def _ref(art: TreeArtifact) -> dict[str, Any]:
    r = art.section.get("input_ref")
    return r if isinstance(r, dict) else {}


def tree_input(art: TreeArtifact, tree_file: str | None = None) -> TreeInput:
    """The tree the artifact was computed from (see the module doc for where it is
    looked for). Exit 3 naming what to pass when it cannot be found."""
    if tree_file is None and "input" in art.section:
        try:
            return parse_tree(art.doc, art.source)
        except InputError as exc:
            raise exc.with_source(art.source) from None
    path = tree_file_of(art, tree_file)
    assert path is not None
    return load_tree(path)


def tree_file_of(art: TreeArtifact, tree_file: str | None = None) -> str | None:
    """The path of the tree file the artifact was computed from: `tree_file` (which must
    have the recorded sha256), else found by its recorded name and sha256 (module doc);
    None when the artifact includes its input. Exit 3 naming what to pass when it
    cannot be found."""
    ref = _ref(art)
    if tree_file is not None:
        _same_file(art, tree_file, ref.get("sha256"), "tree.input_ref.sha256", "tree file")
        return tree_file
    if "input" in art.section:
        return None
    return _find(
        art, ref, "tree.input", "tree file", "--tree FILE with the tree file it was computed from"
    )


def profile_of(art: TreeArtifact, given: str | None = None) -> str | None:
    """The path of the transfer profile the artifact was placed with
    (`tree.transfer_ref`): `given` (which must have the recorded sha256), else found by
    its recorded name as the tree file is; None when it records none, or when it
    includes its input (the tree as placed, the profile already applied)."""
    ref = art.section.get("transfer_ref")
    if not isinstance(ref, dict) or "input" in art.section:
        return None
    if given is not None:
        _same_file(art, given, ref.get("sha256"), "tree.transfer_ref.sha256", "transfer profile")
        return given
    return _find(
        art,
        ref,
        "tree.transfer_ref",
        "transfer profile",
        "--transfer PROFILE with the profile it was placed with",
    )


def _find(art: TreeArtifact, ref: dict[str, Any], field: str, what: str, hint: str) -> str:
    """The first candidate file of `ref` (`_candidates`) with its recorded sha256."""
    name, sha = ref.get("name"), ref.get("sha256")
    tried: list[str] = []
    found: list[str] = []
    for cand in _candidates(art, ref):
        if cand in tried:
            continue
        tried.append(cand)
        if Path(cand).is_file():
            found.append(cand)
            if not isinstance(sha, str) or not sha or _sha(cand) == sha:
                return cand
    if found:  # none has the recorded hash: say so of the first
        _same_file(
            art,
            found[0],
            sha,
            f"{field}.sha256" if field != "tree.input" else "tree.input_ref.sha256",
            what,
        )
    where = f" (looked for {' and '.join(repr(t) for t in tried)})" if tried else ""
    head = (
        "this tree artifact does not include its input and its tree file"
        if field == "tree.input"
        else f"the {what} this tree artifact was placed with,"
    )
    raise InputError(
        [Problem(field, f"{head} {name!r:.200} was not found{where}: pass {hint}")],
        art.source,
    )


def _candidates(art: TreeArtifact, ref: dict[str, Any]) -> list[str]:
    """Where the tree file may be, in the order looked at (module doc)."""
    near = Path(art.path).parent if art.path != "-" else None
    out = []
    path, name = ref.get("path"), ref.get("name")
    if isinstance(path, str) and path:
        if near is not None:
            out.append(os.path.normpath(near / path))
        out.append(os.path.normpath(path))
    if isinstance(name, str) and name and name == Path(name).name:
        if near is not None:
            out.append(str(near / name))
        out.append(name)
    return out


def _sha(path: str) -> str:
    return hashlib.sha256(read_bytes(path)).hexdigest()


def _same_file(art: TreeArtifact, path: str, sha: Any, field: str, what: str) -> None:
    if isinstance(sha, str) and sha:
        got = _sha(path)
        if got != sha:
            raise InputError(
                [
                    Problem(
                        field,
                        f"{path} is not the {what} this artifact was computed from "
                        f"(its sha256 is {got[:12]}..., the artifact records {sha[:12]}...)",
                    )
                ],
                art.source,
            )


def built_tree(art: TreeArtifact, problem: TreeInput) -> Tree:
    """The tree as placed: shared sub-plans duplicated when the artifact's node count
    says they were (`--expand-dag`)."""
    tree, _ = build_tree(problem, False, TreeLimits())
    n = art.section.get("nodes")
    if isinstance(n, int) and n != tree.n:
        tree, _ = build_tree(problem, True, TreeLimits())
    return tree


def operators(problem: TreeInput, tree: Tree) -> list[str]:
    """Each tree node's `op` (empty when the file gives none)."""
    nodes = problem.file.nodes
    return [nodes[o].op or "" for o in tree.origin]


def _assignment(art: TreeArtifact, tree: Tree) -> list[int] | None:
    engines = art.section.get("engines") or {}
    if not isinstance(engines, dict) or not engines:
        return None
    idx = {e: i for i, e in enumerate(tree.engines)}
    try:
        return [idx[engines[v]] for v in tree.ids]
    except (KeyError, TypeError):
        return None


def check(art: TreeArtifact, tree_file: str | None = None) -> tuple[list[Problem], Tree, list[str]]:
    """Every way the artifact disagrees with its tree file: the recorded placement must
    be a placement of that tree (every operator, on an engine that runs it), its cuts,
    latency and critical path must be what that placement gives, within the budget,
    and the latency and frontier must be the optimum the tree file gives."""
    if art.doc.get("format_version") != 1:
        raise InputError(
            [
                Problem(
                    "format_version",
                    f"unsupported tree artifact version {art.doc.get('format_version')!r:.40}; "
                    "this tool reads 1",
                )
            ],
            art.source,
        )
    profile = art.section.get("transfer_ref")
    if isinstance(profile, dict) and "input" not in art.section:
        # The tree file alone is not what was placed: its transfer models were replaced
        # (drawing it is fine: `show` needs only its operators).
        raise InputError(
            [
                Problem(
                    "tree.transfer_ref",
                    f"this tree artifact was computed with --transfer {profile.get('name')!r:.200}, "
                    "so its tree file alone does not give it: write it with --include-input "
                    "(the tree as placed) to check it",
                )
            ],
            art.source,
        )
    problem = tree_input(art, tree_file)
    tree = built_tree(art, problem)
    model, cores = _model(art.section, art.source)
    dp_tree, dp_model = model_tree(problem, tree, model)
    out = _check(art, tree, dp_tree, dp_model, cores)
    if not out:
        out += _check_decision(art, problem, dp_tree, dp_model, cores)
    return out, tree, operators(problem, tree)


def _check_decision(
    art: TreeArtifact, problem: TreeInput, tree: Tree, model: str, cores: int
) -> list[Problem]:
    """A decision by the model's rule must be the one the tree file gives
    (`algorithms/tree/decide.py`); a verified one (`execute --verify`) is evidence
    that no file gives again: its choice must be a way of this tree."""
    sec = art.section
    recorded = sec.get("decision")
    if recorded is None:
        return []
    if not isinstance(recorded, dict):
        return [Problem("tree.decision", f"expected a mapping, got {_short(recorded)}")]
    if recorded.get("rule") == "verified":
        chosen = recorded.get("chosen")
        ok = isinstance(chosen, dict) and (
            (chosen.get("kind") == "single" and chosen.get("engine") in tree.engines)
            or (
                chosen.get("kind") == "split"
                and isinstance(chosen.get("engines"), dict)
                and set(chosen["engines"]) == set(tree.ids)
                and all(e in tree.engines for e in chosen["engines"].values())
            )
        )
        return [] if ok else [Problem("tree.decision.chosen", "not a way of the tree file")]
    a = _assignment(art, tree)
    if a is None:
        return []
    want = decide(
        problem, tree, a, float(sec.get("latency") or 0), len(cut_edges(tree, a)), model, cores
    )
    if recorded != want:
        return [
            Problem(
                "tree.decision",
                f"recorded {_short(recorded)}, but the tree file gives {_short(want)}",
            )
        ]
    return []


def _model(sec: dict[str, Any], source: str) -> tuple[str, int]:
    """The latency model the artifact was placed by (`latency_model`; absent: the
    seed's critical path)."""
    m = sec.get("latency_model")
    if not isinstance(m, dict):
        return "critical-path", 1
    model, cores = m.get("model"), m.get("cores")
    if model not in MODELS or not isinstance(cores, int) or isinstance(cores, bool) or cores < 1:
        raise InputError(
            [
                Problem(
                    "tree.latency_model",
                    f"expected {{model: {'|'.join(MODELS)}, cores: >= 1}}, got {_short(m)}",
                )
            ],
            source,
        )
    return model, cores


def _check(art: TreeArtifact, tree: Tree, dp_tree: Tree, model: str, cores: int) -> list[Problem]:
    """`check`'s comparisons: the placement against `tree` (engines, cuts, critical
    path), its latency and the optimum under the DP's `model` on `dp_tree`."""
    sec = art.section
    out: list[Problem] = []

    def differs(field: str, recorded: Any, want: Any, why: str) -> None:
        if recorded != want:
            out.append(
                Problem(f"tree.{field}", f"recorded {_short(recorded)}, but {why} {_short(want)}")
            )

    differs("nodes", sec.get("nodes"), tree.n, "the tree file has")
    differs("root", sec.get("root"), tree.ids[tree.root], "the tree file's root is")
    budget = sec.get("budget")
    if not isinstance(budget, int) or budget < 0:
        out.append(Problem("tree.budget", f"expected a whole number >= 0, got {_short(budget)}"))
        return out
    res = solve(dp_tree, min(budget, tree.n - 1), model, cores, float("inf"), TreeLimits())
    frontier = [
        {"budget": k, "latency": None if x == INF else num(x)} for k, x in enumerate(res.frontier)
    ]
    differs("frontier", sec.get("frontier"), frontier, "the tree file gives")
    status = art.doc.get("status")
    want_status = "infeasible" if res.latency == INF else "ok"
    if status == "unsolved":
        return out  # stopped by a limit: nothing recorded to check against
    differs("status", status, want_status, "the tree file gives")
    if status != "ok" or want_status != "ok":
        return out
    a = _assignment(art, tree)
    if a is None:
        engines = sec.get("engines") or {}
        missing = [v for v in tree.ids if v not in engines][:5]
        out.append(
            Problem(
                "tree.engines",
                "not a placement of the tree file's operators"
                + (f": no engine for {', '.join(missing)}" if missing else ": unknown engine"),
            )
        )
        return out
    extra = sorted(set(sec.get("engines") or {}) - set(tree.ids))[:5]
    if extra:
        out.append(Problem("tree.engines", f"operators the tree file has not: {', '.join(extra)}"))
    for v in range(tree.n):
        if tree.time[v][a[v]] == INF:
            out.append(
                Problem(
                    f"tree.engines.{tree.ids[v]}",
                    f"engine '{tree.engines[a[v]]}' cannot run '{tree.ids[v]}' (no time for it)",
                )
            )
    if out:
        return out
    lat = evaluate(tree, a)
    cuts = cut_edges(tree, a)
    differs("cuts", sec.get("cuts"), cuts, "the recorded engines give")
    differs("cuts_used", sec.get("cuts_used"), len(cuts), "the recorded engines give")
    if len(cuts) > budget:
        out.append(Problem("tree.cuts", f"{len(cuts)} cuts, above the budget of {budget}"))
    whole = latency(dp_tree, a, model, cores)
    differs("latency", sec.get("latency"), num(whole), "the recorded engines give")
    differs(
        "critical_path", sec.get("critical_path"), critical_path(tree, a, lat), "the engines give"
    )
    if res.latency != INF and whole > res.latency * (1 + 1e-9):
        out.append(
            Problem(
                "tree.latency",
                f"{fmt_num(whole)} is not the optimum: the tree file allows {fmt_num(res.latency)}",
            )
        )
    return out


def _short(x: Any) -> str:
    s = repr(x)
    return s if len(s) <= 120 else s[:117] + "..."


# --- show ---------------------------------------------------------------------------


def fmt_time(x: float | None, unit: str = "") -> str:
    """A time as a picture shows it: three significant digits (no more decimals than
    that, none dropped from a whole number), and its unit when the tree has one.

    >>> fmt_time(21.547705458872247, "ms"), fmt_time(0.545743), fmt_time(1234.7), fmt_time(0)
    ('21.5 ms', '0.546', '1235', '0')
    """
    if x is None:
        return "-"
    v = float(x)
    if v == 0 or not math.isfinite(v):
        text = fmt_num(v)
    else:
        digits = max(0, 2 - math.floor(math.log10(abs(v))))
        text = fmt_num(round(v, digits))
    return f"{text} {unit}" if unit else text


def _unit(art: TreeArtifact) -> str:
    """`ms` for a tree whose times were measured (`import sql --probe` records its
    query; `import` of an ANALYZE profile records milliseconds too), else none: a
    hand-written tree's times are in any unit."""
    inp = art.section.get("input")
    probed = isinstance(inp, dict) and "query" in inp
    return "ms" if probed or art.section.get("transfer_ref") else ""


def _critical(sec: dict[str, Any]) -> tuple[set[str], set[tuple[str, str]]]:
    """The critical path's operators, and its edges as (parent, child)."""
    nodes = [s["node"] for s in sec.get("critical_path") or () if s.get("kind") == "node"]
    return set(nodes), set(zip(nodes, nodes[1:], strict=False))


def tree_diagram(art: TreeArtifact, tree: Tree, ops: list[str]) -> Diagram:
    """The operator tree, root at the top: each operator in its engine's colour with its
    time there, every cut bold and labelled with its transfer cost, the critical path
    in red, a legend of the engines in their order."""
    sec = art.section
    engines = sec.get("engines") or {}
    eidx = {e: i for i, e in enumerate(tree.engines)}
    on_path, path_edges = _critical(sec)
    cuts = {(c["parent"], c["child"]): c for c in sec.get("cuts") or ()}
    unit = _unit(art)
    title = tree_title(art, unit)
    d = Diagram(title, legend="engines")
    for v in range(tree.n):
        vid = tree.ids[v]
        e = engines.get(vid)
        t = eidx.get(e, -1) if isinstance(e, str) else -1
        lines = [vid]
        if ops[v]:
            lines.append(ops[v])
        lines.append(f"{e} {fmt_time(tree.time[v][t], unit)}" if t >= 0 else "no engine")
        if vid in on_path:
            lines[-1] += " (critical)"
        d.nodes.append(Node(f"op:{vid}", tuple(lines), t))
    for v in range(tree.n):
        for u in tree.children[v]:
            p, c = tree.ids[v], tree.ids[u]
            cut = cuts.get((p, c))
            crit = (p, c) in path_edges
            style = CUT if cut else (CRITICAL if crit else "plain")
            # Read along the arrow (parent -> child): the rows go the other way.
            label = (
                f"cut {cut['to_engine']} <- {cut['from_engine']}: {fmt_time(cut['cost'], unit)}"
                if cut
                else ""
            )
            if cut and crit:
                style = CRITICAL_CUT
            d.edges.append(Edge(f"op:{p}", f"op:{c}", style, label, f"edge:{p}->{c}"))
    for i, e in enumerate(tree.engines):
        d.nodes.append(Node(f"legend:{e}", (e,), i, LEGEND))
    return d


def tree_table(art: TreeArtifact, tree: Tree, ops: list[str]) -> TextTable:
    """Per operator, indented under its parent: op, engine, time, subtree latency, and
    whether its edge to the parent is a cut or it is on the critical path."""
    sec = art.section
    engines = sec.get("engines") or {}
    eidx = {e: i for i, e in enumerate(tree.engines)}
    a = [eidx.get(str(engines.get(v)), -1) for v in tree.ids]
    lat: list[float | None] = [None] * tree.n
    if all(x >= 0 for x in a):
        lat = list(evaluate(tree, a))
    on_path, _ = _critical(sec)
    cuts = {c["child"]: c for c in sec.get("cuts") or ()}
    t = TextTable(
        tree_title(art),
        ("operator", "op", "engine", "time", "subtree", "notes"),
    )
    stack = [(tree.root, 0)]
    while stack:
        v, depth = stack.pop()
        vid = tree.ids[v]
        notes = []
        if vid in cuts:
            c = cuts[vid]
            notes.append(
                f"cut to parent {c['from_engine']} -> {c['to_engine']} {fmt_num(c['cost'])}"
            )
        if vid in on_path:
            notes.append("critical path")
        e = a[v]
        t.rows.append(
            (
                "  " * depth + vid,
                ops[v],
                tree.engines[e] if e >= 0 else "-",
                fmt_num(tree.time[v][e]) if e >= 0 else "-",
                fmt_num(lat[v]),
                "; ".join(notes),
            )
        )
        stack += [(u, depth + 1) for u in reversed(tree.children[v])]
    path = sec.get("critical_path") or ()
    if path:
        t.notes.append("critical path: " + " <- ".join(_step(s) for s in path))
    return t


def _step(s: dict[str, Any]) -> str:
    if s.get("kind") == "node":
        return f"{s.get('node')} [{s.get('engine')} {fmt_num(s.get('time'))}]"
    return f"transfer {s.get('from_engine')} -> {s.get('to_engine')} {fmt_num(s.get('cost'))}"


def tree_title(art: TreeArtifact, unit: str | None = None) -> str:
    """The picture's title: name, latency (rounded, `fmt_time`), cuts used of the budget."""
    sec = art.section
    name = sec.get("name") or Path(art.source).name
    if art.doc.get("status") != "ok":
        return f"{name}: {art.doc.get('status')}"
    unit = _unit(art) if unit is None else unit
    title = (
        f"{name}: latency {fmt_time(sec.get('latency'), unit)}, "
        f"{sec.get('cuts_used')} of {sec.get('budget')} cuts"
    )
    chosen = (
        (sec.get("decision") or {}).get("chosen") if isinstance(sec.get("decision"), dict) else None
    )
    if isinstance(chosen, dict) and chosen.get("kind") == "single":
        rule = sec["decision"].get("rule")
        title += f"; {rule}: all on {chosen.get('engine')}, {chosen.get('sql')}"
    elif isinstance(chosen, dict) and chosen.get("kind") == "split":
        title += f"; {sec['decision'].get('rule')}: the split"
    return title


# --- diff ---------------------------------------------------------------------------


def tree_diff(a: TreeArtifact, b: TreeArtifact) -> dict[str, Any]:
    """What changed between two tree artifacts: status, latency, budget and cuts used,
    operators that moved engine, cuts added and removed, the critical path, the
    frontier, the input (by its sha256), the diagnostics."""

    sa, sb = a.section, b.section
    out: dict[str, Any] = {}
    if a.doc.get("status") != b.doc.get("status"):
        out["status"] = {"a": a.doc.get("status"), "b": b.doc.get("status")}
    fields = [
        c
        for k in ("name", "root", "nodes", "budget", "cuts_used", "latency")
        for c in changes(sa.get(k), sb.get(k), (k,))
    ]
    if fields:
        out["fields"] = fields
    ea, eb = sa.get("engines") or {}, sb.get("engines") or {}
    moved = [
        {"node": k, "from": ea.get(k), "to": eb.get(k)}
        for k in [*eb, *(k for k in ea if k not in eb)]
        if ea.get(k) != eb.get(k)
    ]
    if moved:
        out["moved"] = moved

    def cut_key(c: dict[str, Any]) -> str:
        return f"{c.get('child')} -> {c.get('parent')} ({c.get('from_engine')} -> {c.get('to_engine')}, {fmt_num(c.get('cost'))})"

    ca = [cut_key(c) for c in sa.get("cuts") or ()]
    cb = [cut_key(c) for c in sb.get("cuts") or ()]
    if [x for x in cb if x not in ca]:
        out["cuts_added"] = [x for x in cb if x not in ca]
    if [x for x in ca if x not in cb]:
        out["cuts_removed"] = [x for x in ca if x not in cb]
    pa = " <- ".join(_step(s) for s in sa.get("critical_path") or ())
    pb = " <- ".join(_step(s) for s in sb.get("critical_path") or ())
    if pa != pb:
        out["critical_path"] = {"a": pa, "b": pb}
    fa = {f.get("budget"): f.get("latency") for f in sa.get("frontier") or ()}
    fb = {f.get("budget"): f.get("latency") for f in sb.get("frontier") or ()}
    frontier = [
        {"budget": k, "a": fa.get(k), "b": fb.get(k)}
        for k in sorted({*fa, *fb}, key=lambda k: (not isinstance(k, int), str(k)))
        if fa.get(k) != fb.get(k)
    ]
    if frontier:
        out["frontier"] = frontier
    ra, rb = _ref(a), _ref(b)
    if ra.get("sha256") != rb.get("sha256") or sa.get("input") != sb.get("input"):
        out["input"] = {"a": ra.get("name"), "b": rb.get("name")}
    da = [
        f"{d.get('severity')}: {d.get('code')}: {d.get('message')}"
        for d in a.doc.get("diagnostics") or ()
    ]
    db = [
        f"{d.get('severity')}: {d.get('code')}: {d.get('message')}"
        for d in b.doc.get("diagnostics") or ()
    ]
    if da != db:
        out["diagnostics"] = {
            "added": [x for x in db if x not in da],
            "removed": [x for x in da if x not in db],
        }
    return {"kind": "tree", "a": a.source, "b": b.source, "same": not out, **out}


def tree_diff_text(d: dict[str, Any]) -> str:
    """The differences for people, one per line."""

    lines = [
        f"{d['a']} -> {d['b']} (tree artifacts): " + ("no differences" if d["same"] else "differ")
    ]
    if "status" in d:
        lines.append(f"status: {d['status']['a']} -> {d['status']['b']}")
    for c in d.get("fields", []):
        lines.append(f"{' '.join(c['path'])}: {value_text(c['a'])} -> {value_text(c['b'])}")
    for m in d.get("moved", []):
        lines.append(f"moved: {m['node']} {m['from'] or '-'} -> {m['to'] or '-'}")
    lines += [f"cut added: {x}" for x in d.get("cuts_added", [])]
    lines += [f"cut removed: {x}" for x in d.get("cuts_removed", [])]
    if "critical_path" in d:
        lines.append("critical path:")
        lines.append(f"  a: {d['critical_path']['a'] or '-'}")
        lines.append(f"  b: {d['critical_path']['b'] or '-'}")
    for f in d.get("frontier", []):
        lines.append(
            f"frontier budget {f['budget']}: latency {value_text(f['a'])} -> {value_text(f['b'])}"
        )
    if "input" in d:
        lines.append(f"input changed: {d['input']['a']} -> {d['input']['b']}")
    for key, what in (("added", "diagnostic added"), ("removed", "diagnostic removed")):
        lines += [f"{what}: {x}" for x in d.get("diagnostics", {}).get(key, [])]
    return "\n".join(lines) + "\n"
