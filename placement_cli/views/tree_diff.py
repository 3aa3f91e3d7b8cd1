"""`diff` of two tree artifacts: what changed (status, latency, cuts, engines, critical
path, frontier, input) and its text."""

from __future__ import annotations

from typing import Any

from placement_cli.views.data import fmt_num
from placement_cli.views.diff import changes
from placement_cli.views.diff_text import value_text
from placement_cli.views.tree_show import path_step
from placement_cli.views.tree_sniff import TreeArtifact


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
    pa = " <- ".join(path_step(s) for s in sa.get("critical_path") or ())
    pb = " <- ".join(path_step(s) for s in sb.get("critical_path") or ())
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
    ra, rb = a.input_ref, b.input_ref
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
