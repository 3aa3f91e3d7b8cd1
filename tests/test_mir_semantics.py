"""What `lower` decides for the HashQL compiler's MIR where the compiler's own output says
what it should: unresolvable vertex paths, the newest entity paths, misspelt type names,
the size-cap advice, and the `// target` comments of the project's `.mir` test data.

The `upstream_*.mir` files are the compiler's printed MIR (UI snapshot bodies and eval
filter reports); each names its repository, path and commit and the placement the
compiler recorded, which is the expected answer here."""

from __future__ import annotations

import re

import orjson
import pytest

from tests.conftest import ROOT, run_cli

MIR = ROOT / "tests" / "data" / "mir"


def _lower(path, *args):
    r = run_cli("lower", str(path), *args)
    assert r.returncode == 0, r.stderr
    plan = orjson.loads(r.stdout)
    return plan, plan["lower"]["diagnostics"]


def _assignment(path, tmp_path, body=None):
    plan = tmp_path / "plan.json"
    extra = ["--body", body] if body else []
    r = run_cli("lower", str(path), "-q", "-o", str(plan), *extra)
    assert r.returncode == 0, r.stderr
    solved = run_cli("solve", str(plan), "-q")
    assert solved.returncode == 0, solved.stderr
    return orjson.loads(solved.stdout)["solve"]["assignment"]


def test_an_unknown_vertex_field_is_unresolvable_as_in_the_compiler(tmp_path):
    """entity_uuid_equality: `%1.id.entity_id.entity_uuid` resolves to nothing; the compiler
    reads every path, postgres gives the comparison no cost, the interpreter runs bb0."""
    path = MIR / "upstream_entity_uuid_equality.mir"
    plan, diags = _lower(path)
    [warn] = [d for d in diags if d["code"] == "unknown-vertex-path"]
    assert warn["severity"] == "warning"
    assert "`id.entity_id.entity_uuid`" in warn["message"]
    assert "did you mean `metadata.record_id.entity_id.entity_uuid`?" in warn["message"]
    costs = {s["text"]: set(s["cost"]) for b in plan["blocks"] for s in b["statements"]}
    compare = next(t for t in costs if "vertex.id.entity_id.entity_uuid" in t)
    assert costs[compare] == {"interpreter"}  # postgres and embedding reject the access
    others = [c for t, c in costs.items() if t != compare]
    assert others and all("postgres" in c for c in others)  # eq_opaque_entity_uuid: cost 4
    assignment = _assignment(path, tmp_path)
    assert {assignment[b] for b in assignment} == {"interpreter"}  # bb0: interpreter


def test_a_misspelt_vertex_field_suggests_the_declared_one():
    text = (MIR / "filter_web_and_uuid.mir").read_text()
    assert "%1.metadata.archived" in text

    r = run_cli(
        "lower",
        "-",
        "--from",
        "hashql-mir",
        "-q",
        stdin=text.replace("%1.metadata.archived", "%1.metadata.archivd").encode(),
    )
    assert r.returncode == 0, r.stderr
    diags = orjson.loads(r.stdout)["lower"]["diagnostics"]
    [warn] = [d for d in diags if d["code"] == "unknown-vertex-path"]
    assert "did you mean `metadata.archived`?" in warn["message"]


@pytest.mark.parametrize(
    ("name", "column"),
    [
        ("upstream_created_by_id_column_equality", "metadata.provenance.created_by_id"),
        (
            "upstream_created_at_column_comparison",
            "metadata.provenance.created_at_transaction_time",
        ),
    ],
)
def test_the_newest_entity_paths_run_on_postgres_as_in_the_eval_reports(tmp_path, name, column):
    """The eval filter reports compile both columns inside one postgres island entered at
    bb0: every block of the filter is placed on postgres, with no warning."""
    path = MIR / f"{name}.mir"
    plan, diags = _lower(path)
    assert diags == []
    assert f"vertex.{column}" in plan["paths"] and plan["paths"][f"vertex.{column}"] == ["postgres"]
    assignment = _assignment(path, tmp_path)
    assert set(assignment.values()) == {"postgres"}


def test_a_misspelt_type_name_is_a_warning_with_a_suggestion():
    text = (MIR / "filter_web_and_uuid.mir").read_text()
    assert "let %3: Boolean" in text
    r = run_cli(
        "lower",
        "-",
        "--from",
        "hashql-mir",
        "-q",
        stdin=text.replace("let %3: Boolean", "let %3: Boolan").encode(),
    )
    assert r.returncode == 0, r.stderr
    diags = orjson.loads(r.stdout)["lower"]["diagnostics"]
    [warn] = [d for d in diags if d["code"] == "unknown-type"]
    assert warn["severity"] == "warning"
    assert "`Boolan`" in warn["message"] and "did you mean `Boolean`?" in warn["message"]


def test_the_compilers_short_type_names_are_not_unknown():
    """`Uuid`, `EntityUuid`, `Entity<T?19>`: the compiler's printer uses them."""
    _, diags = _lower(MIR / "upstream_entity_uuid_equality.mir")
    assert [d for d in diags if d["code"] == "unknown-type"] == []


def test_the_size_cap_advice_can_be_followed_for_mir(tmp_path):
    """A filter on `properties.*` cannot carry a size_cap in MIR text: the advice names
    `--size-cap` and `placement.toml`, and both silence it."""
    path = MIR / "filter_property_loop.mir"
    _, diags = _lower(path)
    warns = [d for d in diags if d["code"] in ("unpriceable-premium", "unpriceable-transfer")]
    assert warns
    for d in warns:
        assert "--size-cap N" in d["message"] and "placement.toml" in d["message"], d
    _, capped = _lower(path, "--size-cap", "64")
    assert not [d for d in capped if d["code"].startswith("unpriceable")]
    local = tmp_path / "f.mir"
    local.write_bytes(path.read_bytes())
    (tmp_path / "placement.toml").write_text("size-cap = 64\n")
    r = run_cli("lower", str(local), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert not [
        d
        for d in orjson.loads(r.stdout)["lower"]["diagnostics"]
        if d["code"].startswith("unpriceable")
    ]


def _commented_bodies(text):
    """Each body with `// target` comments on its blocks: name -> {block: target}."""
    out = {}
    for m in re.finditer(r"^fn (\{[^}]*\})\(.*?^\}$", text, re.M | re.S):
        found = dict(re.findall(r"^\s*(bb\d+)\(.*\):\s*\{\s*//\s*(\w+)\s*$", m.group(0), re.M))
        if found:
            out[m.group(1)] = found
    return out


@pytest.mark.parametrize("path", sorted(MIR.glob("*.mir")), ids=lambda p: p.name)
def test_the_target_comments_of_our_mir_data_are_the_placement(tmp_path, path):
    """A `// target` comment on a block is the placement the compiler's rules give it;
    the tool must agree (the comments are checked, never read by the tool)."""
    for body, decisions in _commented_bodies(path.read_text()).items():
        assignment = _assignment(path, tmp_path, body)
        assert {b: assignment[b] for b in decisions} == decisions, (path.name, body)
