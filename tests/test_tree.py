"""`placement tree`: the critical-path DP under a cut budget.

The references here share no code with the pass: trees are plain dicts, transfers and
latencies are recomputed from those dicts, and the exhaustive search tries every
assignment. Costs are multiples of 1/8, so every sum is exact and results compare with
`==`.
"""

from __future__ import annotations

import doctest
import hashlib
import itertools
import json
import math
import os
import random
import re
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from placement_cli.algorithms import tree as tp
from placement_cli.app.cli import app
from placement_cli.core.errors import InputError
from placement_cli.formats import tree as tree_model
from placement_cli.ir.tree import build as tree_build
from placement_cli.ir.tree import check, model, read
from placement_cli.ir.tree.build import build_tree
from placement_cli.ir.tree.model import Tree, TreeLimits
from placement_cli.ir.tree.options import TreeOptions
from placement_cli.ir.tree.read import load_tree, parse_tree
from placement_cli.pipeline import tree_artifact as artifact
from placement_cli.pipeline.tree_artifact import tree_artifact
from tests.budget import examples
from tests.tree_reference import reference_dp

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "operator_tree.yaml"
DOC = ROOT / "docs" / "tree.md"
ENGINES = ["e0", "e1", "e2"]
INF = math.inf


# --------------------------------------------------------------------------- references


def random_spec(rng: random.Random, max_nodes: int = 6, max_engines: int = 3) -> dict[str, Any]:
    """A small random tree file: some engines missing or null per node, some engine
    pairs without a transfer, explicit overrides, nodes listed in shuffled order."""
    engines = ENGINES[: rng.randint(1, max_engines)]
    n = rng.randint(1, max_nodes)
    ids = [f"n{i}" for i in range(n)]
    parent = [-1] + [rng.randrange(i) for i in range(1, n)]
    nodes = []
    for i in range(n):
        time: dict[str, float | None] = {}
        for e in engines:
            r = rng.random()
            if r < 0.12:
                continue
            time[e] = None if r < 0.22 else rng.choice([0, 0.5, 1, 2, 3, 5, 8])
        kids = [ids[j] for j in range(n) if parent[j] == i]
        nodes.append(
            {
                "id": ids[i],
                "children": kids,
                "time": time,
                "rows": rng.choice([0, 1, 2, 4]),
                "row_width": rng.choice([0, 1, 8]),
            }
        )
    rng.shuffle(nodes)
    linear: dict[str, dict[str, dict[str, float]]] = {}
    for s in engines:
        for d in engines:
            if s != d and rng.random() < 0.75:
                linear.setdefault(s, {})[d] = {
                    "fixed": rng.choice([0, 0.5, 1, 2, 4]),
                    "per_row": rng.choice([0, 0.25, 1]),
                    "per_width": rng.choice([0, 0, 0.5]),
                    "per_byte": rng.choice([0, 0.125]),
                }
    transfer: dict[str, Any] = {"linear": linear, "explicit": []}
    if rng.random() < 0.25:
        transfer["default"] = {"fixed": rng.choice([1, 3, 6])}
    if len(engines) > 1 and n > 1:
        seen = set()
        for _ in range(rng.randint(0, 3)):
            key = (rng.choice(ids[1:]), *rng.sample(engines, 2))
            if key not in seen:
                seen.add(key)
                transfer["explicit"].append(
                    {
                        "child": key[0],
                        "from": key[1],
                        "to": key[2],
                        "cost": rng.choice([0, 0.5, 2, 7]),
                    }
                )
    return {
        "version": 1,
        "engines": engines,
        "budget": rng.randint(0, 5),
        "nodes": nodes,
        "transfer": transfer,
    }


def spec_transfer(spec: dict[str, Any], child: str, src: str, dst: str) -> float | None:
    """Cost of a cut from the dicts; None when the file allows no such cut."""
    if src == dst:
        return 0.0
    tr = spec.get("transfer", {})
    for x in tr.get("explicit", []):
        if (x["child"], x["from"], x["to"]) == (child, src, dst):
            return float(x["cost"])
    m = tr.get("linear", {}).get(src, {}).get(dst) or tr.get("default")
    if m is None:
        return None
    node = next(nd for nd in spec["nodes"] if nd["id"] == child)
    rows = node.get("rows", 0)
    width = node.get("row_width", 0)
    return (
        m.get("fixed", 0)
        + m.get("per_row", 0) * rows
        + m.get("per_width", 0) * width
        + m.get("per_byte", 0) * (rows * width)
    )


def spec_root(spec: dict[str, Any]) -> str:
    if spec.get("root"):
        return spec["root"]
    kids = {c for nd in spec["nodes"] for c in nd.get("children", [])}
    (root,) = [nd["id"] for nd in spec["nodes"] if nd["id"] not in kids]
    return root


def spec_latency(spec: dict[str, Any], engine: dict[str, str]) -> tuple[float, int] | None:
    """(latency, cuts) of a full assignment, or None if a node or cut is not allowed."""
    by_id = {nd["id"]: nd for nd in spec["nodes"]}
    cuts = 0

    def lat(v: str) -> float | None:
        nonlocal cuts
        t = by_id[v].get("time", {}).get(engine[v])
        if t is None:
            return None
        worst = 0.0
        for u in by_id[v].get("children", []):
            x = lat(u)
            c = spec_transfer(spec, u, engine[u], engine[v])
            if x is None or c is None:
                return None
            cuts += engine[u] != engine[v]
            worst = max(worst, x + c)
        return t + worst

    total = lat(spec_root(spec))
    return None if total is None else (total, cuts)


def brute_frontier(spec: dict[str, Any], budget: int) -> list[float]:
    """Least latency with at most k cuts for k = 0..budget, over every assignment."""
    ids = [nd["id"] for nd in spec["nodes"]]
    best = [INF] * (budget + 1)
    for combo in itertools.product(spec["engines"], repeat=len(ids)):
        r = spec_latency(spec, dict(zip(ids, combo, strict=True)))
        if r is not None and r[1] <= budget:
            best[r[1]] = min(best[r[1]], r[0])
    for k in range(1, budget + 1):
        best[k] = min(best[k], best[k - 1])
    return best


def quadratic_minmax(a: list[float], b: list[float], size: int) -> list[float]:
    ext_a = a + [a[-1]] * size
    ext_b = b + [b[-1]] * size
    return [min(max(ext_a[i], ext_b[k - i]) for i in range(k + 1)) for k in range(size)]


def build(spec: dict[str, Any], expand_dag: bool = False) -> Tree:
    return build_tree(parse_tree(spec), expand_dag)[0]


# --------------------------------------------------------------------------- properties


@settings(max_examples=examples(2000), deadline=None)
@given(st.randoms(use_true_random=False), st.integers(0, 6))
def test_fast_dp_equals_literal_pseudocode_and_exhaustive_search(
    rng: random.Random, budget: int
) -> None:
    spec = random_spec(rng)
    tree = build(spec)
    fast = tp.fast_dp(tree, budget).dp
    res = tp.place(tree, budget)
    literal = reference_dp(tree, budget)
    for v in range(tree.n):
        row = fast[v]
        assert row is not None
        for e in range(len(tree.engines)):
            assert [tp.at(row[e].tolist(), k) for k in range(budget + 1)] == literal[v][e], (
                tree.ids[v],
                e,
            )
    brute = brute_frontier(spec, budget)
    assert [
        min(literal[tree.root][e][k] for e in range(len(tree.engines))) for k in range(budget + 1)
    ] == brute
    assert list(res.frontier) == brute[: len(res.frontier)]
    # Budgets past the number of edges buy nothing, which is why the frontier stops there.
    assert len(res.frontier) == min(budget, tree.n - 1) + 1
    assert all(x == brute[-1] for x in brute[len(res.frontier) - 1 :])


@settings(max_examples=examples(600), deadline=None)
@given(st.randoms(use_true_random=False), st.integers(0, 6))
def test_artifact_assignment_is_optimal_and_consistent(rng: random.Random, budget: int) -> None:
    spec = random_spec(rng)
    art, _ = tree_artifact(parse_tree(spec), TreeOptions(budget=budget))
    sec = art["tree"]
    front = [f["latency"] for f in sec["frontier"]]
    assert [f["budget"] for f in sec["frontier"]] == list(range(len(front)))
    finite = [x for x in front if x is not None]
    assert front[: len(front) - len(finite)] == [None] * (
        len(front) - len(finite)
    )  # infeasible only at the low end
    assert finite == sorted(finite, reverse=True)  # non-increasing
    brute = brute_frontier(spec, budget)
    if brute[-1] == INF:
        assert art["status"] == "infeasible" and sec["latency"] is None
        assert any(d["severity"] == "error" for d in art["diagnostics"])
        return
    assert art["status"] == "ok"
    assert sec["latency"] == brute[-1]
    lat, cuts = spec_latency(spec, sec["engines"]) or (None, None)
    assert lat == sec["latency"]
    assert cuts == sec["cuts_used"] == len(sec["cuts"]) <= budget
    # The fewest cuts of any optimal placement: the first budget reaching the optimum.
    assert cuts == front.index(sec["latency"])
    for c in sec["cuts"]:
        assert (
            sec["engines"][c["child"]]
            == c["from_engine"]
            != c["to_engine"]
            == sec["engines"][c["parent"]]
        )
        assert c["cost"] == spec_transfer(spec, c["child"], c["from_engine"], c["to_engine"])
    order = [nd["id"] for nd in spec["nodes"]]
    assert [c["child"] for c in sec["cuts"]] == sorted(
        (c["child"] for c in sec["cuts"]), key=order.index
    )
    _check_critical_path(spec, sec)


def _check_critical_path(spec: dict[str, Any], sec: dict[str, Any]) -> None:
    by_id = {nd["id"]: nd for nd in spec["nodes"]}
    steps = sec["critical_path"]
    assert steps[0] == {
        "kind": "node",
        "node": spec_root(spec),
        "engine": sec["engines"][spec_root(spec)],
        "time": by_id[spec_root(spec)]["time"][sec["engines"][spec_root(spec)]],
    }
    assert sum(s["time"] if s["kind"] == "node" else s["cost"] for s in steps) == sec["latency"]
    nodes = [s["node"] for s in steps if s["kind"] == "node"]
    for parent, child in itertools.pairwise(nodes):
        assert child in by_id[parent]["children"]
    assert not by_id[nodes[-1]].get("children")


@settings(max_examples=examples(1500), deadline=None)
@given(
    st.lists(st.sampled_from([0, 1, 2, 3, 5, 8, INF]), min_size=1, max_size=8),
    st.lists(st.sampled_from([0, 1, 2, 3, 5, 8, INF]), min_size=1, max_size=8),
    st.integers(1, 20),
)
def test_two_pointer_merge_equals_quadratic_merge(
    a: list[float], b: list[float], size: int
) -> None:
    a.sort(reverse=True)
    b.sort(reverse=True)
    want = quadratic_minmax(a, b, size)
    got = tp.merge_minmax(a, b, size)
    assert len(got) <= size
    assert [tp.at(got, k) for k in range(size)] == want
    for k in range(size):
        i, j = tp.split_minmax(a, b, k)
        assert i + j <= k and max(tp.at(a, i), tp.at(b, j)) == want[k]


@settings(max_examples=examples(1500), deadline=None)
@given(
    st.lists(
        st.lists(
            st.lists(st.sampled_from([0, 1, 2, 3, 5, 8, INF]), min_size=1, max_size=7),
            min_size=2,
            max_size=2,
        ),
        min_size=2,
        max_size=4,
    ),
    st.integers(1, 20),
)
def test_sorting_fold_equals_the_quadratic_fold(seqs: list[list[list[float]]], size: int) -> None:
    """`fold` (every engine at once, by sorting) against seed lines 21-33 folded child
    by child with the quadratic min-max, rows of different lengths, +inf included."""
    import numpy as np

    tables = []
    for rows in seqs:
        n = min(len(r) for r in rows)  # both engine rows of a child have one length
        tables.append(np.array([sorted(r[:n], reverse=True) for r in rows]))
    got = tp.fold(tables, size)
    assert got.shape[1] == min(size, sum(t.shape[1] for t in tables) - len(tables) + 1)
    for e in range(2):
        want = tables[0][e].tolist()
        want = [tp.at(want, k) for k in range(size)]
        for t in tables[1:]:
            want = quadratic_minmax(want, t[e].tolist(), size)
        assert [tp.at(got[e].tolist(), k) for k in range(size)] == want


def random_wide_spec(rng: random.Random, n: int, n_engines: int) -> dict[str, Any]:
    """A bushier tree than `random_spec` (nodes with up to 4 children, so levels hold
    many nodes), costs multiples of 1/8, some engines missing, some pairs uncuttable."""
    engines = [f"e{i}" for i in range(n_engines)]
    parent = [-1] + [rng.randrange(max(0, i - 6), i) for i in range(1, n)]
    nodes = []
    for i in range(n):
        time = {e: rng.randint(0, 40) / 8 for e in engines if rng.random() < 0.85}
        kids = [f"n{j}" for j in range(n) if parent[j] == i][:4]
        nodes.append(
            {
                "id": f"n{i}",
                "children": kids,
                "time": time,
                "rows": rng.randint(0, 4),
                "row_width": 8,
            }
        )
    reach = {"n0"}
    for nd in nodes:  # children beyond the fourth were dropped: keep only what hangs under n0
        if nd["id"] in reach:
            reach.update(nd["children"])
    linear = {
        s: {
            d: {"fixed": rng.randint(0, 16) / 8, "per_row": rng.randint(0, 4) / 8}
            for d in engines
            if d != s and rng.random() < 0.8
        }
        for s in engines
    }
    return {
        "version": 1,
        "engines": engines,
        "root": "n0",
        "nodes": nodes,
        "transfer": {"linear": linear},
    }


@pytest.mark.parametrize("seed", range(60))
def test_batched_levels_equal_node_by_node_and_the_literal_pseudocode(seed: int) -> None:
    """The level batches (padding, one min-plus step for many edges, one sort for many
    folds) give every table, the frontier and the assignment exactly as node by node."""
    rng = random.Random(seed)
    spec = random_wide_spec(rng, rng.randint(2, 120), rng.randint(1, 4))
    tree = build(spec)
    budget = rng.choice([0, 1, 2, 3, 5, 8, 40])
    batched = TreeLimits(batch_level=1)
    single = TreeLimits(batch_level=10**9)
    fast = tp.fast_dp(tree, budget, limits=batched).dp
    slow = tp.fast_dp(tree, budget, limits=single).dp
    mixed = tp.fast_dp(
        tree, budget, limits=TreeLimits(batch_level=3)
    ).dp  # batches fed by runs and single nodes
    literal = reference_dp(tree, budget)
    for v in range(tree.n):
        a, b, c = fast[v], slow[v], mixed[v]
        assert a is not None and b is not None and c is not None
        assert a.shape == b.shape == c.shape and a.tolist() == b.tolist() == c.tolist(), tree.ids[v]
        for e in range(len(tree.engines)):
            assert [tp.at(a[e].tolist(), k) for k in range(budget + 1)] == literal[v][e], (
                tree.ids[v],
                e,
            )
    assert tp.place(tree, budget, limits=batched) == tp.place(tree, budget, limits=single)


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.text(alphabet='[]{}"\\/aYy_\x7fé "', max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet='[]{}"\\Yy_ ', max_size=4), inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=examples(1500), deadline=None)
@given(_JSON, st.booleans())
def test_nesting_on_the_bytes_equals_the_walk_over_the_objects(doc: Any, indent: bool) -> None:
    """The byte scan the tree loader uses for the depth limit against `io.too_deep`,
    on JSON full of brackets, quotes and backslashes inside strings."""
    import orjson

    from placement_cli.core.io import too_deep
    from placement_cli.ir.tree.read import nesting

    data = orjson.dumps(doc, option=orjson.OPT_INDENT_2 if indent else 0)
    depth = nesting(data)
    assert not too_deep(doc, depth) and (depth == 0 or too_deep(doc, depth - 1))


def test_too_deep_json_tree_file_keeps_its_message(tmp_path: Path) -> None:
    res, name = run_cli(tmp_path, "[" * 251 + "]" * 251, name="t.json")
    assert res.exit_code == 3 and res.stderr.strip().endswith(
        f"{name}: invalid JSON: nested deeper than 250 levels"
    ), res.stderr
    ok = json.loads(json.dumps(BASE))
    ok["name"] = "[" * 150 + '\\"' + "{" * 150  # brackets inside a string do not nest
    res, _ = run_cli(tmp_path, ok)
    assert res.exit_code == 0, res.stderr


@pytest.mark.parametrize("seed", range(12))
def test_long_one_child_runs_equal_the_literal_pseudocode(seed: int) -> None:
    """Chains with a few branches: the runs of one-child nodes (one array per run, the
    budget-0 column a running sum) against the literal pseudocode, node by node."""
    rng = random.Random(seed)
    n = rng.randint(20, 160)
    n_e = rng.randint(1, 3)
    engines = [f"e{i}" for i in range(n_e)]
    nodes = []
    for i in range(n):
        kids = [f"n{i + 1}"] if i + 1 < n else []
        if rng.random() < 0.05:
            nodes.append({"id": f"x{i}", "time": {e: rng.randint(0, 40) / 8 for e in engines}})
            kids.append(f"x{i}")
        time = {e: rng.randint(0, 40) / 8 for e in engines if rng.random() < 0.9}
        nodes.append({"id": f"n{i}", "children": kids, "time": time})
    linear = {
        s: {d: {"fixed": rng.randint(1, 24) / 8} for d in engines if d != s and rng.random() < 0.8}
        for s in engines
    }
    spec = {
        "version": 1,
        "engines": engines,
        "root": "n0",
        "nodes": nodes,
        "transfer": {"linear": linear},
    }
    tree = build(spec)
    budget = rng.choice([1, 2, 4, 9])
    fast = tp.fast_dp(tree, budget).dp
    literal = reference_dp(tree, budget)
    for v in range(tree.n):
        row = fast[v]
        assert row is not None
        for e in range(n_e):
            assert [tp.at(row[e].tolist(), k) for k in range(budget + 1)] == literal[v][e], (
                tree.ids[v],
                e,
            )


def test_thousands_of_seeded_trees_match_exhaustive_search() -> None:
    """Independent of hypothesis' generator: 3000 seeded trees with up to 7 nodes (a
    tenth of them in the inner loop, as the property tests)."""
    rng = random.Random(20240611)
    for _ in range(examples(3000)):
        spec = random_spec(rng, max_nodes=7, max_engines=3 if rng.random() < 0.5 else 2)
        budget = rng.randint(0, 4)
        res = tp.place(build(spec), budget)
        assert list(res.frontier) == brute_frontier(spec, budget)[: len(res.frontier)], spec


def test_deep_chain_needs_no_recursion() -> None:
    n = 30_000  # far past the interpreter's recursion limit
    nodes = [
        {"id": f"v{i}", "children": [f"v{i + 1}"] if i + 1 < n else [], "time": {"a": 1, "b": 0.5}}
        for i in range(n)
    ]
    nodes[-1]["time"] = {"a": 1}
    spec = {
        "version": 1,
        "engines": ["a", "b"],
        "budget": 3,
        "nodes": nodes,
        "transfer": {"linear": {"a": {"b": {"fixed": 3}}}},
    }
    res = tp.place(build(spec), 3)
    # No cut: everything on a. One cut: the leaf on a, the rest on the faster b.
    assert res.frontier == (n, 1 + 3 + 0.5 * (n - 1), 1 + 3 + 0.5 * (n - 1), 1 + 3 + 0.5 * (n - 1))
    assert res.cuts_used == 1


def test_ties_prefer_no_cut_then_the_first_engine() -> None:
    spec = {
        "version": 1,
        "engines": ["x", "y", "z"],
        "budget": 2,
        "transfer": {"default": {"fixed": 0}},
        "nodes": [
            {"id": "r", "children": ["a", "b"], "time": {"x": 1, "y": 1, "z": 1}},
            {"id": "a", "time": {"x": 2, "y": 2, "z": 2}},
            {"id": "b", "time": {"z": 2, "y": 2}},
        ],
    }
    art, _ = tree_artifact(parse_tree(spec), TreeOptions())
    # b cannot run on x, so the zero-cut optimum puts all on y: the first engine without a cut.
    assert art["tree"]["engines"] == {"r": "y", "a": "y", "b": "y"}
    assert art["tree"]["cuts"] == [] and art["tree"]["latency"] == 3


def test_doctests() -> None:
    for mod in (model, read, tree_build, tp.dp, tp.minmax, tp.rebuild, tp.measure, artifact):
        r = doctest.testmod(mod)
        assert r.attempted > 0 and r.failed == 0, (mod.__name__, r)


# --------------------------------------------------------------------------- the example


def test_example_is_optimal_by_exhaustive_search() -> None:
    spec = yaml.safe_load(EXAMPLE.read_text())
    art, _ = tree_artifact(load_tree(str(EXAMPLE)), TreeOptions())
    brute = brute_frontier(spec, spec["budget"])
    got = [INF if f["latency"] is None else f["latency"] for f in art["tree"]["frontier"]]
    assert got == pytest.approx(brute, rel=1e-12)
    assert spec_latency(spec, art["tree"]["engines"])[0] == pytest.approx(
        art["tree"]["latency"], rel=1e-12
    )  # type: ignore[index]
    # What the frontier shows: no placement without a cut (the scan and the UDF share
    # no engine), and each later cut buys less.
    assert got[0] == INF and got[1] > got[2] > got[3]


def test_golden_output_in_docs() -> None:
    """docs/tree.md shows the example's artifact (without the `input` echo): it must be
    what the tool prints today."""
    text = DOC.read_text()
    m = re.search(
        r"<!-- golden: placement tree examples/operator_tree.yaml -->\s*```json\n(.*?)```",
        text,
        re.S,
    )
    assert m, "golden block missing from docs/tree.md"
    res = CliRunner().invoke(app, ["tree", str(EXAMPLE)])
    assert res.exit_code == 0, res.stderr
    art = json.loads(res.stdout)
    assert "input" not in art["tree"]
    del art["tree"]["input_ref"]
    assert json.loads(m.group(1)) == art


# --------------------------------------------------------------------------- CLI


BASE: dict[str, Any] = {
    "version": 1,
    "engines": ["pg", "duck"],
    "budget": 1,
    "transfer": {"linear": {"pg": {"duck": {"fixed": 1, "per_row": 0.5}}}},
    "nodes": [
        {"id": "agg", "children": ["scan"], "time": {"duck": 1, "pg": 4}, "rows": 1},
        {"id": "scan", "time": {"pg": 2}, "rows": 4},
    ],
}


def run_cli(tmp_path: Path, doc: Any, *args: str, name: str = "t.json") -> Any:
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return CliRunner().invoke(app, ["tree", str(p), *args]), str(p)


def test_cli_ok(tmp_path: Path) -> None:
    res, _ = run_cli(tmp_path, BASE)
    assert res.exit_code == 0, res.stderr
    sec = json.loads(res.stdout)["tree"]
    # scan only runs on pg. agg on pg: 2 + 4; agg on duck: 2 + (1 + 4 rows * 0.5) + 1.
    # Equal latency, so the placement without a cut wins.
    assert (
        sec["latency"] == 6
        and sec["engines"] == {"agg": "pg", "scan": "pg"}
        and sec["cuts_used"] == 0
    )
    assert sec["frontier"] == [{"budget": 0, "latency": 6}, {"budget": 1, "latency": 6}]


def test_cli_budget_option_overrides_the_file(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(BASE))
    doc["nodes"][0]["time"]["pg"] = 9
    res, _ = run_cli(tmp_path, doc, "--budget", "0")
    assert res.exit_code == 0, res.stderr
    sec = json.loads(res.stdout)["tree"]
    assert sec["budget"] == 0 and sec["latency"] == 11 and sec["cuts"] == []


def test_cli_stdin_yaml_and_format_yaml() -> None:
    text = yaml.safe_dump(BASE)
    res = CliRunner().invoke(app, ["tree", "-", "--format", "yaml"], input=text)
    assert res.exit_code == 0, res.stderr
    assert yaml.safe_load(res.stdout)["tree"]["latency"] == 6


def test_cli_reads_its_own_artifact_back(tmp_path: Path) -> None:
    res, _ = run_cli(tmp_path, BASE, "--budget", "0", "--include-input")
    again, _ = run_cli(tmp_path, res.stdout, "--include-input", name="art.json")
    assert again.exit_code == 0 and again.stdout == res.stdout
    assert json.loads(again.stdout)["tree"]["budget"] == 0


def _mut(path: str, value: Any) -> Any:
    """A copy of BASE with one field set (`value` None deletes it)."""
    doc = json.loads(json.dumps(BASE))
    *head, last = re.findall(r"[^.\[\]]+", path)
    cur = doc
    for part in head:
        cur = cur[int(part)] if isinstance(cur, list) else cur[part]
    key: Any = int(last) if isinstance(cur, list) else last
    if value is None:
        del cur[key]
    elif isinstance(cur, list) and key == len(cur):
        cur.append(value)
    else:
        cur[key] = value
    return doc


PER_BYTE = {"linear": {"pg": {"duck": {"per_byte": 1}}}}
INVALID = [
    ("missing-version", _mut("version", None), "version", "required field is missing"),
    ("unknown-field", _mut("colour", "red"), "colour", "unknown field"),
    (
        "negative-time",
        _mut("nodes[1].time.pg", -1),
        "nodes[1].time.pg",
        "greater than or equal to 0",
    ),
    ("string-time", _mut("nodes[1].time.pg", "2"), "nodes[1].time.pg", "valid number"),
    ("bool-budget", _mut("budget", True), "budget", "valid integer"),
    ("negative-budget", _mut("budget", -1), "budget", "greater than or equal to 0"),
    ("no-engines", _mut("engines", []), "engines", "at least 1"),
    ("no-nodes", _mut("nodes", []), "nodes", "at least 1"),
    ("negative-rows", _mut("nodes[1].rows", -4), "nodes[1].rows", "greater than or equal to 0"),
    (
        "duplicate-engine",
        _mut("engines", ["pg", "duck", "pg"]),
        "engines[2]",
        "duplicate engine 'pg'",
    ),
    (
        "duplicate-id",
        _mut("nodes[1].id", "agg"),
        "nodes[1].id",
        "duplicate id 'agg' (first at nodes[0])",
    ),
    (
        "unknown-time-engine",
        _mut("nodes[1].time.gpu", 1),
        "nodes[1].time.gpu",
        "unknown engine 'gpu'",
    ),
    (
        "unknown-child",
        _mut("nodes[0].children", ["scan", "nope"]),
        "nodes[0].children[1]",
        "unknown node 'nope'",
    ),
    (
        "linear-unknown-src",
        _mut("transfer.linear.gpu", {}),
        "transfer.linear.gpu",
        "unknown engine 'gpu'",
    ),
    (
        "linear-unknown-dst",
        _mut("transfer.linear.pg.gpu", {"fixed": 1}),
        "transfer.linear.pg.gpu",
        "unknown engine 'gpu'",
    ),
    (
        "linear-same",
        _mut("transfer.linear.pg.pg", {"fixed": 1}),
        "transfer.linear.pg.pg",
        "same engine",
    ),
    (
        "linear-unknown-field",
        _mut("transfer.linear.pg.duck.per_mb", 1),
        "transfer.linear.pg.duck.per_mb",
        "unknown field",
    ),
    (
        "explicit-unknown-child",
        _mut("transfer.explicit", [{"child": "x", "from": "pg", "to": "duck", "cost": 1}]),
        "transfer.explicit[0].child",
        "unknown node 'x'",
    ),
    (
        "explicit-unknown-from",
        _mut("transfer.explicit", [{"child": "scan", "from": "gpu", "to": "duck", "cost": 1}]),
        "transfer.explicit[0].from",
        "unknown engine 'gpu'",
    ),
    (
        "explicit-unknown-to",
        _mut("transfer.explicit", [{"child": "scan", "from": "pg", "to": "gpu", "cost": 1}]),
        "transfer.explicit[0].to",
        "unknown engine 'gpu'",
    ),
    (
        "explicit-same",
        _mut("transfer.explicit", [{"child": "scan", "from": "pg", "to": "pg", "cost": 1}]),
        "transfer.explicit[0].to",
        "same engine as `from`",
    ),
    (
        "explicit-duplicate",
        _mut(
            "transfer.explicit",
            [{"child": "scan", "from": "pg", "to": "duck", "cost": c} for c in (1, 2)],
        ),
        "transfer.explicit[1]",
        "duplicate transfer for child 'scan' from 'pg' to 'duck' (first at transfer.explicit[0])",
    ),
    (
        "explicit-negative",
        _mut("transfer.explicit", [{"child": "scan", "from": "pg", "to": "duck", "cost": -1}]),
        "transfer.explicit[0].cost",
        "greater than or equal to 0",
    ),
    (
        "explicit-missing-cost",
        _mut("transfer.explicit", [{"child": "scan", "from": "pg", "to": "duck"}]),
        "transfer.explicit[0].cost",
        "required field is missing",
    ),
    (
        "rows-needed",
        _mut("nodes[1].rows", None),
        "nodes[1].rows",
        "required: a linear transfer model has per_row > 0",
    ),
    (
        "row-width-needed",
        _mut("transfer", PER_BYTE),
        "nodes[1].row_width",
        "required: a linear transfer model has per_byte > 0",
    ),
    (
        "self-cycle",
        _mut("nodes[1].children", ["scan"]),
        "nodes[1].children[0]",
        "cycle: node 'scan' is its own ancestor (scan -> scan)",
    ),
    (
        "cycle",
        _mut("nodes[1].children", ["agg"]),
        "nodes[1].children[0]",
        "cycle: node 'agg' is its own ancestor (agg -> scan -> agg)",
    ),
    (
        "two-roots",
        _mut("nodes[2]", {"id": "other", "time": {"pg": 1}}),
        "root",
        "several nodes have no parent: 'agg' (nodes[0]), 'other' (nodes[2]); set `root` to the one to place",
    ),
    ("unknown-root", _mut("root", "zzz"), "root", "unknown node 'zzz'"),
    (
        "shared",
        _mut("nodes[2]", {"id": "join", "children": ["agg", "scan"], "time": {"pg": 1}}),
        "nodes[2].children[1]",
        "node 'scan' is shared: it is a child of 'agg' and of 'join'; an operator tree cannot share a sub-plan (pass --expand-dag to duplicate it)",
    ),
    (
        "listed-twice",
        _mut("nodes[0].children", ["scan", "scan"]),
        "nodes[0].children[1]",
        "node 'scan' is shared: it is listed twice among the children of 'agg'; an operator tree cannot share a sub-plan",
    ),
    (
        "no-budget",
        _mut("budget", None),
        "budget",
        "no cut budget: set `budget` in the file or pass --budget K",
    ),
    ("not-a-mapping", [1, 2], "", "a tree file is a mapping at the top level"),
    (
        "artifact-kind",
        {"format_version": 1, "kind": "prune"},
        "",
        "this is a prune artifact: `placement tree` reads operator trees",
    ),
    (
        "artifact-version",
        {"format_version": 9, "kind": "tree"},
        "format_version",
        "unsupported artifact version 9",
    ),
    (
        "artifact-no-input",
        {"format_version": 1, "kind": "tree", "tree": {}},
        "tree.input",
        "required field is missing",
    ),
    (
        "artifact-bad-input",
        {"format_version": 1, "kind": "tree", "tree": {"input": _mut("nodes[1].time.pg", -1)}},
        "tree.input.nodes[1].time.pg",
        "greater than or equal to 0",
    ),
]


@pytest.mark.parametrize(
    ("doc", "path", "message"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_cli_invalid_input_exits_3(tmp_path: Path, doc: Any, path: str, message: str) -> None:
    res, name = run_cli(tmp_path, doc)
    assert res.exit_code == 3, (res.stdout, res.stderr)
    prefix = f"{name}: {path}: " if path else f"{name}: "
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith(prefix)]
    assert any(message in ln for ln in lines), res.stderr
    assert res.stdout == ""


@pytest.mark.parametrize(
    ("text", "path", "message"),
    [
        (
            "version: 1\nengines: [a]\nbudget: 0\nnodes: [{id: x, time: {a: .inf}}]\n",
            "nodes[0].time.a",
            "finite number",
        ),
        (
            "version: 1\nengines: [a]\nbudget: 0\nnodes: [{id: x, time: {a: .nan}}]\n",
            "nodes[0].time.a",
            "finite number",
        ),
        ("version: 1\nengines: [a\n", "", "invalid YAML"),
    ],
    ids=["inf", "nan", "syntax"],
)
def test_cli_invalid_yaml_exits_3(tmp_path: Path, text: str, path: str, message: str) -> None:
    res, name = run_cli(tmp_path, text, name="t.yaml")
    assert res.exit_code == 3
    prefix = f"{name}: {path}: " if path else f"{name}: "
    assert any(ln.startswith(prefix) and message in ln for ln in res.stderr.splitlines()), (
        res.stderr
    )


def _infeasible(tmp_path: Path, doc: Any, *args: str) -> tuple[dict[str, Any], str]:
    res, _ = run_cli(tmp_path, doc, *args)
    assert res.exit_code == 4, res.stderr
    art = json.loads(res.stdout)
    assert (
        art["status"] == "infeasible"
        and art["tree"]["latency"] is None
        and art["tree"]["engines"] == {}
    )
    return art, res.stderr


def test_cli_unsupported_node_exits_4(tmp_path: Path) -> None:
    art, err = _infeasible(tmp_path, _mut("nodes[1].time", {"pg": None}))
    assert [d["code"] for d in art["diagnostics"]] == ["unsupported-node"]
    assert "error: unsupported-node: no engine can run node 'scan'" in err


def test_cli_no_transfer_exits_4(tmp_path: Path) -> None:
    doc = _mut("nodes[0].time", {"duck": 1})
    doc["transfer"] = {}
    art, err = _infeasible(tmp_path, doc, "--budget", "5")
    assert [d["code"] for d in art["diagnostics"]] == ["budget-clamped", "no-transfer"]
    assert art["tree"]["budget"] == 1  # one edge: a budget of 5 allows nothing more than 1
    assert "child 'scan' can only run on pg" in err and "its parent 'agg' (duck)" in err


def test_cli_budget_too_small_exits_4(tmp_path: Path) -> None:
    art, err = _infeasible(tmp_path, _mut("nodes[0].time", {"duck": 1}), "--budget", "0")
    assert (
        art["diagnostics"][0]["code"] == "budget-too-small"
        and art["diagnostics"][0]["min_budget"] == 1
    )
    assert "needs at least 1 cut(s) but the budget is 0" in err
    assert art["tree"]["frontier"] == [{"budget": 0, "latency": None}]


SHARED = {
    "version": 1,
    "engines": ["pg", "duck"],
    "budget": 2,
    "transfer": {"default": {"fixed": 1}},
    "nodes": [
        {"id": "join", "children": ["f1", "f2"], "time": {"duck": 1}},
        {"id": "f1", "children": ["scan"], "time": {"duck": 1, "pg": 3}},
        {"id": "f2", "children": ["scan"], "time": {"duck": 2, "pg": 3}},
        {"id": "scan", "time": {"pg": 5, "duck": 9}},
    ],
}


def test_cli_dag_is_rejected_naming_the_shared_node(tmp_path: Path) -> None:
    res, name = run_cli(tmp_path, SHARED)
    assert res.exit_code == 3
    assert (
        f"{name}: nodes[2].children[0]: node 'scan' is shared: it is a child of 'f1' and of 'f2'"
        in res.stderr
    )


def test_cli_expand_dag_duplicates_and_says_so(tmp_path: Path) -> None:
    res, _ = run_cli(tmp_path, SHARED, "--expand-dag")
    assert res.exit_code == 0, res.stderr
    art = json.loads(res.stdout)
    sec = art["tree"]
    assert sec["nodes"] == 5 and set(sec["engines"]) == {"join", "f1", "f2", "scan", "scan#2"}
    infos = [d for d in art["diagnostics"] if d["code"] == "dag-expanded"]
    assert infos and infos[0]["severity"] == "info" and infos[0]["blocks"] == ["scan", "scan#2"]
    # Same answer as the tree written out by hand.
    by_hand = json.loads(json.dumps(SHARED))
    by_hand["nodes"][2]["children"] = ["scan2"]
    by_hand["nodes"].append({"id": "scan2", "time": {"pg": 5, "duck": 9}})
    assert sec["frontier"] == [
        {"budget": k, "latency": x} for k, x in enumerate(brute_frontier(by_hand, 2))
    ]


def test_expansion_is_bounded() -> None:
    # A ladder of diamonds: 2**depth root-to-leaf paths, so the expansion must stop.
    depth = 30
    nodes = [{"id": "top", "children": ["a0", "b0"], "time": {"x": 1}}]
    for i in range(depth):
        nxt = [f"a{i + 1}", f"b{i + 1}"] if i + 1 < depth else []
        nodes += [
            {"id": f"a{i}", "children": nxt, "time": {"x": 1}},
            {"id": f"b{i}", "children": nxt, "time": {"x": 1}},
        ]
    inp = parse_tree({"version": 1, "engines": ["x"], "budget": 0, "nodes": nodes})
    with pytest.raises(InputError, match="more than 5000 nodes"):
        build_tree(inp, expand_dag=True, limits=TreeLimits(max_expanded_nodes=5000))


def test_cli_root_field_places_only_its_subtree(tmp_path: Path) -> None:
    doc = _mut("nodes[2]", {"id": "other", "time": {"pg": 1}})
    doc["root"] = "agg"
    res, _ = run_cli(tmp_path, doc)
    assert res.exit_code == 0, res.stderr
    art = json.loads(res.stdout)
    assert set(art["tree"]["engines"]) == {"agg", "scan"}
    assert [d["code"] for d in art["diagnostics"]] == ["unplaced-nodes"]
    assert (
        "warning: unplaced-nodes: 1 node(s) are not under root 'agg' and are not placed: 'other'"
        in res.stderr
    )


# --------------------------------------------------------------------------- input reference, limits, numbers


def test_artifact_keeps_a_reference_not_the_input(tmp_path: Path) -> None:
    res, name = run_cli(tmp_path, BASE)
    assert res.exit_code == 0, res.stderr
    sec = json.loads(res.stdout)["tree"]
    assert "input" not in sec
    assert sec["input_ref"] == {
        "name": "t.json",
        # written to stdout: from the current directory, `/`-separated, never absolute
        "path": Path(os.path.relpath(name)).as_posix(),
        "sha256": hashlib.sha256(Path(name).read_bytes()).hexdigest(),
    }
    # Such an artifact cannot be placed again: it says which file to give instead.
    again, art = run_cli(tmp_path, res.stdout, name="art.json")
    assert again.exit_code == 3
    assert (
        f"{art}: tree.input: this artifact does not include its input (written without --include-input); give the tree file 't.json' instead"
        in again.stderr
    )


def test_include_input_echoes_explicit_transfers_in_input_order(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(BASE))
    doc["transfer"]["explicit"] = [
        {"child": "scan", "from": "pg", "to": "duck", "cost": 0.5},
        {"child": "scan", "from": "duck", "to": "pg", "cost": 2},
    ]
    res, _ = run_cli(tmp_path, doc, "--include-input")
    assert res.exit_code == 0, res.stderr
    sec = json.loads(res.stdout)["tree"]
    assert sec["input"]["transfer"]["explicit"] == doc["transfer"]["explicit"]
    assert sec["input_ref"]["name"] == "t.json"
    # The explicit cut (0.5) beats the linear model (1 + 4 * 0.5): agg moves to duck.
    assert sec["latency"] == 2 + 0.5 + 1 and sec["engines"] == {"agg": "duck", "scan": "pg"}
    # Read back, the artifact keeps naming the original file.
    again, _ = run_cli(tmp_path, res.stdout, "--include-input", name="art.json")
    assert again.exit_code == 0 and again.stdout == res.stdout


def test_malformed_explicit_entries_get_the_models_messages(tmp_path: Path) -> None:
    good = {"child": "scan", "from": "pg", "to": "duck", "cost": 1}
    doc = _mut(
        "transfer.explicit",
        [good, {**good, "to": "x", "cost": "1"}, {**good, "cost": math.inf}, {**good, "extra": 1}],
    )
    res, name = run_cli(tmp_path, yaml.safe_dump(doc), name="t.yaml")
    assert res.exit_code == 3
    assert f"{name}: transfer.explicit[1].cost: " in res.stderr
    assert f"{name}: transfer.explicit[2].cost: " in res.stderr
    assert f"{name}: transfer.explicit[3].extra: unknown field" in res.stderr


def test_explicit_fast_path_and_model_path_build_the_same_transfers() -> None:
    rng = random.Random(5)
    for _ in range(200):
        spec = random_spec(rng)
        fast = build(spec)
        doc = json.loads(json.dumps(spec))
        _, raw = read._split_explicit(doc)
        f = tree_model.TreeFile.model_validate(doc)
        slow = build_tree(check.check_tree(f, None, "<t>", "", {"name": "t", "sha256": ""}))[0]
        for u in range(1, fast.n):
            assert fast.transfer(u) == slow.transfer(u)
            for s, src in enumerate(fast.engines):
                for d, dst in enumerate(fast.engines):
                    want = spec_transfer(spec, fast.ids[u], src, dst)
                    assert fast.transfer(u)[s * len(fast.engines) + d] == (
                        INF if want is None else want
                    )


def test_per_width_term_is_charged(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(BASE))
    doc["transfer"] = {
        "linear": {
            "pg": {"duck": {"fixed": 1, "per_row": 0.5, "per_width": 0.25, "per_byte": 0.125}}
        }
    }
    doc["nodes"][1]["row_width"] = 8
    doc["nodes"][0]["time"]["pg"] = 100
    res, _ = run_cli(tmp_path, doc)
    assert res.exit_code == 0, res.stderr
    sec = json.loads(res.stdout)["tree"]
    # a + b*R + c*W + d*R*W with R = 4, W = 8: 1 + 2 + 2 + 4 = 9
    assert sec["cuts"][0]["cost"] == 9 and sec["latency"] == 2 + 9 + 1
    missing = _mut("transfer", {"linear": {"pg": {"duck": {"per_width": 1}}}})
    res, name = run_cli(tmp_path, missing)
    assert (
        res.exit_code == 3
        and f"{name}: nodes[1].row_width: required: a linear transfer model has per_width > 0"
        in res.stderr
    )


@pytest.mark.parametrize("fmt", ["json", "yaml"])
@pytest.mark.parametrize("big", [2**64, 2**64 + 1, 10**30])
def test_budgets_past_64_bits_are_clamped_to_the_edges(tmp_path: Path, fmt: str, big: int) -> None:
    # orjson reads such an integer as a float, the YAML loader as an int: both are budgets
    text = json.dumps(BASE).replace('"budget": 1', f'"budget": {big}')
    res, _ = run_cli(tmp_path, text, name=f"t.{fmt}")
    assert res.exit_code == 0, res.stderr
    art = json.loads(res.stdout)
    assert art["tree"]["budget"] == 1 and art["tree"]["latency"] == 6
    assert [d["code"] for d in art["diagnostics"]] == ["budget-clamped"]
    res, _ = run_cli(tmp_path, BASE, "--budget", str(big))
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["tree"]["budget"] == 1


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        (_mut("nodes[1].time.pg", 1e308), "nodes[0]"),  # 1.5e308 + 1e308 overflows
        (
            _mut("nodes[1].rows", 1e308),
            "nodes[0]",
        ),  # 1.5e308 + the transfer 1 + 0.5 * 1e308 overflows
    ],
    ids=["self-times", "transfer"],
)
def test_overflowing_costs_are_refused_not_misreported(tmp_path: Path, doc: Any, path: str) -> None:
    doc["nodes"][0]["time"]["pg"] = 1.5e308
    doc["nodes"][0]["time"]["duck"] = 1.5e308
    res, name = run_cli(tmp_path, doc)
    assert res.exit_code == 3, (res.stdout, res.stderr)
    assert f"{name}: {path}: costs too large: a placement of the subtree under 'agg'" in res.stderr
    assert "needs at least 0" not in res.stderr and "no transfer leads" not in res.stderr


def test_large_finite_costs_still_place(tmp_path: Path) -> None:
    # Two self-times of 8e307 sum to 1.6e308: finite, so the DP runs and answers.
    doc = _mut("nodes[1].time.pg", 8e307)
    doc["nodes"][0]["time"] = {"pg": 8e307}
    res, _ = run_cli(tmp_path, doc)
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["tree"]["latency"] == 8e307 + 8e307


def test_overflowing_transfer_alone_is_refused(tmp_path: Path) -> None:
    doc = _mut("nodes[1].rows", 1e308)
    doc["transfer"]["linear"]["pg"]["duck"]["per_row"] = 4
    res, name = run_cli(tmp_path, doc)
    assert res.exit_code == 3
    assert f"{name}: nodes[0]: costs too large" in res.stderr


def _chain_spec(n: int) -> dict[str, Any]:
    nodes = [
        {
            "id": f"v{i}",
            "children": [f"v{i + 1}"] if i + 1 < n else [],
            "time": {"a": 1 + i % 3, "b": 1 + i % 5, "c": 2},
        }
        for i in range(n)
    ]
    return {
        "version": 1,
        "engines": ["a", "b", "c"],
        "budget": 8,
        "nodes": nodes,
        "transfer": {"default": {"fixed": 1}},
    }


def test_dp_stops_at_the_deadline_and_says_unsolved() -> None:
    tree = build(_chain_spec(500))
    res = tp.place(tree, 8, deadline=time.monotonic() - 1)
    assert res.stopped == "time-limit" and res.assignment == () and res.frontier == ()
    assert res.detail is not None and 0 < res.detail["nodes_done"] < tree.n
    res = tp.place(tree, 8, limits=TreeLimits(memory_bytes=1000))
    assert res.stopped == "memory-limit"
    assert tp.place(tree, 8).stopped == ""


def test_cli_time_limit_exits_5_with_an_unsolved_artifact(tmp_path: Path) -> None:
    res, _ = run_cli(tmp_path, _chain_spec(20_000), "--time-limit", "0.001")
    assert res.exit_code == 5, res.stderr
    art = json.loads(res.stdout)
    assert (
        art["status"] == "unsolved"
        and art["tree"]["latency"] is None
        and art["tree"]["frontier"] == []
    )
    assert [d["code"] for d in art["diagnostics"]] == ["time-limit"]
    assert "error: time-limit: the time limit of 0.001 s ran out" in res.stderr
