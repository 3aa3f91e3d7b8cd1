"""Invalid bodies: exit 3, one `FILE: PATH: message` line per problem, never a traceback."""

from __future__ import annotations

import copy

import orjson
import pytest

from placement_cli.frontends.lower.profile import HASHQL
from tests.lower_helpers import body_doc

GOOD = body_doc(
    [
        {
            "id": "bb0",
            "statements": [{"assign": "a", "load": "env.0"}],
            "terminator": {
                "kind": "switch",
                "operand": "a",
                "successors": [{"block": "bb1"}, {"block": "bb2"}],
            },
        },
        {
            "id": "bb1",
            "statements": [{"assign": "b", "unary": {"op": "-", "operand": "a"}}],
            "terminator": {"kind": "goto", "successors": [{"block": "bb2"}]},
        },
        {"id": "bb2", "terminator": {"kind": "return", "operand": "a"}},
    ],
    {"a": "int", "b": "int"},
    env={"tuple": ["int", {"struct": {"x": "int"}}]},
)


def mutate(path, value):
    doc = copy.deepcopy(GOOD)
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return doc


B = ["bodies", 0]
BLK = B + ["blocks"]
CASES = {
    "use before def in the block": (
        mutate(
            BLK + [0, "statements"],
            [{"assign": "c", "load": "a"}, {"assign": "a", "load": "env.0"}],
        )
        | {},
        "bodies[0].blocks[0].statements[0].load: local 'a' is used before it is defined on every path",
    ),
    "use not dominated": (
        mutate(BLK + [2, "terminator", "operand"], "b"),
        "bodies[0].blocks[2].terminator.operand: local 'b' is used before it is defined on every path",
    ),
    # not SSA (a local assigned in two blocks is fine), but a use some path reaches
    # without a definition is an error, reported once
    "defined on one path only": (
        mutate(
            BLK + [2, "statements"],
            [{"assign": "b", "unary": {"op": "-", "operand": "b"}}],
        ),
        "bodies[0].blocks[2].statements[0].unary.operand: local 'b' is used before it is defined on every path",
    ),
    "unknown local": (
        mutate(BLK + [1, "statements", 0, "unary", "operand"], "zz"),
        "bodies[0].blocks[1].statements[0].unary.operand: unknown local 'zz'",
    ),
    "unknown block": (
        mutate(BLK + [1, "terminator", "successors", 0, "block"], "bb9"),
        "bodies[0].blocks[1].terminator.successors[0].block: unknown block 'bb9'",
    ),
    "projection does not fit": (
        mutate(BLK + [0, "statements", 0, "load"], "env.1.y"),
        "bodies[0].blocks[0].statements[0].load: projection 'env.1.y' does not fit the type of 'env': struct has no field 'y' (fields: x)",
    ),
    "projection out of a primitive": (
        mutate(BLK + [1, "statements", 0, "unary", "operand"], "a.0"),
        "bodies[0].blocks[1].statements[0].unary.operand: projection 'a.0' does not fit the type of 'a': cannot project field '0' out of int",
    ),
    "unknown profile rule": (
        mutate(["profile"], {"name": "p", "targets": [{"name": "t", "vectorised": True}]}),
        "profile.targets[0].vectorised: unknown field",
    ),
    "unknown built-in profile": (
        mutate(["profile"], "nope"),
        "profile: unknown built-in profile 'nope' (known: hashql)",
    ),
    "unknown type in the profile's nominal table": (
        mutate(["profile"], HASHQL | {"nominal": HASHQL["nominal"] | {"::a::Id": "widget"}}),
        "profile.nominal.::a::Id: unknown type 'widget'",
    ),
    "two rvalues": (
        mutate(BLK + [1, "statements", 0], {"assign": "b", "load": "a", "input": "x"}),
        "bodies[0].blocks[1].statements[0]: Value error, an assignment needs exactly one rvalue",
    ),
    "unknown type": (
        mutate(B + ["locals", "b"], "widget"),
        "bodies[0].locals.b: unknown type 'widget'",
    ),
    # mistakes are not accepted silently
    "unknown callee": (
        mutate(
            BLK + [1, "statements", 0],
            {"assign": "b", "apply": {"func": {"fn": "nope"}, "args": []}},
        ),
        "bodies[0].blocks[1].statements[0].apply.func: unknown body 'nope'",
    ),
    "switch without an operand": (
        mutate(
            BLK + [0, "terminator"],
            {"kind": "switch", "successors": [{"block": "bb1"}, {"block": "bb2"}]},
        ),
        "bodies[0].blocks[0].terminator: a 'switch' terminator needs an operand (its discriminant)",
    ),
    "argument count": (
        mutate(BLK + [1, "terminator", "successors", 0], {"block": "bb2", "args": ["a"]}),
        "bodies[0].blocks[1].terminator.successors[0].args: block 'bb2' takes 0 argument(s), got 1",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_invalid_body_exits_3_with_file_path_message(cli, tmp_path, name):
    doc, want = CASES[name]
    f = tmp_path / "bad.body.json"
    f.write_bytes(orjson.dumps(doc))
    for cmd in (
        ["lower", str(f)],
        ["run", str(f), "--out-dir", str(tmp_path / "out")],
        ["validate", str(f)],
    ):
        r = cli(*cmd)
        err = r.stderr.decode()
        assert r.returncode == 3, (cmd, err)
        assert "Traceback" not in err
        assert any(line.startswith(f"{f}: {want}") for line in err.splitlines()), err


def test_the_good_body_is_fine(cli, tmp_path):
    f = tmp_path / "good.body.json"
    f.write_bytes(orjson.dumps(GOOD))
    r = cli("lower", str(f))
    assert r.returncode == 0, r.stderr.decode()
    v = tmp_path / "plan.json"
    v.write_bytes(r.stdout)
    assert cli("validate", str(v)).returncode == 0


def test_every_problem_is_listed(cli, tmp_path):
    doc = mutate(BLK + [1, "statements"], [{"assign": "b", "load": "zz"}])
    doc["bodies"][0]["blocks"][2]["terminator"]["operand"] = "yy"
    f = tmp_path / "bad.body.json"
    f.write_bytes(orjson.dumps(doc))
    r = cli("lower", str(f))
    lines = r.stderr.decode().splitlines()
    assert r.returncode == 3 and len(lines) == 2, lines  # zz and yy, nothing else


def test_a_body_that_is_not_ssa_is_lowered_with_one_error_at_most(cli, tmp_path):
    # `a` assigned again in bb1 (the compiler's MIR does this): fine
    ok = mutate(BLK + [1, "statements"], [{"assign": "a", "load": {"const": 1}}])
    f = tmp_path / "ok.body.json"
    f.write_bytes(orjson.dumps(ok))
    r = cli("lower", str(f), "-q")
    assert r.returncode == 0, r.stderr.decode()
    # an unknown local in the reassignment: that error alone, no misleading second one
    bad = mutate(BLK + [1, "statements"], [{"assign": "a", "load": "zz"}])
    f.write_bytes(orjson.dumps(bad))
    r = cli("lower", str(f))
    lines = r.stderr.decode().splitlines()
    assert r.returncode == 3 and len(lines) == 1, lines
    assert lines[0].endswith("statements[0].load: unknown local 'zz'"), lines


def test_invalid_profile_file_names_the_profile_file(cli, tmp_path):
    f = tmp_path / "good.body.json"
    f.write_bytes(orjson.dumps(GOOD))
    prof = tmp_path / "targets.yaml"
    prof.write_text("name: p\ntargets:\n  - name: a\n    arguments: sometimes\n")
    r = cli("lower", str(f), "--targets", str(prof))
    err = r.stderr.decode()
    assert r.returncode == 3 and err.startswith(f"{prof}: targets[0].arguments:"), err


def test_a_closed_vertex_makes_an_unknown_path_an_error_naming_it(cli, tmp_path):
    doc = mutate(BLK + [1, "statements", 0], {"assign": "b", "load": "vertex.propertys.age"})
    doc["profile"] = HASHQL | {"open_vertex": False}
    f = tmp_path / "bad.body.json"
    f.write_bytes(orjson.dumps(doc))
    r = cli("lower", str(f))
    err = r.stderr.decode()
    assert r.returncode == 3, err
    assert "bodies[0].blocks[1].statements[0].load: unknown vertex path `propertys.age`" in err
    assert "did you mean `properties`?" in err


def test_the_hashql_vertex_is_open_an_unknown_path_is_a_warning_naming_it():
    """As in the compiler: a path `resolve` does not know is unresolvable, not an error."""
    from tests.lower_helpers import lower

    doc = mutate(BLK + [1, "statements", 0], {"assign": "b", "load": "vertex.propertys.age"})
    doc["bodies"][0]["locals"]["b"] = "unknown"
    plan, _, diags = lower(doc)
    warn = [d for d in diags if d["code"] == "unknown-vertex-path"]
    assert len(warn) == 1 and warn[0]["severity"] == "warning" and warn[0]["blocks"] == ["bb1"]
    assert (
        "`propertys.age`" in warn[0]["message"] and "'vertex.propertys.age'" in warn[0]["message"]
    )
    assert "bodies[0].blocks[1].statements[0].load" in warn[0]["message"]
    assert len(next(b for b in plan["blocks"] if b["id"] == "bb1")["paths"]) > 1  # every path
