"""`diff A B` for people (`--format text`): the differences `views/diff.py` found,
one topic per line, values as JSON writes them."""

from __future__ import annotations

from typing import Any

import orjson

from placement_cli.views.diff import plain_number


def value_text(x: Any) -> str:
    """A value for a line of text: `-` for none, lists space-separated in brackets.

    >>> value_text(None), value_text(["a", "b"]), value_text(4.0), value_text({"a": 1})
    ('-', '[a b]', '4', '{a: 1}')
    """
    if x is None:
        return "-"
    if isinstance(x, list):
        return "[" + " ".join(value_text(v) for v in x) + "]"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k}: {value_text(v)}" for k, v in x.items()) + "}"
    return str(plain_number(x))


def json_text(x: Any) -> str:
    """A recorded value as JSON writes it (`null`, `true`, `{"pins": ...}`), never a
    Python repr; a plain string stays bare, integral floats print as integers.

    >>> json_text(None), json_text("exact"), json_text({"pins": {"bb2": "x"}, "n": 4.0})
    ('null', 'exact', '{"n":4,"pins":{"bb2":"x"}}')
    """
    if isinstance(x, str):
        return x

    def plain(v: Any) -> Any:
        if isinstance(v, float):
            return plain_number(v)
        if isinstance(v, dict):
            return {k: plain(w) for k, w in v.items()}
        if isinstance(v, list | tuple):
            return [plain(w) for w in v]
        return v

    return orjson.dumps(plain(x), option=orjson.OPT_SORT_KEYS).decode()


def _change(c: dict[str, Any]) -> str:
    """`cost interpreter 4 -> 30`: a change's path and both values."""
    return f"{' '.join(c['path'])} {value_text(c['a'])} -> {value_text(c['b'])}"


def _items(x: Any) -> str:
    """A list as its items, space-separated (`-` when empty); anything else as a value."""
    if isinstance(x, list):
        return " ".join(value_text(v) for v in x) or "-"
    return value_text(x)


def _delta(x: Any) -> str:
    return f"+{x}" if isinstance(x, (int, float)) and x >= 0 else str(x)


def to_text(d: dict[str, Any]) -> str:
    """The differences for people, one topic per line; "no differences" when same."""
    lines = [
        f"{d['a']} -> {d['b']} ({d['kind']} artifacts): "
        + ("no differences" if d["same"] else "differ")
    ]
    if "status" in d:
        lines.append(f"status: {json_text(d['status']['a'])} -> {json_text(d['status']['b'])}")
    plan = d.get("plan", {})
    for key, what in (
        ("targets_added", "targets added"),
        ("targets_removed", "targets removed"),
        ("blocks_added", "blocks added"),
        ("blocks_removed", "blocks removed"),
    ):
        if key in plan:
            lines.append(f"{what}: {' '.join(plan[key])}")
    if "field_changes" in plan:
        lines.append("plan fields changed:")
        lines += [f"  {_change(c)}" for c in plan["field_changes"]]
    if "blocks_changed" in plan:
        lines.append("blocks changed:")
        for c in plan["blocks_changed"]:
            lines += [f"  {c['block']} {_change(x)}" for x in c.get("changes", [])]
    for key, what in (("edges_added", "edges added"), ("edges_removed", "edges removed")):
        if key in plan:
            lines.append(f"{what}: " + "; ".join(f"{e['edge']} -> {e['to']}" for e in plan[key]))
    if "edges_changed" in plan:
        lines.append("edges changed:")
        for c in plan["edges_changed"]:
            lines += [f"  {c['edge']} {_change(x)}" for x in c.get("changes", [])]
    for c in d.get("prune", {}).get("domains_changed", []):
        lines.append(f"domain of {c['block']}: {json_text(c['a'])} -> {json_text(c['b'])}")
    scc = d.get("scc", {})
    for key, what in (("loops_added", "loop added"), ("loops_removed", "loop removed")):
        for loop in scc.get(key, []):
            lines.append(f"{what}: {' '.join(loop)}")
    solve = d.get("solve", {})
    if "moved" in solve:
        lines.append(
            "moved: "
            + "; ".join(
                f"{m['block']} {m['from'] or '-'} -> {m['to'] or '-'}" for m in solve["moved"]
            )
        )
    if "cost" in solve:
        ca, cb = solve["cost"]["a"], solve["cost"]["b"]
        if "delta" in solve["cost"]:
            dl = solve["cost"]["delta"]
            lines.append(
                f"cost: total {ca['total']} -> {cb['total']} ({_delta(dl['total'])}); blocks {ca['blocks']} -> "
                f"{cb['blocks']} ({_delta(dl['blocks'])}); edges {ca['edges']} -> {cb['edges']} ({_delta(dl['edges'])})"
            )
        else:
            lines.append(f"cost: {json_text(ca)} -> {json_text(cb)}")
    if "block_costs" in solve:
        lines.append(
            "  block costs: "
            + "; ".join(
                f"{c['block']} {json_text(c['a'])} -> {json_text(c['b'])}"
                for c in solve["block_costs"]
            )
        )
    if "edge_costs" in solve:
        lines.append(
            "  edge costs: "
            + "; ".join(
                f"{c['edge']} {json_text(c['a'])} -> {json_text(c['b'])}"
                for c in solve["edge_costs"]
            )
        )
    for k, v in solve.get("proof", {}).items():
        lines.append(f"{k}: {json_text(v['a'])} -> {json_text(v['b'])}")
    if "unreachable" in solve:
        lines.append(
            f"unreachable: +{solve['unreachable']['added']} -{solve['unreachable']['removed']}"
        )
    fuse = d.get("fuse", {})
    for key, what in (
        ("fused_added", "fused block added"),
        ("fused_removed", "fused block removed"),
    ):
        for f in fuse.get(key, []):
            lines.append(
                f"{what}: {f.get('id')} = {' '.join(f.get('members', []))} on {f.get('target')}"
            )
    isl = d.get("islands", {})
    for key, what in (("added", "added"), ("removed", "removed")):
        for i in isl.get(key, []):
            lines.append(
                f"island {i['island']} {what}: {i['target']}: {' '.join(i['members'] or [])}"
            )
    for c in isl.get("changed", []):
        for f, v in c["fields"].items():
            lines.append(f"island {c['island']} changed: {f} {_items(v['a'])} -> {_items(v['b'])}")
    for key, what in (
        ("graph_edges_added", "island graph edge added"),
        ("graph_edges_removed", "island graph edge removed"),
    ):
        for e in isl.get(key, []):
            lines.append(f"{what}: {e}")
    if "schedule" in isl:
        lines.append("schedule:")
        for side in ("a", "b"):
            levels = " ".join("[" + " ".join(lv) + "]" for lv in isl["schedule"][side])
            lines.append(f"  {side}: {levels}")
    config = d.get("config", {})
    if "file" in config:
        lines.append(
            f"configuration file: {config['file']['a'] or '-'} -> {config['file']['b'] or '-'}"
        )
    lines += [f"setting changed: {_change(c)}" for c in config.get("settings", [])]
    diags = d.get("diagnostics", {})
    lines += [f"diagnostic added: {x}" for x in diags.get("added", [])]
    lines += [f"diagnostic removed: {x}" for x in diags.get("removed", [])]
    return "\n".join(lines) + "\n"
