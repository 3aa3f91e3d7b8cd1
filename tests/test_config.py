"""Project configuration (`placement_cli/app/config.py`): defaults from placement.toml or
[tool.placement], found from the input upwards; the command line wins; --no-config."""

from __future__ import annotations

import shutil

import orjson
import pytest

from tests.conftest import EXAMPLES, run_cli


def _project(tmp_path, text: str, name: str = "placement.toml"):
    (tmp_path / name).write_text(text)
    sub = tmp_path / "queries" / "deep"
    sub.mkdir(parents=True)
    shutil.copy(EXAMPLES / "three_targets.yaml", sub / "q.yaml")
    return sub / "q.yaml"


def _solve(plan, *args):
    r = run_cli("solve", str(plan), "-q", *args)
    return r, (orjson.loads(r.stdout) if r.returncode == 0 and r.stdout[:1] == b"{" else None)


def test_format_from_a_placement_toml_above_the_input(tmp_path):
    plan = _project(tmp_path, 'format = "yaml"\n')
    r, _ = _solve(plan)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(b"format_version:") or b"kind: solve" in r.stdout  # YAML, not JSON
    r, art = _solve(plan, "--format", "json")  # the command line wins
    assert art is not None and art["kind"] == "solve"
    r, art = _solve(plan, "--no-config")
    assert art is not None


def test_pyproject_table_and_heuristic_method(tmp_path):
    plan = _project(
        tmp_path,
        '[project]\nname = "x"\n\n[tool.placement]\nmethod = "heuristic"\n',
        "pyproject.toml",
    )
    _, configured = _solve(plan)
    _, exact = _solve(plan, "--method", "exact")
    assert configured["solve"]["method"] == "heuristic", configured["solve"]
    assert exact["solve"]["method"] == "exact"


def test_a_pyproject_without_the_table_is_passed_over(tmp_path):
    plan = _project(tmp_path, '[project]\nname = "x"\n', "pyproject.toml")
    r, art = _solve(plan)
    assert art is not None  # JSON: nothing configured


def test_bad_settings_are_invalid_input_naming_the_file(tmp_path):
    for text, words in [
        ('method = "fastest"\n', b"expected one of auto, exact, heuristic"),
        ("time-limit = -1\n", b"expected a number >= 0"),
        ('output = "x.json"\n', b"not a setting"),
        ("method = \n", b"not a readable TOML file"),
    ]:
        plan = _project(tmp_path, text)
        r, _ = _solve(plan)
        assert r.returncode == 3, (text, r.stderr)  # the input's configuration is invalid
        assert b"placement.toml" in r.stderr and words in r.stderr, r.stderr
        shutil.rmtree(tmp_path / "queries")


def test_a_setting_another_command_has_is_ignored(tmp_path):
    plan = _project(tmp_path, 'split = "per-statement"\n')  # lower's, not prune's
    r = run_cli("prune", str(plan), "-q")
    assert r.returncode == 0, r.stderr


def test_the_artifact_records_the_configuration_it_was_made_under(tmp_path):
    plan = _project(tmp_path, 'method = "heuristic"\ntime-limit = 2\n')
    r, art = _solve(plan, "--time-limit", "3")
    assert art["config"] == {  # the file by its name: no path in an artifact
        "file": "placement.toml",
        "settings": {"method": "heuristic"},
    }
    out = tmp_path / "solve.json"
    out.write_bytes(r.stdout)
    assert run_cli("validate", str(out)).returncode == 0  # the record reads back
    _, plain = _solve(plan, "--no-config")
    assert "config" not in plain
    run_cli("run", str(plan), "-q", "--out-dir", str(tmp_path / "out"))
    for stage in ("prune", "islands"):
        rec = orjson.loads((tmp_path / "out" / f"{stage}.json").read_bytes())["config"]
        assert rec["settings"] == {"method": "heuristic", "time_limit": 2.0}


def test_diff_reports_a_difference_in_recorded_settings(tmp_path):
    plan = _project(tmp_path, "time-limit = 3\n")
    a, b, c = (tmp_path / n for n in ("a.json", "b.json", "c.json"))
    a.write_bytes(_solve(plan)[0].stdout)
    (tmp_path / "placement.toml").write_text("time-limit = 4\n")
    b.write_bytes(_solve(plan)[0].stdout)
    c.write_bytes(_solve(plan, "--no-config")[0].stdout)
    same = run_cli("diff", str(a), str(a))
    assert same.returncode == 0, same.stderr
    r = run_cli("diff", str(a), str(b))
    assert r.returncode == 7, r.stdout  # same placement, made under other settings
    assert "setting changed: time_limit 3 -> 4" in r.stdout.decode(), r.stdout
    r = run_cli("diff", str(a), str(c), "--format", "json")
    assert r.returncode == 7, r.stdout
    assert orjson.loads(r.stdout)["config"] == {
        "file": {"a": "placement.toml", "b": None},
        "settings": [{"path": ["time_limit"], "a": 3, "b": None}],
    }


def _configured_inputs(tmp_path):
    """Inputs in folders with configurations of their own: good (heuristic), bad (a key
    no command has), yaml (a pyproject table), none (no configuration), and good/sub,
    which inherits good's."""
    root = tmp_path / "in"
    for d, cfg, name, example in [
        (
            "good",
            ("placement.toml", 'method = "heuristic"\ntime-limit = 3\n'),
            "q.mir",
            "web_filter.mir",
        ),
        (
            "bad",
            ("placement.toml", 'method = "heuristic"\nfastest = true\n'),
            "q.mir",
            "web_filter.mir",
        ),
        (
            "yaml",
            ("pyproject.toml", '[tool.placement]\nformat = "yaml"\nsplit = "intersection"\n'),
            "s.body.yaml",
            "seed_split.body.yaml",
        ),
        ("none", None, "t.yaml", "three_targets.yaml"),
        ("good/sub", None, "n.yaml", "nested_loops.yaml"),
    ]:
        (root / d).mkdir(parents=True)
        if cfg:
            (root / d / cfg[0]).write_text(cfg[1])
        shutil.copy(EXAMPLES / example, root / d / name)
    files = [
        str(root / p)
        for p in ("good/q.mir", "bad/q.mir", "yaml/s.body.yaml", "none/t.yaml", "good/sub/n.yaml")
    ]
    return root, files


def _single(command, path, out):
    """One input alone: (exit code, {file name: bytes}) of what it wrote."""
    if command == "run":
        r = run_cli("run", path, "-q", "--out-dir", str(out))
    else:
        out.mkdir(parents=True)
        r = run_cli(command, path, "-q", "-o", str(out / "artifact"))
    files = {f.name: f.read_bytes() for f in sorted(out.iterdir())} if out.exists() else {}
    if command != "run":
        files = {f"{command}.{'json' if b.startswith(b'{') else 'yaml'}": b for b in files.values()}
    return r.returncode, files


def _batch(command, args, out):
    """A batch: (exit, {input: (exit code, {file name: bytes})})."""
    r = run_cli(command, *args, "-q", "--out-dir", str(out), "-j", "2")
    rows = orjson.loads((out / "summary.json").read_bytes())["rows"]
    got = {}
    for row in rows:
        folder = out / row["name"]
        files = (
            {f.name: f.read_bytes() for f in sorted(folder.iterdir())} if folder.exists() else {}
        )
        got[row["input"]] = (row["exit"], files)
    return r.returncode, got


@pytest.mark.parametrize("command", ["solve", "run"])
def test_each_input_of_a_batch_is_configured_as_it_is_alone(tmp_path, command):
    root, files = _configured_inputs(tmp_path)
    alone = {f: _single(command, f, tmp_path / "alone" / str(i)) for i, f in enumerate(files)}
    assert alone[files[1]][0] == 3 and alone[files[1]][1] == {}  # the bad key: its input's error
    assert alone[files[0]][0] == 0 and b'"heuristic"' in alone[files[0]][1]["solve.json"]
    assert (
        alone[files[2]][0] == 0
        and f"{command if command != 'run' else 'solve'}.yaml" in alone[files[2]][1]
    )
    for label, args in [
        ("in order", files),
        ("reversed", files[::-1]),
        ("good then bad", files[:2]),
        ("bad then good", files[1::-1]),
        ("a directory", [str(root)]),
    ]:
        code, got = _batch(command, args, tmp_path / "batch" / label.replace(" ", "-"))
        assert code == max(alone[f][0] for f in got), label
        for f, result in got.items():
            assert result == alone[f], (label, f, result[0], alone[f][0])
        assert set(got) == set(files if label == "a directory" else args), label
