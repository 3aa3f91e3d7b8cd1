"""One report per call (`--diagnostics`, `--diagnostics-file`, `--strict`): whatever the
number of inputs and whatever the exit code, a machine format is one document on its
stream, every SARIF log valid against the official 2.1.0 schema."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import orjson
import pytest
import yaml

from tests.conftest import EXAMPLES, ROOT, run_cli
from tests.sarif_check import invocation, results, sarif_log, uri_of

BAD = "version: 1\ntargets: [a]\nblocks:\n  - id: x\n    terminator: {kind: goto, successors: [{block: nope}]}\n"
CLEAN = EXAMPLES / "three_targets.yaml"


def _bad(d):
    f = d / "bad.yaml"
    f.write_text(BAD)
    return f


def _warns(d, name="w.body.yaml"):
    """A body whose only finding is a warning (no size cap: unpriceable premium)."""
    doc = yaml.safe_load((EXAMPLES / "seed_split.body.yaml").read_text())
    del doc["size_cap"]
    f = d / name
    f.write_text(yaml.safe_dump(doc))
    return f


# --- SARIF: one log, whatever happens ----------------------------------------------


def test_a_clean_input_still_gets_a_log_with_empty_results():
    r = run_cli("validate", str(CLEAN), "--diagnostics", "sarif")
    assert r.returncode == 0
    log = sarif_log(r.stderr)
    assert results(log) == []
    assert invocation(log) == {"executionSuccessful": True, "exitCode": 0}


def test_a_failing_input_is_one_log_and_nothing_else(tmp_path):
    f = _bad(tmp_path)
    r = run_cli("run", str(f), "--out-dir", str(tmp_path / "out"), "--diagnostics", "sarif")
    assert r.returncode == 3
    log = sarif_log(r.stderr)  # no summary lines after it
    (res,) = results(log)
    assert res["ruleId"] == "invalid-input" and res["level"] == "error"
    assert uri_of(res).endswith("bad.yaml")
    assert res["locations"][0]["physicalLocation"]["region"]["startLine"] == 5
    assert invocation(log)["exitCode"] == 3


def test_a_run_with_warnings_writes_its_log_then_no_summary(tmp_path):
    f = _warns(tmp_path)
    r = run_cli("run", str(f), "--out-dir", str(tmp_path / "out"), "--diagnostics", "sarif")
    assert r.returncode == 0
    (res,) = results(sarif_log(r.stderr))
    assert res["ruleId"] == "unpriceable-premium" and res["level"] == "warning"


def test_quiet_never_drops_a_finding(tmp_path):
    f = _warns(tmp_path)
    r = run_cli("solve", str(f), "-q", "--diagnostics", "sarif")
    assert r.returncode == 0 and orjson.loads(r.stdout)["status"] == "ok"
    (res,) = results(sarif_log(r.stderr))
    assert res["level"] == "warning"
    r = run_cli("solve", str(f), "-q", "--diagnostics", "json")
    (rec,) = [orjson.loads(line) for line in r.stderr.splitlines()]
    assert rec["severity"] == "warning" and rec["code"] == "unpriceable-premium"
    # The streamed text keeps its meaning of --quiet: no warning lines.
    assert run_cli("solve", str(f), "-q").stderr == b""


def _batch_dir(tmp_path, n=25):
    """`n` inputs made from the examples: every fifth broken, every seventh warning."""
    d = tmp_path / "queries"
    d.mkdir()
    broken, warned = [], []
    for i in range(n):
        name = f"q{i:02d}"
        if i % 5 == 3:
            (d / f"{name}.yaml").write_text(BAD)
            broken.append(name)
        elif i % 7 == 6:
            _warns(d, f"{name}.body.yaml")
            warned.append(name)
        else:
            shutil.copy(CLEAN, d / f"{name}.yaml")
    return d, broken, warned


def test_a_directory_of_25_inputs_is_one_log_with_every_inputs_results(tmp_path):
    d, broken, warned = _batch_dir(tmp_path)
    out = tmp_path / "out"
    r = run_cli("run", str(d), "--out-dir", str(out), "-j", "2", "--diagnostics", "sarif")
    assert r.returncode == 3
    log = sarif_log(r.stderr)  # one log: no second log, no table
    got = [(uri_of(res).rsplit("/", 1)[-1].split(".")[0], res["ruleId"]) for res in results(log)]
    assert sorted({name for name, _ in got}) == sorted(broken + warned)
    assert all(code == "invalid-input" for name, code in got if name in broken)
    assert all(code == "unpriceable-premium" for name, code in got if name in warned)
    # Input order, as every report of a batch.
    assert [name for name, _ in got] == sorted(name for name, _ in got)
    assert invocation(log)["exitCode"] == 3
    rows = orjson.loads((out / "summary.json").read_bytes())["rows"]
    assert len(rows) == 25


def test_several_files_and_a_diagnostics_file(tmp_path):
    a, b = _bad(tmp_path), _warns(tmp_path)
    report = tmp_path / "r.sarif"
    r = run_cli(
        "run", str(a), str(b), "--out-dir", str(tmp_path / "out"),
        "--diagnostics", "sarif", "--diagnostics-file", str(report),
    )  # fmt: skip
    assert r.returncode == 3
    log = sarif_log(report.read_bytes())
    assert [res["ruleId"] for res in results(log)][-1] == "unpriceable-premium"
    # stderr keeps the human lines (the table), and no log.
    text = r.stderr.decode()
    assert "worst exit 3" in text and '"version"' not in text


def test_a_usage_error_from_typer_is_a_log(tmp_path):
    r = run_cli("solve", str(CLEAN), "--bogus", "--diagnostics", "sarif")
    assert r.returncode == 2 and r.stdout == b""
    log = sarif_log(r.stderr)  # not typer's usage text
    inv = invocation(log)
    assert results(log) == [] and inv["exitCode"] == 2 and not inv["executionSuccessful"]
    (note,) = inv["toolExecutionNotifications"]
    assert note["descriptor"]["id"] == "usage-error" and "--bogus" in note["message"]["text"]


def test_a_usage_error_of_the_launcher_is_a_log(tmp_path):
    r = run_cli("solve", str(tmp_path / "missing.yaml"), "--diagnostics", "sarif")
    assert r.returncode == 2
    (note,) = invocation(sarif_log(r.stderr))["toolExecutionNotifications"]
    assert note["descriptor"]["id"] == "usage-error" and "no such file" in note["message"]["text"]
    r = run_cli("solve", str(tmp_path / "missing.yaml"), "--diagnostics", "json")
    (rec,) = [orjson.loads(line) for line in r.stderr.splitlines()]
    assert rec["code"] == "usage-error" and rec["severity"] == "error"


def test_both_parsers_give_the_same_report(tmp_path):
    """The fast launcher and typer (a value the launcher leaves to it: `1e1`) report a
    missing input alike."""
    missing = str(tmp_path / "missing.yaml")
    fast = run_cli("solve", missing, "--diagnostics", "sarif", "--time-limit", "10")
    slow = run_cli("solve", missing, "--diagnostics", "sarif", "--time-limit", "1e1")
    assert fast.returncode == slow.returncode == 2
    assert fast.stderr == slow.stderr
    sarif_log(fast.stderr)


def test_a_file_system_error_is_a_log(tmp_path):
    target = tmp_path / "no" / "such" / "dir" / "solve.json"
    r = run_cli("solve", str(CLEAN), "-o", str(target), "--diagnostics", "sarif")
    assert r.returncode == 6
    inv = invocation(sarif_log(r.stderr))
    (note,) = inv["toolExecutionNotifications"]
    assert note["descriptor"]["id"] == "io-error" and str(target) in note["message"]["text"]
    assert not inv["executionSuccessful"] and inv["exitCode"] == 6
    assert not target.parent.exists()


def test_rules_carry_their_text_and_no_relative_help_uri(tmp_path):
    log = sarif_log(run_cli("validate", str(_bad(tmp_path)), "--diagnostics", "sarif").stderr)
    (rule,) = log["runs"][0]["tool"]["driver"]["rules"]
    assert "helpUri" not in rule
    assert rule["id"] == "invalid-input" and rule["fullDescription"]["text"]


# --- json and github: only their lines on the stream ----------------------------------


@pytest.mark.parametrize("fmt", ["json", "github"])
def test_machine_lines_only_on_stderr(tmp_path, fmt):
    d, broken, warned = _batch_dir(tmp_path, 8)
    r = run_cli("run", str(d), "--out-dir", str(tmp_path / "out"), "--diagnostics", fmt)
    lines = r.stderr.decode().splitlines()
    assert lines
    if fmt == "json":
        recs = [json.loads(line) for line in lines]  # every line is JSON: no table
        assert {rec["file"].rsplit("/", 1)[-1].split(".")[0] for rec in recs} == set(
            broken + warned
        )
    else:
        assert all(line.startswith(("::error ", "::warning ")) for line in lines), lines
    single = run_cli(
        "run", str(_warns(tmp_path)), "--out-dir", str(tmp_path / "o1"), "--diagnostics", fmt
    )
    assert len(single.stderr.decode().splitlines()) == 1  # the warning, no summary lines


def test_diagnostics_file_leaves_stdout_to_the_artifact(tmp_path):
    f = _warns(tmp_path)
    report = tmp_path / "r.jsonl"
    r = run_cli("solve", str(f), "--diagnostics", "json", "--diagnostics-file", str(report))
    assert orjson.loads(r.stdout)["status"] == "ok"
    (rec,) = [orjson.loads(line) for line in report.read_bytes().splitlines()]
    assert rec["code"] == "unpriceable-premium"
    clean = tmp_path / "clean.jsonl"
    assert (
        run_cli(
            "validate", str(CLEAN), "--diagnostics", "json", "--diagnostics-file", str(clean)
        ).returncode
        == 0
    )
    assert clean.read_bytes() == b""  # written, and empty: nothing found


# --- --strict -------------------------------------------------------------------------


def test_strict_makes_a_warning_exit_3_and_says_how_many(tmp_path):
    f = _warns(tmp_path)
    out = tmp_path / "out"
    plain = run_cli("run", str(f), "--out-dir", str(out))
    assert plain.returncode == 0 and plain.stderr.decode().splitlines()[-1] == "1 warning"
    strict = run_cli("run", str(f), "--out-dir", str(out), "--strict")
    assert strict.returncode == 3
    text = strict.stderr.decode()
    assert text.startswith("error: unpriceable-premium: ") and "[--strict]" in text
    assert text.splitlines()[-1] == "1 warning (--strict: exit 3)"
    assert (out / "solve.json").exists()  # the artifacts are still written
    log = sarif_log(run_cli("solve", str(f), "--strict", "-q", "--diagnostics", "sarif").stderr)
    assert results(log)[0]["level"] == "error" and invocation(log)["exitCode"] == 3
    assert run_cli("validate", str(CLEAN), "--strict").returncode == 0


def test_strict_from_the_project_configuration(tmp_path):
    f = _warns(tmp_path)
    (tmp_path / "placement.toml").write_text("strict = true\n")
    assert run_cli("solve", str(f), "-q").returncode == 3
    assert run_cli("solve", str(f), "-q", "--no-config").returncode == 0
    (tmp_path / "placement.toml").write_text('strict = "yes"\n')
    r = run_cli("solve", str(f), "-q")
    assert r.returncode == 3 and "strict: expected true or false" in r.stderr.decode()


def test_strict_in_a_batch(tmp_path):
    d, broken, warned = _batch_dir(tmp_path, 8)
    out = tmp_path / "out"
    r = run_cli("run", str(d), "--out-dir", str(out), "--strict")
    assert r.returncode == 3
    assert r.stderr.decode().splitlines()[-1].endswith("1 warning (--strict: exit 3)")
    rows = {row["name"]: row for row in orjson.loads((out / "summary.json").read_bytes())["rows"]}
    (w,) = warned
    assert rows[w]["status"] == "warnings" and rows[w]["exit"] == 3 and rows[w]["warnings"] == 1
    assert "[--strict]" in rows[w]["message"] and rows[w]["cost"] == 41


# --- small things ---------------------------------------------------------------------


def test_summary_rows_of_failed_inputs_say_why(tmp_path):
    d, broken, _ = _batch_dir(tmp_path, 5)
    out = tmp_path / "out"
    # A stale artifact from an earlier run must not be read as this input's result.
    (out / broken[0]).mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "goldens" / "three_targets" / "solve.json", out / broken[0])
    run_cli("run", str(d), "--out-dir", str(out))
    rows = {row["name"]: row for row in orjson.loads((out / "summary.json").read_bytes())["rows"]}
    bad = rows[broken[0]]
    assert bad["status"] == "invalid" and bad["exit"] == 3 and "cost" not in bad
    assert bad["message"].endswith("blocks[0].terminator.successors[0].block: unknown block 'nope'")
    assert rows["q00"]["status"] == "ok" and "message" not in rows["q00"]


def test_output_and_out_dir_together_is_a_usage_error(tmp_path):
    r = run_cli(
        "solve", str(CLEAN), "-o", str(tmp_path / "a.json"), "--out-dir", str(tmp_path / "d")
    )
    assert r.returncode == 2
    assert "-o/--output and --out-dir cannot be used together" in r.stderr.decode()
    assert not (tmp_path / "a.json").exists() and not (tmp_path / "d").exists()


def test_output_never_creates_folders(tmp_path):
    target = tmp_path / "missing" / "solve.json"
    r = run_cli("solve", str(CLEAN), "-o", str(target))
    assert r.returncode == 6
    assert r.stderr.decode() == f"placement: {target}: no such directory: {target.parent}\n"
    assert not target.parent.exists()
    # --out-dir makes its own folders, for one input and for a batch.
    assert run_cli("run", str(CLEAN), "--out-dir", str(tmp_path / "a" / "b")).returncode == 0
    r = run_cli("solve", str(CLEAN), str(CLEAN), "--out-dir", str(tmp_path / "c" / "d"))
    assert r.returncode == 0 and (tmp_path / "c" / "d" / "three_targets" / "solve.json").exists()


def test_a_symlink_loop_at_output_is_exit_6_and_stays(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.symlink_to(b)
    b.symlink_to(a)
    r = run_cli("solve", str(CLEAN), "-o", str(a))
    assert r.returncode == 6
    assert r.stderr.decode().startswith(f"placement: {a}: ")
    assert a.is_symlink() and b.is_symlink()


def test_diff_prints_json_values(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_bytes(run_cli("solve", str(CLEAN)).stdout)
    b.write_bytes(run_cli("solve", str(CLEAN), "--pin", "bb2=embedding").stdout)
    text = run_cli("diff", str(a), str(b)).stdout.decode()
    assert "None" not in text and "{'" not in text
    assert (
        'constraints: null -> {"forbids":[],"pins":{"bb2":"embedding"},"warm_start":null}' in text
    )
    assert 'cost: {"blocks":70,"edges":32,"total":102} -> null' in text


def test_no_config_help_names_no_source_file():
    text = subprocess.run(
        [sys.executable, "-m", "placement_cli", "solve", "--help"], capture_output=True, cwd=ROOT
    ).stdout.decode()
    assert "--no-config" in text and ".py" not in text.split("--no-config", 1)[1].split("--", 1)[0]
