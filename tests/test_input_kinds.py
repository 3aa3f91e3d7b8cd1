"""What an input is: a file of another command's kind given to a command is one line
naming what it is and which command reads it (exit 3); a directory walked by a batch
takes only the inputs the command reads and lists the rest as skipped; a tree artifact
finds its tree file from any directory."""

from __future__ import annotations

import re
import shutil

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from placement_cli.pipeline.kinds import looks_like_mir
from tests.conftest import EXAMPLES, ROOT, run_cli

TREE = EXAMPLES / "operator_tree.yaml"
PLAN = EXAMPLES / "three_targets.yaml"
BODY = EXAMPLES / "filter.body.yaml"
MIR = EXAMPLES / "web_filter.mir"


def _one_line(r) -> str:
    lines = r.stderr.decode().strip().splitlines()
    assert len(lines) == 1, r.stderr.decode()
    return lines[0]


@pytest.fixture(scope="module")
def tree_artifact(tmp_path_factory):
    out = tmp_path_factory.mktemp("tree") / "t.json"
    r = run_cli("tree", str(TREE), "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr
    return out


def _plan_commands(path: str) -> list[tuple[str, ...]]:
    return [
        ("validate", path),
        ("show", path),
        ("explain", path, "bb0"),
        ("solve", path),
        ("run", path, "--out-dir", "OUT"),
        ("lower", path),
    ]


@pytest.mark.parametrize("cmd", range(6))
def test_a_tree_file_given_to_a_plan_command_is_one_line(tmp_path, cmd):
    args = [a.replace("OUT", str(tmp_path / "o")) for a in _plan_commands(str(TREE))[cmd]]
    r = run_cli(*args)
    assert r.returncode == 3, r.stderr
    line = _one_line(r)
    assert line == f"{TREE}: this is an operator tree: `placement tree` reads it", line


@pytest.mark.parametrize("cmd", [2, 3, 4, 5])
def test_a_tree_artifact_given_to_a_plan_command_is_one_line(tmp_path, tree_artifact, cmd):
    args = [a.replace("OUT", str(tmp_path / "o")) for a in _plan_commands(str(tree_artifact))[cmd]]
    r = run_cli(*args)
    assert r.returncode == 3, r.stderr
    line = _one_line(r)
    assert line.startswith(f"{tree_artifact}: this is a tree artifact"), line
    assert "`placement show`" in line and "version" not in line, line


def test_a_tree_artifact_on_stdin_is_one_line(tree_artifact):
    r = run_cli("solve", "-", stdin=tree_artifact.read_bytes())
    assert r.returncode == 3
    assert _one_line(r).startswith("<stdin>: this is a tree artifact")


def test_a_profile_given_to_a_plan_command_is_one_line(tmp_path):
    prof = tmp_path / "targets.yaml"
    prof.write_bytes(run_cli("profile", "show").stdout)
    r = run_cli("solve", str(prof))
    assert r.returncode == 3
    line = _one_line(r)
    assert line.startswith(f"{prof}: this is a target profile: `--targets FILE` reads it"), line


@pytest.mark.parametrize(
    ("path", "what"),
    [
        (PLAN, "a plan"),
        (BODY, "a body file"),
        (MIR, "MIR text"),
    ],
)
def test_a_plan_body_or_mir_given_to_tree_is_one_line(path, what):
    r = run_cli("tree", str(path))
    assert r.returncode == 3, r.stderr
    line = _one_line(r)
    assert line.startswith(f"{path}: this is {what}: "), line
    assert "`placement tree` reads operator trees" in line, line


def test_a_pipeline_artifact_given_to_tree_is_one_line(tmp_path):
    art = tmp_path / "s.json"
    art.write_bytes(run_cli("solve", str(PLAN), "-q").stdout)
    r = run_cli("tree", str(art))
    assert r.returncode == 3
    assert _one_line(r).startswith(f"{art}: this is a solve artifact: "), r.stderr


def _mixed_dir(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(PLAN, src / "a_plan.yaml")
    shutil.copy(MIR, src / "b_filter.mir")
    shutil.copy(TREE, src / "c_tree.yaml")
    (src / "d_targets.yaml").write_bytes(run_cli("profile", "show").stdout)
    (src / "e_ci.yml").write_text("repos:\n  - repo: local\n")
    (src / "summary.json").write_text('{"command": "run", "rows": []}\n')
    return src


def test_a_directory_walk_takes_only_what_the_command_reads(tmp_path):
    src = _mixed_dir(tmp_path)
    out = tmp_path / "out"
    r = run_cli("run", str(src), "--out-dir", str(out))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["a_plan", "b_filter", "summary.json"]
    summary = orjson.loads((out / "summary.json").read_bytes())
    assert [row["name"] for row in summary["rows"]] == ["a_plan", "b_filter"]
    skipped = summary["skipped"]
    assert [s["input"] for s in skipped] == [
        str(src / n) for n in ("c_tree.yaml", "d_targets.yaml", "e_ci.yml", "summary.json")
    ]
    assert "operator tree" in skipped[0]["reason"]
    assert "target profile" in skipped[1]["reason"]
    err = r.stderr.decode().splitlines()
    assert [line for line in err if "skipped" in line] == [
        f"{src / n}: skipped: {s['reason']}"
        for n, s in zip(
            ("c_tree.yaml", "d_targets.yaml", "e_ci.yml", "summary.json"), skipped, strict=True
        )
    ]


def test_tree_over_a_directory_takes_only_trees(tmp_path):
    src = _mixed_dir(tmp_path)
    out = tmp_path / "out"
    r = run_cli("tree", str(src), "--out-dir", str(out), "-q")
    assert r.returncode == 0, r.stderr
    summary = orjson.loads((out / "summary.json").read_bytes())
    assert [row["name"] for row in summary["rows"]] == ["c_tree"]
    assert len(summary["skipped"]) == 5


def test_a_directory_with_nothing_to_read_is_a_usage_error(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(TREE, src / "t.yaml")
    r = run_cli("validate", str(src))
    assert r.returncode == 2
    assert "nothing `placement validate` reads" in r.stderr.decode(), r.stderr


def test_a_named_file_is_never_skipped(tmp_path):
    r = run_cli("validate", str(PLAN), str(TREE))
    assert r.returncode == 3
    assert f"{TREE}: this is an operator tree" in r.stderr.decode()


def test_a_tree_artifact_finds_its_tree_file_from_any_directory(tmp_path):
    proj = tmp_path / "proj"
    shutil.copytree(EXAMPLES, proj / "examples")
    (proj / "out").mkdir()  # -o creates no folders
    r = run_cli("tree", "examples/operator_tree.yaml", "-o", "out/t.json", "-q", cwd=proj)
    assert r.returncode == 0, r.stderr
    art = orjson.loads((proj / "out" / "t.json").read_bytes())
    assert art["tree"]["input_ref"]["path"] == "../examples/operator_tree.yaml"
    for cwd in (proj, proj / "out", tmp_path, ROOT):
        r = run_cli("validate", str(proj / "out" / "t.json"), cwd=cwd)
        assert r.returncode == 0, (cwd, r.stderr)
        r = run_cli("show", str(proj / "out" / "t.json"), "--format", "text", cwd=cwd)
        assert r.returncode == 0, (cwd, r.stderr)


def test_a_tree_artifact_on_stdout_records_the_path_from_the_current_directory(tmp_path):
    proj = tmp_path / "proj"
    shutil.copytree(EXAMPLES, proj / "examples")
    r = run_cli("tree", "examples/operator_tree.yaml", "-q", cwd=proj)
    assert r.returncode == 0, r.stderr
    art = orjson.loads(r.stdout)
    assert art["tree"]["input_ref"]["path"] == "examples/operator_tree.yaml"
    (proj / "t.json").write_bytes(r.stdout)
    assert run_cli("validate", str(proj / "t.json"), cwd=tmp_path).returncode == 0


def test_tree_artifacts_are_byte_identical_in_two_checkouts(tmp_path):
    outs = []
    for d in ("one", "two/deeper"):
        proj = tmp_path / d
        shutil.copytree(EXAMPLES, proj / "examples")
        (proj / "out").mkdir()  # -o creates no folders
        r = run_cli(
            "tree",
            str(proj / "examples" / "operator_tree.yaml"),
            "-o",
            str(proj / "out" / "t.json"),
            "-q",
        )
        assert r.returncode == 0, r.stderr
        outs.append((proj / "out" / "t.json").read_bytes())
    assert outs[0] == outs[1]
    assert str(tmp_path).encode() not in outs[0]


def test_a_moved_tree_file_is_looked_for_by_name_and_checked_by_hash(tmp_path, tree_artifact):
    other = tmp_path / "elsewhere"
    other.mkdir()
    changed = other / "operator_tree.yaml"
    changed.write_bytes(TREE.read_bytes() + b"\n# changed\n")
    art = other / "t.json"
    art.write_bytes(tree_artifact.read_bytes())
    r = run_cli("validate", str(art), cwd=other)
    # the recorded path is not there; the file of that name is not the one it was computed from
    assert r.returncode == 3
    assert "sha256" in r.stderr.decode()


def test_quiet_keeps_the_skipped_list_in_the_summary_only(tmp_path):
    src = _mixed_dir(tmp_path)
    r = run_cli("validate", str(src), "-q")
    assert r.returncode == 0, r.stderr
    assert b"skipped" not in r.stderr


# What `kinds.looks_like_mir` reads, as the patterns it was first written as: blank
# space and `//` comments skipped, then a body header (two matches, as one pattern
# would backtrack for ever on long blank runs).
_SKIP = re.compile(rb"(?:[ \t\r\n]+|//[^\n]*)*")
_MIR_START = re.compile(rb"\*?[ \t]*(?:fn|thunk)[ \t]")


@settings(max_examples=3000)
@given(
    st.lists(
        st.sampled_from(
            [b" ", b"\t", b"\r", b"\n", b"//", b"/", b"x", b"*", b"fn", b"thunk", b"f", b"{"]
            + [b"\xef\xbb\xbf", b" " * 4095, b"\n" * 5000, b"// c\n"]
        ),
        max_size=12,
    )
)
def test_looks_like_mir_is_its_pattern(parts: list[bytes]) -> None:
    data = b"".join(parts)
    skipped = _SKIP.match(data, 3 if data.startswith(b"\xef\xbb\xbf") else 0)
    assert skipped is not None
    expected = _MIR_START.match(data, skipped.end()) is not None
    assert looks_like_mir(data) == expected, data[:80]
