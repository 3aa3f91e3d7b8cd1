"""`--diagnostics text|json|github|sarif`: every problem of an invalid input and every
stage error or warning, with the file, line and column of the node it is about; and the
message a pipe's stage gives when the stage before it failed."""

from __future__ import annotations

import orjson
import pytest

from tests.conftest import EXAMPLES, run_cli

BAD = "version: 1\ntargets: [a]\nblocks:\n  - id: x\n    terminator: {kind: goto, successors: [{block: nope}]}\n"


def _bad(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)
    return f


def test_text_is_unchanged_by_the_option(tmp_path):
    f = _bad(tmp_path)
    plain = run_cli("validate", str(f))
    text = run_cli("validate", str(f), "--diagnostics", "text")
    assert plain.returncode == text.returncode == 3
    assert (
        plain.stderr
        == text.stderr
        == f"{f}: blocks[0].terminator.successors[0].block: unknown block 'nope'\n".encode()
    )


def test_json_locates_the_node(tmp_path):
    f = _bad(tmp_path)
    r = run_cli("solve", str(f), "--diagnostics", "json")
    assert r.returncode == 3 and r.stdout == b""
    (rec,) = [orjson.loads(line) for line in r.stderr.splitlines()]
    assert rec["file"] == str(f) and rec["code"] == "invalid-input" and rec["severity"] == "error"
    assert (rec["line"], rec["col"]) == (5, BAD.splitlines()[4].index("nope") + 1)
    assert rec["path"] == "blocks[0].terminator.successors[0].block"


def test_github_annotations(tmp_path):
    f = _bad(tmp_path)
    r = run_cli("validate", str(f), "--diagnostics", "github")
    line = r.stderr.decode().strip()
    assert line.startswith(f"::error file={f},line=5,col=") and "title=invalid-input::" in line


def test_sarif_log(tmp_path):
    f = _bad(tmp_path)
    r = run_cli("validate", str(f), "--diagnostics", "sarif")
    log = orjson.loads(r.stderr)
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    assert run["tool"]["driver"]["name"] == "placement"
    (res,) = run["results"]
    assert res["ruleId"] == "invalid-input" and res["level"] == "error"
    region = res["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == 5


def test_stage_errors_point_at_their_block():
    plan = EXAMPLES / "no_target.yaml"
    r = run_cli("solve", str(plan), "-o", "/dev/stdout", "--diagnostics", "json")
    recs = [orjson.loads(line) for line in r.stderr.splitlines()]
    assert r.returncode == 4
    lines = plan.read_text().splitlines()
    for rec in recs:
        assert rec["file"] == str(plan) and rec["blocks"] == ["bb1"]
        assert lines[rec["line"] - 1].strip().startswith("- id: bb1")


def test_mir_positions_come_from_the_reader(tmp_path):
    f = tmp_path / "q.mir"
    f.write_text("fn x(\n  bb0: {\n")
    rec = orjson.loads(run_cli("lower", str(f), "--diagnostics", "json").stderr)
    assert (rec["line"], rec["col"]) == (1, 6)


@pytest.mark.parametrize("command", ["scc", "solve", "islands", "validate"])
def test_an_empty_pipe_says_the_previous_command_failed(command):
    r = run_cli(command, "-", stdin=b"")
    assert r.returncode == 3
    assert r.stderr.decode() == "<stdin>: empty input (the previous command failed?)\n"
