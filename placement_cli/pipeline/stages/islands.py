"""Stage `islands`: execution islands, dependencies, schedule (`algorithms.islands`).

Islands follow from the plan and the fused placement, so a read section is checked
against the recomputed one: first that each island's blocks are fused blocks on the
island's target and connected to each other by same-target edges, then field by field.
"""

from __future__ import annotations

from typing import Any

from placement_cli.algorithms.islands import IslandsOptions, islands
from placement_cli.pipeline.checks import Problems, compare
from placement_cli.pipeline.stage import Output, Stage, StageRun


def compute(run: StageRun, options: IslandsOptions | None) -> Output:
    g = run.g
    res = islands(g, run.value("solve"), run.value("fuse"), options)  # type: ignore[arg-type]
    return Output(res, res.to_json(g), res.diagnostics)


def check(run: StageRun, sec: dict[str, Any]) -> Output:
    g = run.g
    fused = run.value("fuse")
    res = islands(g, run.value("solve"), fused, run.options.get("islands"))  # type: ignore[arg-type]
    pr = Problems("islands")
    fg = fused.graph
    if fg is not None:
        findex = fg.index
        for i, isl in enumerate(sec["islands"]):
            inside: set[int] = set()
            isl_blocks, isl_target = isl["blocks"], isl["target"]
            for j, bid in enumerate(isl_blocks):
                f = findex.get(bid)
                if f is None:
                    pr.add(f"islands[{i}].blocks[{j}]", f"unknown fused block '{bid}'")
                elif g.targets[fused.assignment[f]] != isl_target:
                    pr.add(
                        f"islands[{i}].blocks[{j}]",
                        f"block '{bid}' runs on '{g.targets[fused.assignment[f]]}', not on the island's target '{isl_target}'",
                    )
                else:
                    inside.add(f)
            if inside and len(inside) == len(isl_blocks):
                # Connected through edges inside the island (either direction).
                start = next(iter(inside))
                reached = {start}
                stack = [start]
                while stack:
                    u = stack.pop()
                    for e in (*fg.succ[u], *fg.pred[u]):
                        w = fg.edge_dst[e] if fg.edge_src[e] == u else fg.edge_src[e]
                        if w in inside and w not in reached:
                            reached.add(w)
                            stack.append(w)
                if len(reached) != len(inside):
                    pr.add(
                        f"islands[{i}].blocks",
                        "not connected: an island is one group of same-target blocks joined by edges",
                    )
        pr.raise_if_any()
    compare(pr, sec, expected := res.to_json(g))
    pr.raise_if_any()
    return Output(res, expected)


def summary(sec: dict[str, Any]) -> str:
    if sec.get("islands") is None:
        return ""
    per: dict[str, int] = {}
    for i in sec["islands"]:
        per[i["target"]] = per.get(i["target"], 0) + 1
    targets = ", ".join(f"{t} {n}" for t, n in per.items())
    return f"{len(sec['islands'])} islands" + (f" ({targets})" if targets else "")


STAGE = Stage(
    name="islands",
    requires=("solve", "fuse"),
    options=IslandsOptions,
    compute=compute,
    check=check,
    doc=__doc__ or "",
    summary=summary,
)
