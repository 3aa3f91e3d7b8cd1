"""The linear-time section checks against the recompute-and-compare reference.

For random plans, every section an artifact carries is tampered with at random (a
string, number or boolean changed, list entries moved, dropped, duplicated or swapped,
fields dropped or added), written and read back as a file is (so its types are checked
as in use), and then checked by the stage's check and by the old one kept in
`tests/sections_reference.py`: both must accept or both reject, with the same message,
and an accepted section must give the same value and the same bytes downstream.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from placement_cli.algorithms.solve.objective import evaluate
from placement_cli.core.errors import InputError
from placement_cli.formats.artifact import render
from placement_cli.ir.normalize import normalize
from placement_cli.pipeline.registry import get
from placement_cli.pipeline.run import Run, load
from placement_cli.pipeline.stage import Deferred
from placement_cli.pipeline.stages import fuse as fuse_stage
from placement_cli.pipeline.stages import prune as prune_stage
from placement_cli.pipeline.stages import scc_verify
from placement_cli.pipeline.stages import solve as solve_stage
from tests import sections_reference as ref
from tests.budget import examples
from tests.conftest import ROOT
from tests.strategies import plans

# The stages whose check was rewritten (islands' still recomputes and compares, as before).
STAGES = ("prune", "scc", "solve", "fuse")
FAST = {"prune": prune_stage.proved, "scc": scc_verify.proved}
EX = ROOT / "examples/three_targets.yaml"


def _nodes(x: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    out = [(path, x)]
    if isinstance(x, dict):
        for k, v in x.items():
            out += _nodes(v, (*path, k))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            out += _nodes(v, (*path, i))
    return out


def _strings(x: Any) -> list[str]:
    return sorted({v for _, v in _nodes(x) if isinstance(v, str)})


def _tamper(data: st.DataObject, sec: dict[str, Any], pool: list[str]) -> None:
    """One random edit somewhere in `sec` (in place)."""
    nodes = _nodes(sec)
    path, node = data.draw(st.sampled_from(nodes[1:] or nodes))
    parent: Any = sec
    for p in path[:-1]:
        parent = parent[p]
    key = path[-1] if path else None
    if isinstance(node, bool):
        parent[key] = not node
    elif isinstance(node, int | float):
        parent[key] = node + data.draw(st.sampled_from([1, -1, 0.5]))
    elif isinstance(node, str):
        parent[key] = data.draw(st.sampled_from([*pool, "zz"]))
    elif node is None:
        parent[key] = data.draw(st.sampled_from([*pool[:1], 0, False]))
    elif isinstance(node, list):
        lists = [v for _, v in nodes if isinstance(v, list) and v is not node]
        op = data.draw(st.sampled_from(["swap", "drop", "dup", "move", "reverse", "clear"]))
        if node and op == "swap":
            i = data.draw(st.integers(0, len(node) - 1))
            j = data.draw(st.integers(0, len(node) - 1))
            node[i], node[j] = node[j], node[i]
        elif node and op == "drop":
            node.pop(data.draw(st.integers(0, len(node) - 1)))
        elif node and op == "dup":
            node.insert(
                data.draw(st.integers(0, len(node))), node[data.draw(st.integers(0, len(node) - 1))]
            )
        elif node and op == "move" and lists:
            other = data.draw(st.sampled_from(lists))
            item = node.pop(data.draw(st.integers(0, len(node) - 1)))
            other.insert(data.draw(st.integers(0, len(other))), item)
        elif op == "reverse":
            node.reverse()
        else:
            node.clear()
    elif isinstance(node, dict):
        if node and data.draw(st.booleans()):
            node.pop(data.draw(st.sampled_from(list(node))))
        else:
            node["zz"] = True


def _outcome(run: Run, stage: str, check: Any, sec: dict[str, Any]) -> tuple[str, Any]:
    try:
        out = check(run, sec)
    except InputError as exc:
        return "reject", str(exc.with_source(run.loaded.source))
    return "accept", out


def _same_value(stage: str, a: Any, b: Any) -> bool:
    a, b = (x.build() if isinstance(x, Deferred) else x for x in (a, b))
    if stage in ("prune", "scc", "solve"):
        return bool(a == b)
    same = (
        a.assignment,
        a.members,
        a.block_of,
        a.dropped,
        a.cost_before,
        a.cost_after,
        a.diagnostics,
    ) == (
        b.assignment,
        b.members,
        b.block_of,
        b.dropped,
        b.cost_before,
        b.cost_after,
        b.diagnostics,
    )
    return (
        same
        and (a.graph is None) == (b.graph is None)
        and (a.graph is None or normalize(a.graph) == normalize(b.graph))
    )


def _agree(path: Path, stage: str) -> str:
    """Check `stage`'s section of the artifact at `path` both ways; the outcome."""
    try:
        loaded = load(str(path))
    except InputError:
        return "unreadable"  # refused by the type checks: no stage check runs
    run = Run(loaded)
    for req in get(stage).requires:
        try:
            run.run(req)
        except InputError:
            return "earlier"  # a requirement failed (not reached by the tampering here)
    sec = loaded.data[stage]
    new = _outcome(run, stage, get(stage).check, sec)
    old = _outcome(run, stage, getattr(ref, f"check_{stage}"), sec)
    assert new[0] == old[0], (new, old)
    if stage in ("prune", "scc"):
        # The fast proof (columns of indices, no per-entry problem bookkeeping) holds
        # exactly for the accepted sections: the other path is for messages only.
        assert (FAST[stage](run.g, sec) is not None) == (new[0] == "accept")
    if stage == "solve" and new[0] == "accept" and sec["status"] == "ok":
        # An accepted ok section is read by the column path (the loops only name problems).
        placed = solve_stage._placed(run.g, run.value("prune"), sec)
        assert placed is not None and evaluate(run.g, placed) is not None
        # The same with the ids the prune check read (the pipe's case).
        assert "listed" in run.shared
        assert solve_stage._placed(run.g, run.value("prune"), sec, run.shared["listed"]) == placed
    if stage == "fuse" and new[0] == "accept" and new[1].value.graph is not None:
        assert fuse_stage._same_blocks(sec["blocks"], new[1].value, run.g)
    if new[0] == "reject":
        assert new[1] == old[1]
    else:
        assert _same_value(stage, new[1].value, old[1].value)
        # The same bytes downstream: the writer sorts keys, and keeps each value's type.
        sort = orjson.OPT_SORT_KEYS
        assert orjson.dumps(new[1].section, option=sort) == orjson.dumps(
            old[1].section, option=sort
        )
    return new[0]


def _artifact(plan_path: Path, kind: str) -> dict[str, Any] | None:
    try:
        run = Run(load(str(plan_path)))
        run.run(kind)
    except InputError:
        return None
    return orjson.loads(render(run.artifact(kind)))  # type: ignore[no-any-return]


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans(max_blocks=8, max_targets=3), st.sampled_from(STAGES), st.data())
def test_fast_checks_agree_with_recompute_on_random_tampering(plan, stage, data):
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "plan.json"
        p.write_bytes(orjson.dumps(plan))
        art = _artifact(p, "islands")
        if art is None:
            return  # an invalid random plan: nothing to check
        t = Path(tmp) / "t.json"
        t.write_bytes(orjson.dumps(art))
        # Untouched: both accept.
        assert _agree(t, stage) == "accept"
        pool = _strings(art["plan"]) + _strings(art[stage])
        for _ in range(data.draw(st.integers(1, 3))):
            _tamper(data, art[stage], pool)
        t.write_bytes(orjson.dumps(art))
        event(f"{stage}: {_agree(t, stage)}")


@pytest.mark.parametrize("stage", STAGES)
def test_example_sections_agree_under_every_single_edit(stage, tmp_path):
    """Deterministic sweep on the example: each list of the section reversed, each
    string replaced by each block id, each boolean flipped."""
    art = _artifact(EX, "islands")
    assert art is not None
    outcomes: set[str] = set()
    ids = [b["id"] for b in art["plan"]["blocks"]] + ["c0", "c1"]
    n = len(_nodes(art[stage]))
    for i in range(n):
        edits: list[Any] = []
        path, node = _nodes(art[stage])[i]
        if isinstance(node, str):
            edits = ids
        elif isinstance(node, bool):
            edits = [not node]
        elif isinstance(node, list) and len(node) > 1:
            edits = [list(reversed(node))]
        for new in edits:
            a = orjson.loads(orjson.dumps(art))
            parent = a[stage]
            for p in path[:-1]:
                parent = parent[p]
            parent[path[-1]] = new
            f = tmp_path / "t.json"
            f.write_bytes(orjson.dumps(a))
            outcomes.add(_agree(f, stage))
    # The sweep reached both verdicts (a test that can fail).
    assert {"accept", "reject"} <= outcomes


@pytest.mark.parametrize("stage", STAGES)
def test_examples_and_a_generated_plan_are_accepted_with_the_same_value(stage, tmp_path):
    from benchmarks.generate import generate_plan
    from tests.conftest import PLAN_EXAMPLES

    big = tmp_path / "big.json"
    big.write_bytes(orjson.dumps(generate_plan(1500, 3, seed=5)))
    seen = 0
    for plan in [*PLAN_EXAMPLES, big]:
        art = _artifact(plan, "islands")
        if art is None:
            continue
        f = tmp_path / "a.json"
        f.write_bytes(orjson.dumps(art))
        assert _agree(f, stage) == "accept", plan
        seen += 1
    assert seen > 3


def test_a_fuse_section_with_float_costs_goes_on_as_fuse_writes_it(tmp_path):
    art = _artifact(EX, "islands")
    assert art is not None
    for part in ("cost_before", "cost_after"):
        art["fuse"][part] = {k: float(v) for k, v in art["fuse"][part].items()}
    # Members listed in another key order, too: still the same section.
    art["fuse"]["blocks"] = [dict(reversed(list(fb.items()))) for fb in art["fuse"]["blocks"]]
    f = tmp_path / "t.json"
    f.write_bytes(orjson.dumps(art))
    assert b'"total":' in f.read_bytes() and _agree(f, "fuse") == "accept"
    run = Run(load(str(f)))
    run.run("fuse")
    assert all(type(v) is int for v in run.sections["fuse"]["cost_before"].values())
