"""A foreign plan (a distinct explicit matrix on every edge) loads and is written by
per-layout shortcuts: each matrix's table put in place by its layout's `_Shape`
(`ir/plan_parts.py`), each matrix written from its layout's template
(`ir/normalize._MatrixWriter`). Both are held here to the entry-by-entry code they
replace, on random layouts and awkward target names; and a command that sniffs its
input reads the file once (`kinds.read_again`)."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest

from placement_cli.core.errors import InputError
from placement_cli.formats.artifact import render
from placement_cli.ir.graph import build_graph
from placement_cli.ir.indexed import make_matrix
from placement_cli.ir.normalize import _MatrixWriter
from placement_cli.ir.plan_parts import Checker, Matrices, matrix_cost
from placement_cli.pipeline.kinds import read_input
from placement_cli.views.tree_sniff import sniff

NAMES = ["a", "B", "%x", "é", "z%b", '"q', "\\0", "😀", "ab", "a%%"]


def _random_raw(r: random.Random, targets: list[str]) -> dict[str, dict[str, float]]:
    raw: dict[str, dict[str, float]] = {}
    for s in r.sample(targets + ["nope"] * (r.random() < 0.05), k=r.randint(0, len(targets))):
        row = {}
        for d in r.sample(targets + ["nope"] * (r.random() < 0.05), k=r.randint(0, len(targets))):
            row[d] = 0.0 if s == d and r.random() < 0.9 else r.choice([0.0, 1.0, 2.5, 7.0, 1e300])
        raw[s] = row
    return raw


def test_matrices_by_layout_equal_entry_by_entry():
    r = random.Random(7)
    for n in (1, 2, 3, 4):
        for _ in range(150):
            targets = r.sample(NAMES, n)
            tindex = {t: i for i, t in enumerate(targets)}
            chk = Checker()
            mats = Matrices(_NoMatrices(), tuple(targets), tindex, "", chk)
            raws = [_random_raw(r, targets) for _ in range(6)]
            for k, raw in enumerate(raws * 2):  # each layout seen again
                ref = Checker()
                want = matrix_cost(
                    raw, f"blocks[0].terminator.successors[{k}].transitions", tindex, n, ref
                )
                before = len(chk.problems)
                got = mats.edge(raw, 0, k)
                assert got.cost == want
                assert got.out == make_matrix(n, want).out and got.inc == make_matrix(n, want).inc
                assert [(p.path, p.message) for p in chk.problems[before:]] == [
                    (p.path, p.message) for p in ref.problems
                ]
                assert mats.edge(raw, 0, k) is got or ref.problems  # interned


class _NoMatrices:
    transitions = None
    matrices: dict[str, dict[str, dict[str, float]]] = {}


def test_matrix_templates_write_what_orjson_writes():
    # Matrices of random layouts written at once as the plan's `matrices`, against the
    # plan's matrices as data rendered by `render` (orjson, entry by entry); 1, a few
    # (the entry-by-entry layout of a small map) and many (its bulk writer).
    r = random.Random(8)
    for n in (1, 2, 3, 4):
        for count in (1, 5, 17, 300):
            targets = tuple(r.sample(NAMES, n))
            mats = [
                make_matrix(
                    n,
                    tuple(
                        0.0
                        if s == d and r.random() < 0.8
                        else (
                            None
                            if r.random() < 0.4
                            else r.choice([0.0, 1.5, 2.0, 1e300, 3e-7, 2.0**60, r.random()])
                        )
                        for s in range(n)
                        for d in range(n)
                    ),
                )
                for _ in range(count)
            ]
            got = render({"plan": {"matrices": _MatrixWriter(targets).write_all(mats)}})
            want = {f"m{j}": m.to_json(targets) for j, m in enumerate(mats)}
            assert got == render({"plan": {"matrices": want}})


def test_a_foreign_plan_builds_the_same_graph_with_one_matrix_per_edge():
    from benchmarks.generate import generate_plan

    plan = generate_plan(300, 3, seed=3, distinct=True)
    g = build_graph(plan)
    n_edges = len(g.edge_mat)
    # every edge its own matrix, but for those with no transfer at all (loop edges)
    assert len({id(m) for m in g.edge_mat}) > 0.9 * n_edges
    for e, m in enumerate(g.edge_mat):
        b = plan["blocks"][g.edge_src[e]]
        raw = b["terminator"]["successors"][g.edge_pos[e]]["transitions"]
        assert m.cost == matrix_cost(raw, "", {t: i for i, t in enumerate(g.targets)}, 3, Checker())
    bad = orjson.loads(orjson.dumps(plan))
    bad["blocks"][5]["terminator"]["successors"][0]["transitions"]["interpreter"]["interpreter"] = 3
    with pytest.raises(InputError, match="a same-target transition costs 0, not 3"):
        build_graph(bad)


def test_a_sniffed_file_is_read_once(tmp_path: Path):
    path = tmp_path / "plan.json"
    path.write_bytes(b'{"first": 1}')
    art, again = sniff(str(path))
    assert art is None
    path.write_bytes(b'{"second": 2}')
    with again:
        assert read_input(str(path)) == b'{"first": 1}'  # the bytes the sniff read
        assert read_input(str(path)) == b'{"second": 2}'  # only once
    assert read_input(str(path)) == b'{"second": 2}'
