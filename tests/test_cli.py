"""Command-line conventions shared by every stage."""

from __future__ import annotations

import os
import stat

import orjson
import pytest
import yaml
from typer.testing import CliRunner

from placement_cli.app.cli import app, application
from placement_cli.app.commands import NAMES
from placement_cli.pipeline.registry import STAGES
from tests.conftest import ROOT, run_cli

EX = "examples/three_targets.yaml"


def test_output_file_has_normal_permissions(tmp_path):
    out = tmp_path / "a.json"
    old = os.umask(0o022)
    try:
        r = run_cli("prune", EX, "-o", str(out))
    finally:
        os.umask(old)
    assert r.returncode == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


def test_yaml_output_matches_json():
    j = run_cli("scc", EX)
    y = run_cli("scc", EX, "--format", "yaml")
    assert j.returncode == y.returncode == 0
    assert yaml.safe_load(y.stdout) == orjson.loads(j.stdout)


def test_no_summary_when_stderr_is_not_a_terminal():
    r = run_cli("scc", EX)
    assert r.returncode == 0
    assert r.stderr == b""


def test_run_writes_every_stage(tmp_path):
    r = run_cli("run", EX, "--out-dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    for stage in STAGES:
        art = orjson.loads((tmp_path / f"{stage}.json").read_bytes())
        assert art["kind"] == stage and art["status"] == "ok"
    assert b"islands" in r.stderr  # the summary is shown for `run`


def test_run_yaml(tmp_path):
    r = run_cli("run", EX, "--out-dir", str(tmp_path), "--format", "yaml", "--quiet")
    assert r.returncode == 0 and r.stderr == b""
    assert yaml.safe_load((tmp_path / "islands.yaml").read_text())["kind"] == "islands"


def test_infeasible_plan_exit_4_with_artifacts(tmp_path):
    r = run_cli("run", "examples/no_target.yaml", "--out-dir", str(tmp_path))
    assert r.returncode == 4
    for stage in STAGES:
        art = orjson.loads((tmp_path / f"{stage}.json").read_bytes())
        assert art["status"] == "infeasible"
        assert any(d["severity"] == "error" and "bb1" in d["blocks"] for d in art["diagnostics"])


def test_internal_error_is_one_line_unless_debug(monkeypatch):
    import placement_cli.pipeline.stages.scc as scc_mod

    def boom(*a, **k):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(scc_mod, "scc", boom)
    runner = CliRunner()
    r = runner.invoke(app, ["scc", str(ROOT / EX)])
    assert r.exit_code == 1
    assert "internal error: RuntimeError: kaboom" in r.output
    assert "Traceback" not in r.output
    r = runner.invoke(app, ["scc", str(ROOT / EX), "--debug"])
    assert r.exit_code == 1
    assert "Traceback" in r.output


def test_stdin_input():
    data = (ROOT / EX).read_bytes()
    r = run_cli("prune", "-", stdin=data)
    assert r.returncode == 0
    assert orjson.loads(r.stdout)["kind"] == "prune"


@pytest.mark.parametrize("name", NAMES)
def test_a_command_alone_prints_and_refuses_as_the_whole_application(name):
    """`launch.dispatch` gives typer only the command a line names (`cli.application`):
    its help and its usage errors are the whole application's, byte for byte."""
    runner = CliRunner()
    words = name.split()  # `calibrate measure`: a subcommand of its group
    alone, whole = application(words[0]), application()
    for args in ([*words, "--help"], [*words, "--bogus"], [*words, "-h", "--format", "xml"]):
        a = runner.invoke(alone, args, prog_name="placement")
        w = runner.invoke(whole, args, prog_name="placement")
        assert (a.exit_code, a.output) == (w.exit_code, w.output), args
    built = [c.name for c in alone.registered_commands] + [
        f"{g.name} {c.name}"
        for g in alone.registered_groups
        for c in g.typer_instance.registered_commands
    ]
    assert name in built and all(b == name or b.split()[0] == words[0] for b in built)
