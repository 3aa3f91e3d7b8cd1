"""`placement show`: goldens byte for byte, Graphviz accepts the DOT, and the drawing
says what the placement says (every block once, its target's colour, cut edges exactly
the cross-target edges), on the examples and on random plans."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
import yaml
from hypothesis import given, settings

from placement_cli.views.data import FILLS, NO_TARGET_FILL
from placement_cli.views.dot import to_dot
from placement_cli.views.mermaid import MAX_EDGES, to_mermaid
from placement_cli.views.show_cfg import cfg_diagram
from placement_cli.views.show_graph import graph_diagram
from placement_cli.views.tree_show import fmt_time
from tests.budget import examples
from tests.goldens import ROOT, plan_examples
from tests.strategies import plans
from tests.views_goldens import golden_path, invoke, produce, produce_subprocess
from tests.views_helpers import cross_target_edges, read_dot, view_of

EXAMPLES = plan_examples()


@pytest.fixture(scope="module")
def produced():
    return {ex: produce(ex) for ex in EXAMPLES}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_show_goldens(example, produced):
    outputs = produced[example]
    assert len(outputs) == 9
    for name, data in outputs.items():
        gp = golden_path(example, name)
        assert gp.exists(), f"missing golden {gp}; run `python -m tests.views_goldens --write`"
        assert data == gp.read_bytes(), (
            f"{gp} differs; if intended, run `python -m tests.views_goldens --write`"
        )


def test_show_independent_of_hash_seed_and_process(produced):
    ex = ROOT / "examples" / "loop_alternating.yaml"
    for seed in ("1", "4242"):
        assert produce_subprocess(ex, "cfg", "dot", seed) == produced[ex]["show-cfg.dot"]


def _dot() -> str:
    exe = shutil.which("dot")
    if exe is None:
        if os.environ.get("CI") or os.environ.get("PLACEMENT_REQUIRE_DOT"):
            pytest.fail("Graphviz `dot` is missing on CI (.ci/run installs it)")
        pytest.skip("Graphviz `dot` is not installed (apt-get install graphviz)")
    return exe


def _graphviz_accepts(text: str) -> None:
    r = subprocess.run([_dot(), "-Tsvg"], input=text.encode(), capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stderr == b"", r.stderr.decode()  # not even a warning
    assert b"<svg" in r.stdout


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_graphviz_accepts_every_view(example, produced):
    for view in ("cfg", "islands", "graph"):
        _graphviz_accepts(produced[example][f"show-{view}.dot"].decode())


def _check_cfg(plan, v, text):
    nodes, edges = read_dot(text)
    solve = v.sections["solve"]
    assignment = solve["assignment"]
    targets = plan["targets"]
    blocks = [a["id"][len("block:") :] for a in nodes.values() if a["id"].startswith("block:")]
    assert sorted(blocks) == sorted(b["id"] for b in plan["blocks"])  # every block exactly once
    for a in nodes.values():
        if a["id"].startswith("block:"):
            t = assignment.get(a["id"][len("block:") :])
            want = NO_TARGET_FILL if t is None else FILLS[targets.index(t) % len(FILLS)]
            assert a["fillcolor"] == want, a
    cfg_edges = [e for e in edges if e[2].get("id", "").startswith("edge:")]
    assert len(cfg_edges) == sum(len(b["terminator"].get("successors", [])) for b in plan["blocks"])
    bold = {e[2]["id"][len("edge:") :] for e in cfg_edges if e[2].get("style") == "bold"}
    assert bold == cross_target_edges(plan, assignment)
    for e in cfg_edges:
        if e[2].get("style") == "bold":
            assert e[2]["label"] != ""  # cut edges carry their transition cost


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_cfg_structure_of_examples(example, produced):
    if example.suffix == ".mir":  # the compiler's MIR text: read as `lower` reads it
        from placement_cli.frontends.mir_text import read_body

        plan = read_body(example.read_bytes(), str(example))
    else:
        plan = yaml.safe_load(example.read_text())
    if "bodies" in plan:  # a MIR body: the views draw the plan it lowers to
        from placement_cli.frontends.lower import lower_to_plan

        plan = lower_to_plan(plan, str(example))[0]
    v = view_of(plan)
    _check_cfg(plan, v, produced[example]["show-cfg.dot"].decode())
    _check_mermaid_cfg(plan, v, produced[example]["show-cfg.mmd"].decode())


@settings(max_examples=examples(60))
@given(plans(max_blocks=7, max_targets=4))
def test_cfg_structure_of_random_plans(plan):
    v = view_of(plan)
    _check_cfg(plan, v, to_dot(cfg_diagram(v)))
    _check_mermaid_cfg(plan, v, to_mermaid(cfg_diagram(v))[0])


def _check_mermaid_cfg(plan, v, text):
    """Mermaid says the same: each block once, with its target's class; `==>` (bold)
    links exactly for the cross-target edges."""
    assignment = v.sections["solve"]["assignment"]
    label: dict[str, str] = {}
    classes: dict[str, list[str]] = {}
    thick = 0
    in_legend = False
    for line in text.splitlines():
        if line.strip().startswith("subgraph legend"):
            in_legend = True
        elif line.strip() == "end":
            in_legend = False
        elif m := re.match(r'^\s*(n\d+)\[\[?"([^"<]*)(<br/>|")', line):
            if not in_legend:
                label[m.group(1)] = m.group(2)
        elif m := re.match(r"^\s*class (n\d+) (\w+)$", line):
            classes.setdefault(m.group(1), []).append(m.group(2))
        elif " ==>" in line:
            thick += 1
    assert sorted(label.values()) == sorted(b["id"] for b in plan["blocks"])
    for n, bid in label.items():
        t = assignment.get(bid)
        want = "notarget" if t is None else f"t{plan['targets'].index(t)}"
        assert classes[n][0] == want, (bid, classes[n])
    assert thick == len(cross_target_edges(plan, assignment))


def test_cfg_islands_are_clusters_and_loops_marked(produced):
    text = produced[ROOT / "examples" / "loop_alternating.yaml"]["show-cfg.dot"].decode()
    assert 'id="island:i1"; label=""; tooltip="i1 · interpreter' in text
    assert 'id="title:island:i1", label="i1 · interpreter' in text
    nodes, _ = read_dot(text)
    loops = {a["id"] for a in nodes.values() if a.get("peripheries") == "2"}
    assert loops == {"block:bb1", "block:bb2", "block:bb3", "block:bb4"}


def test_graph_view_kinds_and_levels(produced):
    text = produced[ROOT / "examples" / "loop_alternating.yaml"]["show-graph.dot"].decode()
    nodes, edges = read_dot(text)
    by_name = {n: a["id"] for n, a in nodes.items()}
    data = [a for a in nodes.values() if a.get("shape") == "cylinder"]
    assert [a["id"] for a in data] == ["node:d0"]
    flows = {(by_name[s], by_name[d]): a for s, d, a in edges}
    assert flows[("node:d0", "node:i1")]["style"] == "dotted"
    assert flows[("node:d0", "node:i1")]["label"] == "vertex.encodings.vectors"
    assert "style" not in flows[("node:i0", "node:i1")]  # control flow: plain
    assert "{ rank=same; n4; n0; n3; }" in text  # level 0 = i0, d0


def test_weird_ids_are_escaped_for_graphviz_and_mermaid():
    plan = {
        "version": 1,
        "targets": ['t "a"', "t\\b"],
        "blocks": [
            {
                "id": 'x"1',
                "cost": {'t "a"': 1, "t\\b": 9},
                "terminator": {"kind": "goto", "successors": [{"block": "<y>#"}]},
            },
            {"id": "<y>#", "cost": {'t "a"': 9, "t\\b": 1}, "terminator": {"kind": "return"}},
        ],
        "transitions": {'t "a"': {'t "a"': 0, "t\\b": 1}, "t\\b": {"t\\b": 0}},
    }
    v = view_of(plan)
    _check_cfg(plan, v, to_dot(cfg_diagram(v)))
    _graphviz_accepts(to_dot(cfg_diagram(v)))
    _graphviz_accepts(to_dot(graph_diagram(v)))
    text, _ = to_mermaid(cfg_diagram(v))
    for line in text.splitlines():
        if '["' in line:
            inner = line.split('["', 1)[1].rsplit('"]', 1)[0]
            assert '"' not in inner and "<y>" not in inner, line


def _chain(n: int) -> dict:
    blocks = [
        {
            "id": f"b{i}",
            "cost": {"a": i % 2 * 5, "b": (i + 1) % 2 * 5},
            "terminator": {"kind": "goto", "successors": [{"block": f"b{i + 1}"}]},
        }
        for i in range(n - 1)
    ]
    i = n - 1
    blocks.append(
        {
            "id": f"b{i}",
            "cost": {"a": i % 2 * 5, "b": (i + 1) % 2 * 5},
            "terminator": {"kind": "return"},
        }
    )
    return {
        "version": 1,
        "targets": ["a", "b"],
        "transitions": {"a": {"a": 0, "b": 1}, "b": {"b": 0, "a": 1}},
        "blocks": blocks,
    }


def test_mermaid_falls_back_with_a_warning(tmp_path):
    import orjson

    # Alternating costs: every block its own island, so the islands view is too large too.
    path = tmp_path / "chain.json"
    path.write_bytes(orjson.dumps(_chain(MAX_EDGES + 20)))
    code, out, err = invoke(["show", str(path), "--format", "mermaid"])
    assert code == 0
    assert b"above Mermaid's default limits" in err
    assert out.startswith(b"%% chain.json: targets"), out[:80]
    assert out.count(b"==>") == 2  # a -> b and b -> a
    code, out, err = invoke(["show", str(path), "--format", "dot"])
    assert code == 0
    assert (
        err
        == (
            f"warning: the cfg view has {MAX_EDGES + 20} blocks, too many to read in one drawing "
            f"(above 200); its {MAX_EDGES + 20} islands are too many as well: --format text lists "
            "them as a table\n"
        ).encode()
    )
    assert out.count(b"penwidth=2.5") == MAX_EDGES + 19  # DOT has no limit: every cut edge


def test_text_format_is_plain_when_piped(produced):
    text = produced[ROOT / "examples" / "three_targets.yaml"]["show-islands.txt"].decode()
    lines = text.splitlines()
    assert lines[2].split() == ["island", "target", "blocks", "cost", "requires", "provides"]
    assert lines[3].split()[:4] == ["i0", "postgres", "bb0", "bb1"]
    assert "\x1b[" not in text


def test_infeasible_plan_is_drawn_with_a_warning():
    code, out, err = invoke(["show", "examples/no_target.yaml"])
    assert code == 0
    assert b"no feasible placement" in err
    assert out.count(b'fillcolor="' + NO_TARGET_FILL.encode() + b'"') >= 3


def test_show_reads_stdin_and_writes_a_file(tmp_path, produced):
    art = (ROOT / "tests" / "goldens" / "three_targets" / "islands.json").read_bytes()
    out = tmp_path / "v.mmd"
    code, stdout, err = invoke(["show", "-", "--format", "mermaid", "-o", str(out)], stdin=art)
    assert code == 0, err
    assert stdout == b""
    # the artifact carries the same placement as the plan: the same view
    assert out.read_bytes() == produced[ROOT / "examples" / "three_targets.yaml"]["show-cfg.mmd"]


@pytest.mark.parametrize("stem", ["three_targets", "nested_loops", "loop_alternating"])
def test_docs_images_show_the_current_examples(stem, produced):
    """docs/img holds Graphviz's SVG of each example's cfg and graph view (re-render with
    `placement show examples/X.yaml [--view graph] | dot -Tsvg`); every node of the current
    view must be in it (Graphviz copies the node ids into the SVG)."""
    for view in ("cfg", "graph"):
        svg = (ROOT / "docs" / "img" / f"{stem}-{view}.svg").read_text()
        nodes, _ = read_dot(
            produced[ROOT / "examples" / f"{stem}.yaml"][f"show-{view}.dot"].decode()
        )
        for a in nodes.values():
            assert f'id="{a["id"]}"' in svg, (view, a["id"])


# --- tree artifacts ---------------------------------------------------------------------

TREE_FILE = ROOT / "examples" / "operator_tree.yaml"


def _tree_artifact(tmp_path, *extra, name="tree.json"):
    out = tmp_path / name
    code, _, err = invoke(["tree", str(TREE_FILE), "-o", str(out), "--quiet", *extra])
    assert code == 0, err
    return out


def test_validate_tree_artifact_with_its_input(tmp_path):
    art = _tree_artifact(tmp_path, "--include-input")
    code, _, err = invoke(["validate", str(art)])
    assert code == 0, err
    assert b"ok: tree artifact, 7 operators" in err


def _moved_away(tmp_path):
    """A tree artifact whose tree file is no longer where the artifact recorded it."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(TREE_FILE, src / TREE_FILE.name)
    out = tmp_path / "tree.json"
    code, _, err = invoke(["tree", str(src / TREE_FILE.name), "-o", str(out), "--quiet"])
    assert code == 0, err
    shutil.rmtree(src)
    return out


def test_validate_tree_artifact_finds_its_tree_file_or_says_to_pass_it(tmp_path):
    art = _moved_away(tmp_path)
    code, _, err = invoke(["validate", str(art)])
    assert code == 3
    assert b"pass --tree FILE" in err, err
    # The advice works.
    code, _, err = invoke(["validate", str(art), "--tree", str(TREE_FILE)])
    assert code == 0, err
    # Next to the artifact, under the name it records, it is found without --tree.
    shutil.copy(TREE_FILE, tmp_path / TREE_FILE.name)
    code, _, err = invoke(["validate", str(art)])
    assert code == 0, err


def test_validate_tree_artifact_refuses_another_tree_file(tmp_path):
    art = _tree_artifact(tmp_path)
    other = tmp_path / "other.yaml"
    other.write_text(TREE_FILE.read_text().replace("budget: 3", "budget: 2"))
    code, _, err = invoke(["validate", str(art), "--tree", str(other)])
    assert code == 3
    assert b"tree.input_ref.sha256: " in err and b"is not the tree file" in err, err


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("latency", 70, b"tree.latency: recorded 70, but the recorded engines give 78.8088"),
        ("cuts_used", 2, b"tree.cuts_used: recorded 2"),
        ("engines", {"report": "duckdb"}, b"tree.engines: not a placement"),
    ],
)
def test_validate_tree_artifact_finds_a_tampered_result(tmp_path, field, value, message):
    import orjson

    art = _tree_artifact(tmp_path, "--include-input")
    doc = orjson.loads(art.read_bytes())
    doc["tree"][field] = value
    art.write_bytes(orjson.dumps(doc))
    code, _, err = invoke(["validate", str(art)])
    assert code == 3
    assert message in err, err


def test_validate_tree_artifact_with_engines_that_do_not_give_its_cuts(
    tmp_path,
):
    import orjson

    art = _tree_artifact(tmp_path, "--include-input")
    doc = orjson.loads(art.read_bytes())
    doc["tree"]["engines"]["report"] = "postgres"  # a legal engine, a worse placement
    art.write_bytes(orjson.dumps(doc))
    code, _, err = invoke(["validate", str(art)])
    assert code == 3
    assert b"tree.cuts: recorded" in err, err


def test_show_tree_artifact_draws_engines_cuts_and_the_critical_path(tmp_path):
    art = _tree_artifact(tmp_path, "--include-input")
    code, out, err = invoke(["show", str(art)])
    assert code == 0, err
    nodes, edges = read_dot(out.decode())
    doc = yaml.safe_load(TREE_FILE.read_text())
    engines = doc["engines"]
    import orjson

    sec = orjson.loads(art.read_bytes())["tree"]
    ops = {a["id"]: a for a in nodes.values() if a["id"].startswith("op:")}
    assert set(ops) == {f"op:{n['id']}" for n in doc["nodes"]}
    for nid, a in ops.items():
        e = sec["engines"][nid[3:]]
        assert a["fillcolor"] == FILLS[engines.index(e)]
        assert e in a["label"]
    by_id = {nodes[s]["id"][3:] + "->" + nodes[d]["id"][3:]: a for s, d, a in edges}
    cuts = {f"{c['parent']}->{c['child']}" for c in sec["cuts"]}
    assert {k for k, a in by_id.items() if a.get("style") == "bold"} == cuts
    for c in sec["cuts"]:  # the cost to three significant digits, read along the arrow
        label = by_id[f"{c['parent']}->{c['child']}"]["label"]
        assert f"{c['to_engine']} <- {c['from_engine']}: {fmt_time(c['cost'])}" in label
    path = [s["node"] for s in sec["critical_path"] if s["kind"] == "node"]
    red = {k for k, a in by_id.items() if a.get("color") == "#d62728"}
    assert red == {f"{p}->{c}" for p, c in zip(path, path[1:], strict=False)}
    legend = [a["label"] for a in nodes.values() if a["id"].startswith("legend:")]
    assert legend == engines
    code, text, _ = invoke(["show", str(art), "--format", "text"])
    assert code == 0
    assert b"join_tickets" in text and b"cut to parent postgres -> duckdb" in text
    code, mmd, _ = invoke(["show", str(art), "--format", "mermaid"])
    assert code == 0 and mmd.startswith(b"%% ") and b"==>" in mmd


def test_show_tree_artifact_without_its_input_says_to_pass_it(tmp_path):
    art = _moved_away(tmp_path)
    code, _, err = invoke(["show", str(art)])
    assert code == 3 and b"pass --tree FILE" in err, err
    code, out, err = invoke(["show", str(art), "--tree", str(TREE_FILE)])
    assert code == 0 and out.startswith(b"digraph"), err


# --- readability -----------------------------------------------------------------------


def _edges_by_id(text):
    nodes, edges = read_dot(text)
    return {a["id"]: a for _, _, a in edges if "id" in a}, nodes, edges


def test_switch_arms_are_labelled_else_and_then(produced):
    """A two-way switch: arm 0 is the else branch, arm 1 the then branch
    (docs/body-format.md); three_targets' bb0 and bb2 switch."""
    text = produced[ROOT / "examples" / "three_targets.yaml"]["show-cfg.dot"].decode()
    by_id, _, _ = _edges_by_id(text)
    assert by_id["edge:bb0[0]"]["label"].startswith("else")  # a cut: `else · 10`
    assert by_id["edge:bb0[0]"]["label"] == "else · 10"
    assert by_id["edge:bb0[1]"]["label"] == "then"
    assert by_id["edge:bb2[0]"]["label"] == "else"
    assert by_id["edge:bb2[1]"]["label"] == "then · 6"
    assert "label" not in by_id["edge:bb3[0]"]  # a goto says nothing
    mmd = produced[ROOT / "examples" / "three_targets.yaml"]["show-cfg.mmd"].decode()
    assert '|"then"|' in mmd and '|"else · 10"|' in mmd


def test_legend_is_in_target_order(produced):
    """The legend's row is chained left to right in the plan's target order, so
    Graphviz cannot lay it out reversed; with Graphviz, the SVG shows it so."""
    for view in ("cfg", "islands", "graph"):
        text = produced[ROOT / "examples" / "three_targets.yaml"][f"show-{view}.dot"].decode()
        nodes, edges = read_dot(text)
        legend = [n for n, a in nodes.items() if a["id"].startswith("legend:")]
        labels = [nodes[n]["label"] for n in legend]
        assert labels == ["interpreter", "postgres", "embedding"], labels
        chain = [(s, d) for s, d, a in edges if s in legend and d in legend]
        assert chain == list(zip(legend, legend[1:], strict=False)), chain
    if shutil.which("dot") is None:
        return
    svg = subprocess.run(
        ["dot", "-Tsvg"],
        input=produced[ROOT / "examples" / "three_targets.yaml"]["show-cfg.dot"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    xs = []
    for t in ("interpreter", "postgres", "embedding"):
        m = re.search(rf'<g id="legend:{t}" class="node">.*?<text[^>]* x="([\d.]+)"', svg, re.S)
        assert m, t
        xs.append(float(m.group(1)))
    assert xs == sorted(xs), xs


def test_cluster_titles_are_nodes_that_edges_avoid(produced):
    """Island titles are plaintext nodes at the top of their cluster (edges and their
    labels are routed around nodes; over a cluster's own label they are not)."""
    text = produced[ROOT / "examples" / "three_targets.yaml"]["show-cfg.dot"].decode()
    assert 'id="island:i1"; label=""' in text
    nodes, edges = read_dot(text.replace("  t", "  n9"))  # the reader knows n-names only
    titles = {a["id"]: a for a in nodes.values() if a["id"].startswith("title:")}
    assert titles["title:island:i1"]["label"] == "i1 · interpreter · cost 40"
    assert titles["title:island:i1"]["shape"] == "plaintext"


def test_an_island_cycle_without_a_loop_is_not_a_cycle_group(produced):
    """three_targets has no loop: its i1 runs before and after i2 (an acyclic program),
    which the schedule groups; loop_alternating's group is a loop across targets."""
    tt = produced[ROOT / "examples" / "three_targets.yaml"]
    assert "cycle group" not in tt["show-graph.dot"].decode()
    assert "cycle group" not in tt["show-graph.txt"].decode()
    assert "group g0 · no loop" in tt["show-graph.dot"].decode()
    la = produced[ROOT / "examples" / "loop_alternating.yaml"]
    assert "cycle group g0" in la["show-graph.dot"].decode()
    assert "cycle group g0" in la["show-graph.txt"].decode()


def test_a_view_too_large_to_read_says_so_and_offers_the_coarser_one(tmp_path):
    import orjson

    from benchmarks.generate import generate_plan

    plan = tmp_path / "big.json"
    plan.write_bytes(orjson.dumps(generate_plan(250)))
    code, out, err = invoke(["show", str(plan)])
    assert code == 0 and out.startswith(b"digraph")
    assert b"warning: the cfg view has " in err and b"--view islands" in err, err
    code, _, err = invoke(["show", str(plan), "--view", "islands"])
    assert code == 0 and err == b"", err
    code, _, err = invoke(["show", "examples/three_targets.yaml"])
    assert code == 0 and err == b"", err
