"""MIR text through the command line: every stage and `run` read a `.mir` file as they
read a body file; `lower --from hashql-mir` reads it from stdin; errors are exit 3 with
`FILE:LINE:COL: message`."""

from __future__ import annotations

import orjson
import pytest

from tests.conftest import ROOT, run_cli

MIR = ROOT / "tests" / "data" / "mir"
FILTER = MIR / "filter_web_and_uuid.mir"


def test_a_stage_reads_mir_as_lower_would():
    lowered = run_cli("lower", str(FILTER), "-q")
    assert lowered.returncode == 0, lowered.stderr
    solved = run_cli("solve", str(FILTER), "-q")
    assert solved.returncode == 0, solved.stderr
    art = orjson.loads(solved.stdout)
    assert art["kind"] == "solve" and art["solve"]["status"] == "ok"
    ids = [b["id"] for b in orjson.loads(lowered.stdout)["blocks"]]
    assert list(art["solve"]["assignment"]) == [i for i in ids if i in art["solve"]["assignment"]]
    assert set(art["solve"]["assignment"]) <= set(ids)


def test_lower_from_stdin_is_told_mir_or_told_so(tmp_path):
    text = FILTER.read_bytes()
    named = run_cli("lower", str(FILTER), "-q")
    for said in (["--from", "hashql-mir"], []):  # MIR text is told by its first line
        piped = run_cli("lower", "-", *said, "-q", stdin=text)
        assert piped.returncode == 0, piped.stderr
        assert piped.stdout == named.stdout
    as_body = run_cli("lower", "-", "--from", "body", "-q", stdin=text)
    assert as_body.returncode == 3  # MIR text is not a YAML body file, and it says so
    assert b"this looks like MIR text: use --from hashql-mir" in as_body.stderr


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (b"fn x(\n  bb0: {\n", ":1:6: "),
        (b"thunk t() -> Integer {\n    bb0(): {\n        return %9 +\n    }\n}\n", ":3:"),
        (b"\xff\xfe", ":1:1: MIR text is not UTF-8"),
        (b"fn f(\n  %0: \xe2\x82", ":2:7: MIR text is not UTF-8"),
    ],
)
def test_bad_mir_is_exit_3_with_a_position(tmp_path, text, where):
    path = tmp_path / "bad.mir"
    path.write_bytes(text)
    for command in ("validate", "lower", "run"):
        r = run_cli(command, str(path), cwd=tmp_path)
        assert r.returncode == 3, (command, r.stderr)
        line = r.stderr.decode().strip().splitlines()[0]
        assert line.startswith(f"{path}{where}") or line.startswith(f"bad.mir{where}"), line
        assert "Traceback" not in r.stderr.decode()


def _hashql_decisions(path):
    """The `// target` comments of the placed filter's blocks (HashQL's own decisions, as
    its UI outputs print them)."""
    import re

    text = path.read_text()
    filt = text[text.index("fn {graph::read::filter") :]
    filt = filt[: filt.index("\n}\n") + 2]
    return dict(re.findall(r"^\s*(bb\d+)\(.*\):\s*\{\s*//\s*(\w+)\s*$", filt, re.M))


def test_an_id_comparison_of_our_filter_goes_to_postgres_as_in_hashql():
    """filter_web_and_uuid.mir compares the web id with a WebId input and the entity uuid
    with a captured EntityUuid: with the compiler's entity path types both comparisons are
    equality-safe and the whole filter runs on postgres, as HashQL decides."""
    lowered = run_cli("lower", str(FILTER), "-q")
    assert lowered.returncode == 0, lowered.stderr
    plan = orjson.loads(lowered.stdout)
    assert plan["lower"]["diagnostics"] == []  # every transfer is priceable: ids are 1 unit
    texts = {s["text"]: set(s["cost"]) for b in plan["blocks"] for s in b["statements"]}
    assert "postgres" in texts["_3 = vertex.metadata.record_id.entity_id.web_id == _2"]
    assert "postgres" in texts["_4 = vertex.metadata.record_id.entity_id.entity_uuid != env.0"]
    solved = run_cli("solve", str(FILTER), "-q")
    assert solved.returncode == 0, solved.stderr
    assignment = orjson.loads(solved.stdout)["solve"]["assignment"]
    decisions = _hashql_decisions(FILTER)
    assert decisions == {"bb0": "postgres", "bb1": "postgres"}
    assert {b: assignment[b] for b in decisions} == decisions


def test_mir_that_is_not_ssa_is_lowered():
    """%3 is assigned on both arms: accepted; after the merge it is not dispatchable on
    postgres (one arm calls a closure), so the comparison reading it is not either."""
    r = run_cli("lower", str(MIR / "not_ssa.mir"), "-q")
    assert r.returncode == 0, r.stderr
    plan = orjson.loads(r.stdout)
    texts = {s["text"]: set(s["cost"]) for b in plan["blocks"] for s in b["statements"]}
    assert "postgres" in texts["_3 = env.0"]
    assert texts["_4 = _3 > 10"] == {"interpreter"}
    assert "_3" in plan["lower"]["ineligible"]["postgres"]
