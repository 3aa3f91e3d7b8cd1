"""Shared by the views tests: a small DOT reader (independent of the emitter's code) and
an in-process pipeline over plan dicts."""

from __future__ import annotations

import re
from typing import Any

from placement_cli.pipeline.run import Loaded, Run, parse_plan
from placement_cli.views.data import ViewData, from_run

NODE = re.compile(r"^\s*(n\d+) \[(.*)\];$")
EDGE = re.compile(r"^\s*(n\d+) -> (n\d+)(?: \[(.*)\])?;$")
ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^,\s]+)')


def _unquote(v: str) -> str:
    if v.startswith('"'):
        return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), v[1:-1])
    return v


def attrs(text: str | None) -> dict[str, str]:
    return {k: _unquote(v) for k, v in ATTR.findall(text or "")}


def read_dot(text: str) -> tuple[dict[str, dict[str, str]], list[tuple[str, str, dict[str, str]]]]:
    """(node name -> attributes, [(from name, to name, attributes)]) of a DOT text."""
    nodes: dict[str, dict[str, str]] = {}
    edges = []
    for line in text.splitlines():
        if m := NODE.match(line):
            assert m.group(1) not in nodes, f"node {m.group(1)} declared twice"
            nodes[m.group(1)] = attrs(m.group(2))
        elif m := EDGE.match(line):
            edges.append((m.group(1), m.group(2), attrs(m.group(3))))
    return nodes, edges


def view_of(plan: dict[str, Any]) -> ViewData:
    """The view data of a plan dict, every stage run in-process."""
    run = Run(Loaded("<test>", parse_plan(plan)))
    run.run("islands")
    return from_run(run, "<test>", "plan")


def cross_target_edges(plan: dict[str, Any], assignment: dict[str, str]) -> set[str]:
    """`from[index]` of every edge whose two ends are assigned different targets,
    straight from the plan dict and the solve section's assignment map."""
    out = set()
    for b in plan["blocks"]:
        for k, s in enumerate(b["terminator"].get("successors", [])):
            x, y = assignment.get(b["id"]), assignment.get(s["block"])
            if x is not None and y is not None and x != y:
                out.add(f"{b['id']}[{k}]")
    return out
