"""Project configuration (`placement_cli/app/config.py`): defaults from placement.toml or
[tool.placement], found from the input upwards; the command line wins; --no-config."""

from __future__ import annotations

import shutil

import orjson

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


def test_bad_settings_are_usage_errors_naming_the_file(tmp_path):
    for text, words in [
        ('method = "fastest"\n', b"expected one of auto, exact, heuristic"),
        ("time-limit = -1\n", b"expected a number >= 0"),
        ('output = "x.json"\n', b"not a setting"),
        ("method = \n", b"not a readable TOML file"),
    ]:
        plan = _project(tmp_path, text)
        r, _ = _solve(plan)
        assert r.returncode == 2, (text, r.stderr)
        assert b"placement.toml" in r.stderr and words in r.stderr, r.stderr
        shutil.rmtree(tmp_path / "queries")


def test_a_setting_another_command_has_is_ignored(tmp_path):
    plan = _project(tmp_path, 'split = "per-statement"\n')  # lower's, not prune's
    r = run_cli("prune", str(plan), "-q")
    assert r.returncode == 0, r.stderr


def test_the_artifact_records_the_configuration_it_was_made_under(tmp_path):
    plan = _project(tmp_path, 'method = "heuristic"\ntime-limit = 2\n')
    r, art = _solve(plan, "--time-limit", "3")
    assert art["config"] == {
        "file": str(tmp_path / "placement.toml"),
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
