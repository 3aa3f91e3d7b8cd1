"""Many inputs in one call (`placement_cli/app/batch.py`): one output folder per input,
a broken file never stops the others, the worst exit code, a summary in input order, and
the same bytes as the one-file command."""

from __future__ import annotations

import shutil

import orjson

from tests.conftest import EXAMPLES, run_cli

GOOD = ["three_targets.yaml", "nested_loops.yaml", "seed_split.body.yaml"]


def _inputs(tmp_path, broken: bool = False):
    src = tmp_path / "in"
    src.mkdir()
    for name in GOOD:
        shutil.copy(EXAMPLES / name, src / name)
    if broken:
        (src / "broken.yaml").write_text("version: 1\ntargets: [a]\nblocks: [{id: x}]\n")
    return src


def test_run_over_a_directory_keeps_going_past_a_broken_file(tmp_path):
    src = _inputs(tmp_path, broken=True)
    out = tmp_path / "out"
    r = run_cli("run", str(src), "--out-dir", str(out), "--jobs", "2")
    assert r.returncode == 3, r.stderr  # the worst: the broken file's invalid input
    summary = orjson.loads((out / "summary.json").read_bytes())
    assert [row["name"] for row in summary["rows"]] == [
        "broken",
        "nested_loops",
        "seed_split",
        "three_targets",
    ]
    assert [row["exit"] for row in summary["rows"]] == [3, 0, 0, 0]
    assert summary["exit"] == 3
    for name in ("nested_loops", "seed_split", "three_targets"):
        assert sorted(p.name for p in (out / name).iterdir()) == [
            "fuse.json",
            "islands.json",
            "prune.json",
            "scc.json",
            "solve.json",
        ]
    assert not (out / "broken").exists()
    err = r.stderr.decode()
    assert f"{src / 'broken.yaml'}: " in err  # its problem, named by its file
    assert "worst exit 3" in err
    assert r.stdout == b""


def test_each_output_is_the_one_file_commands_bytes(tmp_path):
    src = _inputs(tmp_path)
    out = tmp_path / "out"
    files = [str(src / n) for n in GOOD]
    r = run_cli("solve", *files, "--out-dir", str(out), "-q", "-j", "1")
    assert r.returncode == 0, r.stderr
    for name in GOOD:
        alone = run_cli("solve", str(src / name), "-q")
        stem = name.split(".")[0]
        assert (out / stem / "solve.json").read_bytes() == alone.stdout, name
    rows = orjson.loads((out / "summary.json").read_bytes())["rows"]
    assert [r["input"] for r in rows] == files  # the order given
    assert all(r["proven"] and r["cost"] > 0 for r in rows)


def test_jobs_do_not_change_the_bytes(tmp_path):
    src = _inputs(tmp_path)
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        assert (
            run_cli("islands", str(src), "--out-dir", str(out), "-q", "--jobs", jobs).returncode
            == 0
        )
        outs.append(
            {
                p.relative_to(out): p.read_bytes()
                for p in out.rglob("*.json")
                if p.name != "summary.json"
            }
        )
    assert outs[0] == outs[1] and len(outs[0]) == len(GOOD)


def test_validate_many_files_exits_with_the_worst(tmp_path):
    src = _inputs(tmp_path, broken=True)
    files = sorted(str(p) for p in src.iterdir())
    r = run_cli("validate", *files)
    assert r.returncode == 3
    assert run_cli("validate", *[f for f in files if "broken" not in f]).returncode == 0


def test_usage_errors(tmp_path):
    src = _inputs(tmp_path)
    a, b = str(src / GOOD[0]), str(src / GOOD[1])
    assert run_cli("solve", a, b).returncode == 2  # where would two artifacts go?
    assert run_cli("solve", a, "-", "--out-dir", str(tmp_path / "o")).returncode == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run_cli("run", str(empty), "--out-dir", str(tmp_path / "o"))
    assert r.returncode == 2 and b"no .yaml" in r.stderr


def test_same_names_get_distinct_folders(tmp_path):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        shutil.copy(EXAMPLES / "three_targets.yaml", tmp_path / d / "q.yaml")
    out = tmp_path / "out"
    r = run_cli("scc", str(tmp_path / "a"), str(tmp_path / "b"), "--out-dir", str(out), "-q")
    assert r.returncode == 0, r.stderr
    assert (out / "q" / "scc.json").read_bytes() == (out / "q-2" / "scc.json").read_bytes()


def test_tree_over_a_directory_skips_mir_text_even_an_empty_file(tmp_path):
    d = tmp_path / "trees"
    d.mkdir()
    (d / "empty.mir").write_bytes(b"")
    shutil.copy(EXAMPLES / "operator_tree.yaml", d / "operator_tree.yaml")
    r = run_cli("tree", str(d), "--out-dir", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr.decode()
    assert b"empty.mir: skipped: this is MIR text" in r.stderr
    assert (tmp_path / "out" / "operator_tree" / "tree.json").exists()
