"""`execute` reports in the views: `show` draws the executed tree (each operator's
engine and predicted self-time, each fragment's measured time at its root, each cut
with its hand-off: rows, bytes, predicted and measured ms), and the ranking table that
`execute` prints on stderr. The report carries its tree, so nothing else is read.

The placement drawn is the chosen one (the tree artifact's), else the best measured.
"""

from __future__ import annotations

import re
from typing import Any

from placement_cli.core.errors import InputError, Problem
from placement_cli.core.io import parse_document, source_name
from placement_cli.pipeline.kinds import read_input
from placement_cli.views.data import fmt_num
from placement_cli.views.diagram import CUT, LEGEND, Diagram, Edge, Node
from placement_cli.views.text import TextTable

_MAYBE = re.compile(rb"""["']?kind["']?\s*:\s*["']?execute\b""")


def sniff_execute(path: str) -> dict[str, Any] | None:
    """The execute report at `path`, or None when it is something else."""
    data = read_input(path)
    if b"execute" not in data or not _MAYBE.search(data):
        return None
    try:
        doc = parse_document(path, data)
    except InputError:
        return None
    if isinstance(doc, dict) and doc.get("kind") == "execute" and "execute" in doc:
        if doc.get("format_version") != 1:
            raise InputError(
                [
                    Problem(
                        "format_version",
                        f"unsupported execute report version {doc.get('format_version')!r:.40}; "
                        "this tool reads 1",
                    )
                ],
                source_name(path),
            )
        return doc
    return None


def drawn(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The placement `show` draws: the chosen one, else the best measured, else the
    first."""
    ps = doc["execute"].get("placements") or []
    best = doc["execute"].get("summary", {}).get("best_measured")
    return (
        next((p for p in ps if p.get("chosen")), None)
        or next((p for p in ps if p.get("label") == best), None)
        or (ps[0] if ps else None)
    )


def _ms(spread: dict[str, Any] | None) -> str:
    if not spread:
        return "-"
    return f"{fmt_num(spread['median'])} ({fmt_num(spread['min'])}-{fmt_num(spread['max'])})"


def _size(rows: Any, nbytes: Any) -> str:
    if rows is None:
        return "-"
    return f"{rows} rows, {_bytes(nbytes)}"


def _bytes(n: Any) -> str:
    if not isinstance(n, int | float):
        return "-"
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n}"


def title(doc: dict[str, Any], p: dict[str, Any] | None) -> str:
    sec = doc["execute"]
    name = sec.get("name") or sec.get("root")
    if p is None:
        return f"{name}: no placement executed"
    return (
        f"{name}: {p['label']}: predicted {fmt_num(p['predicted_ms'])} ms, "
        f"measured {_ms(p.get('measured'))} ms ({p['status']})"
    )


def execute_table(doc: dict[str, Any]) -> TextTable:
    """Per operator of the drawn placement, indented under its parent: op, engine,
    predicted self-time, the measured time of the fragment it roots, and its cut to
    the parent (predicted and measured hand-off, rows and bytes)."""
    sec = doc["execute"]
    p = drawn(doc)
    t = TextTable(
        title(doc, p),
        ("operator", "op", "engine", "predicted ms", "fragment measured ms", "cut to parent"),
    )
    if p is None:
        return t
    nodes = {n["id"]: n for n in sec["tree"]}
    frag_at = {f["root"]: f for f in p["fragments"]}
    cut_at = {c["child"]: c for c in p["cuts"]}
    stack = [(sec["root"], 0)]
    while stack:
        vid, depth = stack.pop()
        n = nodes[vid]
        e = p["engines"].get(vid, "-")
        f = frag_at.get(vid)
        c = cut_at.get(vid)
        cut = (
            f"{c['from_engine']} -> {c['to_engine']}: predicted {fmt_num(c['predicted_ms'])}, "
            f"measured {_ms(c.get('measured'))}; {_size(c.get('rows'), c.get('bytes'))}"
            if c
            else ""
        )
        t.rows.append(
            (
                "  " * depth + vid,
                n.get("op") or "",
                e,
                fmt_num(n.get("time", {}).get(e)) if e in n.get("time", {}) else "-",
                f"{_ms(f.get('measured'))} (predicted {fmt_num(f['predicted_ms'])})" if f else "",
                cut,
            )
        )
        stack += [(u, depth + 1) for u in reversed(n.get("children", []))]
    s = sec.get("summary", {})
    t.notes.append(
        f"reference: {sec['reference']['engine']}, {sec['reference']['rows']} rows; "
        f"best single engine {s.get('best_single')} {fmt_num(s.get('best_single_ms'))} ms; "
        f"Spearman(predicted, measured) {fmt_num(s.get('spearman'))} over {s.get('executed')} placements"
    )
    return t


def ranking_table(doc: dict[str, Any]) -> TextTable:
    """Every executed placement: predicted and measured latency and their ranks."""
    sec = doc["execute"]
    s = sec.get("summary", {})
    t = TextTable(
        f"{sec.get('name') or sec.get('root')}: {s.get('placements')} placements, "
        f"{s.get('executed')} executed, Spearman {fmt_num(s.get('spearman'))}",
        ("placement", "status", "predicted ms", "measured ms", "rank pred", "rank meas", "notes"),
    )
    for p in sec["placements"]:
        notes = []
        if p.get("chosen"):
            notes.append("chosen")
        if p["label"] == s.get("best_measured"):
            notes.append("best measured")
        if p.get("error"):
            notes.append(p["error"][:80])
        t.rows.append(
            (
                p["label"],
                p["status"],
                fmt_num(p["predicted_ms"]),
                _ms(p.get("measured")),
                str(p.get("rank_predicted") or "-"),
                str(p.get("rank_measured") or "-"),
                "; ".join(notes),
            )
        )
    return t


def execute_diagram(doc: dict[str, Any]) -> Diagram:
    """The drawn placement as a diagram (DOT, Mermaid): operators coloured by engine,
    cuts bold and labelled with their hand-off."""
    sec = doc["execute"]
    p = drawn(doc)
    d = Diagram(title(doc, p), legend="engines")
    engines = list(sec["engines"])
    eidx = {e: i for i, e in enumerate(engines)}
    frag_at = {f["root"]: f for f in p["fragments"]} if p else {}
    cut_at = {c["child"]: c for c in p["cuts"]} if p else {}
    for n in sec["tree"]:
        vid = n["id"]
        e = p["engines"].get(vid) if p else None
        lines = [vid + (f" ({n['op']})" if n.get("op") else "")]
        if e is not None:
            lines.append(f"{e}: predicted {fmt_num(n.get('time', {}).get(e))} ms")
        f = frag_at.get(vid)
        if f is not None:
            lines.append(f"fragment measured {_ms(f.get('measured'))} ms")
        d.nodes.append(Node(f"op:{vid}", tuple(lines), eidx.get(e, -1) if e else -1))
    for n in sec["tree"]:
        for u in n.get("children", []):
            c = cut_at.get(u)
            label = (
                f"{c['from_engine']} -> {c['to_engine']}: {_size(c.get('rows'), c.get('bytes'))}; "
                f"predicted {fmt_num(c['predicted_ms'])} ms, measured {_ms(c.get('measured'))} ms"
                if c
                else ""
            )
            d.edges.append(
                Edge(
                    f"op:{n['id']}", f"op:{u}", CUT if c else "plain", label, f"edge:{n['id']}->{u}"
                )
            )
    for i, e in enumerate(engines):
        d.nodes.append(Node(f"legend:{e}", (e,), i, LEGEND))
    return d
