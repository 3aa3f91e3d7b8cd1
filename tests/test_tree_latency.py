"""`tree --latency critical-path|work|resource`: the DP of (critical path, work) pairs
(`algorithms/tree/latency.py`) against an exhaustive search written here on the plain
dicts of the tree file (every assignment, its cuts counted, its path and work
recomputed recursively), and against the seed's DP for the critical path."""

from __future__ import annotations

import itertools
import json
import math
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from placement_cli.algorithms.tree.latency import MODELS, latency, place_model, resolve
from placement_cli.algorithms.tree.rebuild import place
from placement_cli.app.cli import app
from placement_cli.ir.tree.build import build_tree
from placement_cli.ir.tree.model import TreeLimits
from placement_cli.ir.tree.read import parse_tree
from tests.test_tree import random_spec, spec_root, spec_transfer

INF = math.inf


def brute(spec: dict[str, Any], k: int, model: str, cores: int) -> float:
    """The least latency under `model` with at most k cuts, over every assignment."""
    root = spec_root(spec)
    by_id = {n["id"]: n for n in spec["nodes"]}
    below: list[str] = []
    stack = [root]
    while stack:
        v = stack.pop()
        below.append(v)
        stack.extend(by_id[v]["children"])
    best = INF
    for engines in itertools.product(spec["engines"], repeat=len(below)):
        at = dict(zip(below, engines, strict=True))
        if any(by_id[v]["time"].get(at[v]) is None for v in below):
            continue
        got = _walk(spec, by_id, at, root)
        if got is None or got[2] > k:
            continue
        cp, work, _ = got
        x = {"critical-path": cp, "work": work, "resource": max(cp, work / cores)}[model]
        best = min(best, x)
    return best


def _walk(
    spec: dict[str, Any], by_id: dict[str, Any], at: dict[str, str], v: str
) -> tuple[float, float, int] | None:
    """(critical path, work, cuts) of v's subtree under `at`; None when a cut has no
    transfer."""
    cp = work = 0.0
    cuts = 0
    for c in by_id[v]["children"]:
        t = spec_transfer(spec, c, at[c], at[v])
        below = _walk(spec, by_id, at, c)
        if t is None or below is None:
            return None
        cp = max(cp, below[0] + t)
        work += below[1] + t
        cuts += below[2] + (at[c] != at[v])
    own = by_id[v]["time"][at[v]]
    return cp + own, work + own, cuts


@pytest.mark.parametrize("model", MODELS[:3])
def test_every_budget_matches_the_exhaustive_search(model: str) -> None:
    rng = random.Random(MODELS.index(model))
    checked = 0
    for _ in range(250):
        spec = random_spec(rng, max_nodes=6, max_engines=3)
        try:
            tree, _ = build_tree(parse_tree(spec))
        except Exception:  # noqa: BLE001 - an invalid random file: not this test's matter
            continue
        cores = rng.randint(1, 3)
        budget = min(spec["budget"], tree.n - 1)
        res = place_model(tree, budget, model, cores)
        for k in range(budget + 1):
            assert res.frontier[k] == brute(spec, k, model, cores), (spec, model, cores, k)
        if res.latency != INF:
            # The placement found attains the optimum, within the budget.
            assert latency(tree, res.assignment, model, cores) == res.latency
            cuts = sum(
                1
                for v in range(tree.n)
                for u in tree.children[v]
                if res.assignment[u] != res.assignment[v]
            )
            assert cuts == res.cuts_used <= budget
            checked += 1
    assert checked > 100


def test_the_critical_path_is_the_seed_dps() -> None:
    rng = random.Random(21)
    for _ in range(200):
        spec = random_spec(rng, max_nodes=7, max_engines=3)
        try:
            tree, _ = build_tree(parse_tree(spec))
        except Exception:  # noqa: BLE001
            continue
        budget = min(spec["budget"], tree.n - 1)
        a = place(tree, budget)
        b = place_model(tree, budget, "critical-path", 1)
        assert a.frontier == b.frontier and a.cuts_used == b.cuts_used


def test_resource_sits_between_its_two_bounds_and_work_never_below_the_path() -> None:
    rng = random.Random(4)
    for _ in range(200):
        spec = random_spec(rng)
        try:
            tree, _ = build_tree(parse_tree(spec))
        except Exception:  # noqa: BLE001
            continue
        budget = min(spec["budget"], tree.n - 1)
        cp = place_model(tree, budget, "critical-path", 1).latency
        work = place_model(tree, budget, "work", 1).latency
        for cores in (1, 2, 4):
            r = place_model(tree, budget, "resource", cores).latency
            if cp != INF:
                assert cp <= r <= max(work, cp) + 1e-12
        assert work >= cp or work == INF


def test_a_stopped_dp_says_what_stopped_it() -> None:
    spec = {
        "version": 1,
        "engines": ["a", "b"],
        "nodes": [{"id": f"n{i}", "children": [f"n{i + 1}"] if i < 199 else [], "time": {"a": 1, "b": 2}, "rows": 1}
                  for i in range(200)],
        "transfer": {"default": {"fixed": 1}},
    }  # fmt: skip
    tree, _ = build_tree(parse_tree(spec))
    res = place_model(tree, 3, "resource", 2, deadline=0.0)
    assert res.stopped == "time-limit" and res.latency == INF
    res = place_model(tree, 3, "resource", 2, limits=TreeLimits(memory_bytes=64))
    assert res.stopped == "memory-limit" and res.detail["nodes"] == 200


def test_auto_is_resource_only_for_a_tree_probed_on_this_machine() -> None:
    assert resolve("auto", None, None)[0] == "critical-path"
    assert resolve("auto", None, {"duckdb": 2, "datafusion": 2}) == ("resource", 2)
    assert resolve("work", 3, {"duckdb": 2}) == ("work", 3)
    # Probed in-pipeline: every one-cut placement is priced by the probe's own runs.
    assert resolve("auto", None, {"duckdb": 2}, in_pipeline=True) == ("measured", 2)
    assert resolve("resource", None, {"duckdb": 2}, in_pipeline=True) == ("resource", 2)


def test_auto_on_a_tree_with_rests_is_measured(tmp_path: Path) -> None:
    rng = random.Random(5)
    spec = _pipeline_spec(rng)
    while not any("above" in n for n in spec["nodes"]):
        spec = _pipeline_spec(rng)
    runner = CliRunner()
    # Rests without every subtree: not a probed tree `measured` can price; auto does not
    # pick it (it would refuse the file for a model nobody asked for).
    partial = {
        **spec,
        "nodes": [
            {k: v for k, v in n.items() if k != "subtree"} if i == len(spec["nodes"]) - 1 else n
            for i, n in enumerate(spec["nodes"])
        ],
    }
    for name, doc in (("rest", spec), ("plain", _drop_rests(spec)), ("partial", partial)):
        (tmp_path / f"{name}.json").write_text(json.dumps(doc))
        r = runner.invoke(app, ["tree", str(tmp_path / f"{name}.json"), "-q"])
        assert r.exit_code == 0, r.output
        got = json.loads(r.stdout)["tree"].get("latency_model")
        assert (got or {}).get("model") == ("measured" if name == "rest" else None), got


def _drop_rests(spec: dict[str, Any]) -> dict[str, Any]:
    return {**spec, "nodes": [{k: v for k, v in n.items() if k != "above"} for n in spec["nodes"]]}


def test_the_command_records_the_model_and_validate_checks_it(tmp_path: Path) -> None:
    spec = {
        "version": 1,
        "engines": ["a", "b"],
        "budget": 2,
        "nodes": [
            {"id": "r", "children": ["x", "y"], "time": {"a": 1, "b": 1}},
            {"id": "x", "time": {"a": 8, "b": 2}, "rows": 1},
            {"id": "y", "time": {"a": 2, "b": 8}, "rows": 1},
        ],
        "transfer": {"default": {"fixed": 1}},
    }
    (tmp_path / "t.json").write_text(json.dumps(spec))
    runner = CliRunner()
    got = {}
    for model in MODELS[:3]:
        out = tmp_path / f"{model}.json"
        r = runner.invoke(
            app,
            ["tree", str(tmp_path / "t.json"), "--latency", model, "--cores", "2", "-o", str(out)],
        )
        assert r.exit_code == 0, r.output
        sec = json.loads(out.read_text())["tree"]
        got[model] = (sec["latency"], sec["cuts_used"], sec.get("latency_model"))
        assert runner.invoke(app, ["validate", str(out)]).exit_code == 0
    # Critical path: x on b, y on a, r anywhere: 1 + max(2 + 1, 2) = 4 with one cut.
    assert got["critical-path"] == (4, 1, None)
    # Work: one after another: 1 + 2 + 2 + one transfer = 6, x and y apart.
    assert got["work"] == (6, 1, {"model": "work", "cores": 2})
    # Resource on 2 cores: max(4, 6 / 2) = 4.
    assert got["resource"] == (4, 1, {"model": "resource", "cores": 2})
    # A recorded model changed to another fails validation (its latency is not that model's).
    art = json.loads((tmp_path / "work.json").read_text())
    art["tree"]["latency_model"] = {"model": "critical-path", "cores": 2}
    (tmp_path / "bad.json").write_text(json.dumps(art))
    assert runner.invoke(app, ["validate", str(tmp_path / "bad.json")]).exit_code == 3


def _measured_spec(rng: random.Random) -> dict[str, Any]:
    """A probed-looking tree: every node's subtree measured on each engine (multiples
    of 1/8, so every sum is exact), a transfer between the two engines."""
    n = rng.randint(1, 6)
    ids = [f"n{i}" for i in range(n)]
    parent = [-1] + [rng.randrange(i) for i in range(1, n)]
    nodes = []
    for i in range(n):
        nodes.append(
            {
                "id": ids[i],
                "children": [ids[j] for j in range(n) if parent[j] == i],
                "time": {"a": 1, "b": 1},
                "rows": 1,
                "subtree": {
                    e: {"median": rng.randint(1, 80) / 8, "min": 0, "max": 100, "runs": 1}
                    for e in ("a", "b")
                    if e == "a" or rng.random() < 0.8
                },
            }
        )
    return {
        "version": 1,
        "engines": ["a", "b"],
        "budget": rng.randint(0, 3),
        "nodes": nodes,
        "transfer": {"default": {"fixed": rng.randint(0, 16) / 8}},
    }


def brute_measured(spec: dict[str, Any], k: int) -> float:
    """Least sum over nodes of (subtree on its engine - its children's subtrees on that
    engine) plus every cut's transfer, at most k cuts, over every assignment."""
    by_id = {n["id"]: n for n in spec["nodes"]}
    ids = [n["id"] for n in spec["nodes"]]
    fixed = spec["transfer"]["default"]["fixed"]
    best = INF
    for engines in itertools.product(("a", "b"), repeat=len(ids)):
        at = dict(zip(ids, engines, strict=True))
        total = 0.0
        cuts = 0
        ok = True
        for v in ids:
            node, e = by_id[v], at[v]
            sub = node["subtree"]
            kids = node["children"]
            if e not in sub or any(e not in by_id[c]["subtree"] for c in kids):
                ok = False
                break
            total += sub[e]["median"] - sum(by_id[c]["subtree"][e]["median"] for c in kids)
            for c in kids:
                if at[c] != e:
                    cuts += 1
                    total += fixed
        if ok and cuts <= k:
            best = min(best, total)
    return best


def _measured_against(
    make: Callable[[random.Random], dict[str, Any]],
    brute: Callable[[dict[str, Any], int], float],
    seed: int,
) -> Iterator[tuple[dict[str, Any], Any, Any]]:
    """300 random trees of `make`, each one's `measured` DP frontier checked against
    `brute` at every budget; yields (spec, tree, the measured tree) for more checks."""
    from placement_cli.algorithms.tree.latency import measured_tree

    rng = random.Random(seed)
    for _ in range(300):
        spec = make(rng)
        problem = parse_tree(spec)
        tree, _ = build_tree(problem)
        mt = measured_tree(problem, tree)
        budget = min(spec["budget"], tree.n - 1)
        res = place_model(mt, budget, "work", 1)
        for k in range(budget + 1):
            assert res.frontier[k] == brute(spec, k), (spec, k)
        yield spec, tree, mt


def test_measured_matches_the_exhaustive_search_and_one_engine_is_its_measurement() -> None:
    checked = 0
    for spec, tree, mt in _measured_against(_measured_spec, brute_measured, 12):
        root = spec["nodes"][0]["subtree"]
        for e, name in enumerate(("a", "b")):
            whole = latency(mt, [e] * tree.n, "work", 1)
            if whole != INF:  # everything on one engine costs exactly its measured whole
                assert whole == root[name]["median"]
                checked += 1
    assert checked > 100


def test_measured_needs_the_probes_subtree_times(tmp_path: Path) -> None:
    spec = {"version": 1, "engines": ["a"], "budget": 0, "nodes": [{"id": "r", "time": {"a": 1}}]}
    (tmp_path / "t.json").write_text(json.dumps(spec))
    r = CliRunner().invoke(app, ["tree", str(tmp_path / "t.json"), "--latency", "measured"])
    assert r.exit_code == 3 and "nodes[0].subtree" in r.output


def _pipeline_spec(rng: random.Random) -> dict[str, Any]:
    """`_measured_spec` with the rest of the query above some nodes (`above`, as
    `import sql --probe --in-pipeline` writes it): on every engine that ran the node,
    or (a rest one engine could not run) on one of them only."""
    spec = _measured_spec(rng)
    root = spec["nodes"][0]["subtree"]
    for node in spec["nodes"][1:]:
        if rng.random() < 0.3:
            continue
        engines = [e for e in node["subtree"] if e in root]
        if rng.random() < 0.2 and engines:
            engines = engines[:-1]  # one engine without a rest: the node falls back
        node["above"] = {
            e: {"median": rng.randint(1, 120) / 8, "min": 0, "max": 200, "runs": 1} for e in engines
        }
    return spec


def _with_rest(spec: dict[str, Any], v: str) -> bool:
    by_id = {n["id"]: n for n in spec["nodes"]}
    root = spec["nodes"][0]["subtree"]
    rest = by_id[v].get("above", {})
    return v != spec["nodes"][0]["id"] and all(e in rest and e in root for e in by_id[v]["subtree"])


def brute_pipeline(spec: dict[str, Any], k: int) -> float:
    """Least latency with at most k cuts over every assignment, a node's cost in the
    pipeline being the whole query less its rest where it has one on every engine that
    ran it (else its subtree), a cut child with a rest crossing at its subtree less
    that cost, any other at the file's transfer (docs/tree.md, `measured`)."""
    by_id = {n["id"]: n for n in spec["nodes"]}
    ids = [n["id"] for n in spec["nodes"]]
    root = spec["nodes"][0]["subtree"]
    fixed = spec["transfer"]["default"]["fixed"]

    def pipe(v: str, e: str) -> float | None:
        sub = by_id[v]["subtree"]
        if e not in sub:
            return None
        if _with_rest(spec, v):
            return float(root[e]["median"] - by_id[v]["above"][e]["median"])
        return float(sub[e]["median"])

    def cost(at: dict[str, str]) -> tuple[float, int] | None:
        total, cuts = 0.0, 0
        for v in ids:
            e = at[v]
            kids = by_id[v]["children"]
            mine = [pipe(v, e), *(pipe(c, e) for c in kids), *(pipe(c, at[c]) for c in kids)]
            if any(x is None for x in mine):
                return None
            total += pipe(v, e) - sum(pipe(c, e) for c in kids)  # type: ignore[operator]
            for c in kids:
                f = at[c]
                if f != e:
                    cuts += 1
                    if _with_rest(spec, c):
                        total += by_id[c]["subtree"][f]["median"] - pipe(c, f)  # type: ignore[operator]
                    else:
                        total += fixed
        return total, cuts

    best = INF
    for engines in itertools.product(("a", "b"), repeat=len(ids)):
        got = cost(dict(zip(ids, engines, strict=True)))
        if got is not None and got[1] <= k:
            best = min(best, got[0])
    return best


def test_in_pipeline_one_cut_costs_its_two_fragments_as_measured() -> None:
    """With a rest timed above a node (`--in-pipeline`), one cut there costs the rest
    on the parent's engine plus the node's subtree on its own, both as the probe
    measured them; the DP matches the exhaustive search at every budget; one engine
    is still its measured whole."""
    cuts = wholes = 0
    for spec, tree, mt in _measured_against(_pipeline_spec, brute_pipeline, 31):
        root = spec["nodes"][0]["subtree"]
        for e, name in enumerate(("a", "b")):
            if all(name in n["subtree"] for n in spec["nodes"]):
                assert latency(mt, [e] * tree.n, "work", 1) == root[name]["median"]
                wholes += 1
        for v in range(tree.n):
            node = spec["nodes"][tree.origin[v]]
            if not _with_rest(spec, node["id"]):
                continue
            below = {v}
            for u in children_first_ids(tree, v):
                below.add(u)
            for e, f in ((0, 1), (1, 0)):
                up, down = ("a", "b")[e], ("a", "b")[f]
                if up not in root or down not in node["subtree"]:
                    continue
                got = latency(mt, [f if u in below else e for u in range(tree.n)], "work", 1)
                if got == INF:
                    continue  # a node below v not run on f, or above not on e
                assert got == node["above"][up]["median"] + node["subtree"][down]["median"]
                cuts += 1
    assert cuts > 100 and wholes > 300


def children_first_ids(tree: Any, v: int) -> list[int]:
    """Every node strictly below v."""
    out: list[int] = []
    stack = list(tree.children[v])
    while stack:
        u = stack.pop()
        out.append(u)
        stack.extend(tree.children[u])
    return out


def test_measured_refuses_times_whose_sums_overflow(tmp_path: Path) -> None:
    """Subtrees and rests near the largest float derive self-times of both signs whose
    sums overflow (inf - inf is nan, which the DP would read as "cannot run"): exit 3
    naming them, never a wrong placement."""

    def m(x: float) -> dict[str, Any]:
        return {"median": x, "min": 0, "max": x, "runs": 1}

    kid = {"time": {"a": 1, "b": 1}, "rows": 1, "subtree": {"a": m(1), "b": m(1)}}
    spec = {
        "version": 1,
        "engines": ["a", "b"],
        "budget": 1,
        "nodes": [
            {"id": "r", "children": ["x", "y"], **kid},
            {"id": "x", **kid, "above": {"a": m(1e308), "b": m(1e308)}},
            {"id": "y", **kid, "above": {"a": m(1e308), "b": m(1e308)}},
        ],
        "transfer": {"default": {"fixed": 1}},
    }
    (tmp_path / "t.json").write_text(json.dumps(spec))
    r = CliRunner().invoke(app, ["tree", str(tmp_path / "t.json")])
    assert r.exit_code == 3 and "too large for --latency measured" in r.output
    # The same rests at everyday sizes place, under `measured` (auto, for this tree).
    for n in spec["nodes"][1:]:
        n["above"] = {"a": m(0.5), "b": m(0.5)}
    (tmp_path / "t.json").write_text(json.dumps(spec))
    r = CliRunner().invoke(app, ["tree", str(tmp_path / "t.json")])
    assert r.exit_code == 0 and json.loads(r.stdout)["tree"]["latency_model"]["model"] == "measured"
