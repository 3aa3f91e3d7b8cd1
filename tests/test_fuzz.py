"""The fast slice of the fuzz campaign (`python -m tests.fuzz` is the long one).

Hostile inputs of every kind through every command of the real CLI: each run must end
with exit 0, 3, 4 or 5, no traceback, within the wall limit and the memory limit, with
well-formed error lines, and a failed run must leave no output file. Nothing is
expected to fail here: a finding is a bug to fix, wherever it is.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fuzz import keys
from tests.fuzz.campaign import COMMANDS, Fuzzer, kinds_for
from tests.fuzz.child import Config
from tests.fuzz.judge import judge, report

FAST_SEED = 1126
PER_COMMAND = int(os.environ.get("PLACEMENT_FUZZ_FAST", "18"))


@pytest.fixture(scope="module")
def fuzzer(tmp_path_factory) -> Fuzzer:
    return Fuzzer(
        Config(time_limit=1.0, hang_seconds=60.0), FAST_SEED, tmp_path_factory.mktemp("fuzz")
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_fuzz_fast_slice(fuzzer, command):
    outcomes = [fuzzer.run(command, i) for i in range(PER_COMMAND)]
    assert {o.kind for o in outcomes} == set(kinds_for(command))  # every kind was tried
    bad = [o for o in outcomes if o.findings]
    assert not bad, report(bad)


# Artifacts with a top-level key dropped, renamed, mistyped or duplicated, through every
# command that reads an artifact: exit 3 naming the key, or (a key twice) exactly what
# the document with its last value gives.
KEY_COMMANDS = [c for c in COMMANDS if "keys" in kinds_for(c)]


@pytest.mark.parametrize("command", KEY_COMMANDS)
def test_fuzz_artifact_keys(tmp_path_factory, command):
    fz = Fuzzer(
        Config(time_limit=1.0, hang_seconds=60.0),
        FAST_SEED,
        tmp_path_factory.mktemp("k"),
        ("keys",),
    )
    outcomes = [fz.run(command, i) for i in range(8)]
    assert {o.kind for o in outcomes} == {"keys"}
    bad = [o for o in outcomes if o.findings]
    assert not bad, report(bad)


def test_the_key_checks_can_fail():
    dropped = keys.Expect("dropped", "plan", names=("plan",))
    assert keys.check(dropped, 3, b"a.json: plan: required field is missing\n") == []
    assert [c for c, _ in keys.check(dropped, 1, b"KeyError: 'plan'\n")] == ["key-accepted"]
    assert [c for c, _ in keys.check(dropped, 3, b"a.json: version: missing\n")] == ["key-unnamed"]
    assert keys.check(keys.Expect("dropped", "config"), 0, b"") == []  # optional: fine
    # Every required key of a solve artifact is known as such.
    assert keys.required({"kind": "solve"}) >= {"plan", "prune", "scc", "solve", "status"}


def test_fork_and_spawn_agree(tmp_path):
    # The fork server is a shortcut: a fresh interpreter gives the same exit codes.
    fork = Fuzzer(Config(), FAST_SEED, tmp_path / "f")
    spawn = Fuzzer(Config(spawn=True), FAST_SEED, tmp_path / "s")
    for command, index in (("validate", 3), ("solve", 0), ("tree", 1), ("run", 5)):
        a, b = fork.run(command, index), spawn.run(command, index)
        assert (a.kind, a.code, a.findings) == (b.kind, b.code, b.findings)


# The judge must be able to fail: each broken rule is caught.


def test_judge_flags_internal_errors_and_tracebacks(tmp_path):
    err = b"Traceback (most recent call last):\n  File x\nKeyError: 'code'\n"
    got = judge("solve", 1, b"", err, False, "p.json", tmp_path / "a.json", None, "json")
    assert ("traceback", "KeyError: …") in got and ("internal", "KeyError: …") in got


def test_judge_flags_hangs_signals_and_unexpected_codes(tmp_path):
    assert judge("solve", -9, b"", b"", True, "p", None, None, "json")[0][0] == "hang"
    assert judge("solve", -11, b"", b"", False, "p", None, None, "json")[0][0] == "signal"
    assert (
        judge("solve", 6, b"", b"placement: x: Is a directory\n", False, "p", None, None, "json")[
            0
        ][0]
        == "exit-6"
    )


def test_judge_flags_partial_outputs(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "prune.json").write_bytes(b"{}")
    got = judge("run", 3, b"", b"p: bad\n", False, "p", None, out, "json")
    assert [c for c, _ in got] == ["partial-output"]
    got = judge("solve", 3, b"", b"p: bad\n", False, "p", out / "prune.json", None, "json")
    assert [c for c, _ in got] == ["partial-output"]


def test_judge_flags_split_error_lines_and_false_answers(tmp_path):
    got = judge(
        "validate", 3, b"", b"p: blocks[0].id: bad 'a\nfake: ok'\n", False, "p", None, None, "json"
    )
    assert [c for c, _ in got] == ["bad-error-line"]
    art = Path(tmp_path / "a.json")
    art.write_bytes(
        b'{"status": "ok", "kind": "solve", "solve": {"cost": {"total": null}, "lower_bound": null}}'
    )
    got = judge("solve", 0, b"", b"", False, "p", art, None, "json")
    assert [c for c, _ in got] == ["false-answer", "false-answer"]
    got = judge("solve", 4, b"", b"", False, "p", art, None, "json")
    assert [c for c, _ in got][0] == "status-mismatch"


def test_judge_accepts_a_clean_run(tmp_path):
    art = tmp_path / "a.json"
    art.write_bytes(
        b'{"status": "ok", "kind": "solve", "solve": {"cost": {"total": 3}, "lower_bound": 3}}'
    )
    assert judge("solve", 0, b"", b"", False, "p", art, None, "json") == []
    assert (
        judge("validate", 3, b"", b"p: x: bad\np: y: bad\n", False, "p", None, None, "json") == []
    )


def test_judge_holds_lower_to_a_valid_plan(tmp_path):
    # What `lower` writes is loaded as `validate` would: a plan that does not hold is a
    # finding even though the run ended 0.
    out = tmp_path / "a.json"
    out.write_bytes(
        b'{"version": 1, "targets": ["t0"], "blocks": [{"id": "b0", "terminator": {"kind": "goto"}}]}'
    )
    got = judge("lower", 0, b"", b"", False, "body.yaml", out, None, "json")
    assert [c for c, _ in got] == ["invalid-output"]
    out.write_bytes(b"[1")
    assert [c for c, _ in judge("lower", 0, b"", b"", False, "body.yaml", out, None, "json")] == [
        "invalid-output"
    ]
    out.write_bytes(
        b'{"version": 1, "targets": ["t0"], "blocks": [{"id": "b0", "terminator": {"kind": "return"}}]}'
    )
    assert judge("lower", 0, b"", b"", False, "body.yaml", out, None, "json") == []


def test_judge_knows_the_views_exits(tmp_path):
    out = tmp_path / "a.txt"
    out.write_bytes(b"3 blocks moved\n")
    # `diff` says 7 for "different", and names either of its files in an error.
    assert judge("diff", 7, b"", b"", False, "a.json", out, None, "text") == []
    assert (
        judge("diff", 3, b"", b"b.json: kind: wrong\n", False, "a.json", None, None, "text") == []
    )
    assert [c for c, _ in judge("solve", 7, b"", b"x\n", False, "p", None, None, "json")] == [
        "exit-7"
    ]
    # `explain` says 2 only for a block the plan does not have.
    err = b"placement: unknown block 'zz' (the plan's blocks: bb0)\n"
    none = tmp_path / "none.txt"  # a failed run writes nothing
    assert judge("explain", 2, b"", err, False, "p", none, None, "text") == []
    got = judge(
        "explain", 2, b"", b"placement: no such option: --x\n", False, "p", none, None, "text"
    )
    assert [c for c, _ in got] == ["exit-2"]
    # A view's output is text, not an artifact with a status.
    assert judge("show", 0, b"", b"", False, "p", out, None, "text") == []
    out.unlink()
    assert [c for c, _ in judge("show", 0, b"", b"", False, "p", out, None, "text")] == [
        "missing-output"
    ]


def test_a_campaign_prints_each_finding_once_with_its_example(tmp_path, capsys):
    # Both campaigns (`python -m tests.fuzz`, `python -m tests.fuzz.mir`) report this way.
    from tests.fuzz.judge import Outcome
    from tests.fuzz.report import print_findings

    hang = [("hang", "no exit in 30 s")]
    outcomes = [
        Outcome("run", "mixed", 1, 3, 0.1),
        Outcome("run", "mixed", 2, -9, 30.0, hang, b"a", ".mir", ("run", "a.mir"), "late"),
        Outcome("run", "mixed", 3, -9, 30.0, hang, b"b", ".mir", ("run", "b.mir"), "late"),
        Outcome("lower", "stray", 4, 1, 0.1, [("internal", "KeyError")], b"c", "", ("lower",)),
    ]
    assert print_findings(outcomes, tmp_path / "f", "clean") == 1
    out = capsys.readouterr().out
    assert out.splitlines()[2:] == [
        "  1. [hang] run / mixed x2: no exit in 30 s  (001-hang-run-mixed.mir)",
        "  2. [internal] lower / stray x1: KeyError  (002-internal-lower-stray.bin)",
    ]
    assert (tmp_path / "f" / "001-hang-run-mixed.mir").read_bytes() == b"a"  # the first example
    assert (tmp_path / "f" / "001-hang-run-mixed.mir.txt").read_text() == (
        "placement run a.mir\nexit -9\n\nlate\n"
    )
    assert print_findings(outcomes[:1], tmp_path / "g", "clean") == 0
    assert capsys.readouterr().out == "clean\n" and not (tmp_path / "g").exists()
