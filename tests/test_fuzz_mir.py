"""The fast slice of the MIR reader's fuzz campaign (`python -m tests.fuzz.mir --long`,
in `make fuzz`, is the long one): mutated real `.mir` files through `placement lower`
and `placement run` as whole processes must end 0, 3, 4 or 5 without a traceback or a
hang, and every line of an exit-3 message must say `FILE:LINE:COL:`."""

from __future__ import annotations

import os

import pytest

from tests.fuzz.child import Config
from tests.fuzz.mir import COMMANDS, KINDS, MirFuzzer, judge_mir, mutate

FAST_SEED = 1126
PER_COMMAND = int(os.environ.get("PLACEMENT_FUZZ_FAST", "20"))


@pytest.fixture(scope="module")
def fuzzer(tmp_path_factory) -> MirFuzzer:
    return MirFuzzer(
        Config(time_limit=1.0, hang_seconds=60.0), FAST_SEED, tmp_path_factory.mktemp("m")
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_mir_fuzz_fast_slice(fuzzer, command):
    outcomes = [fuzzer.run(command, i) for i in range(PER_COMMAND)]
    assert {o.kind for o in outcomes} == set(KINDS)  # every mutation was tried
    assert any(o.code == 3 for o in outcomes) and any(o.code == 0 for o in outcomes)
    bad = [
        f"[{c}] {o.kind} #{o.index}: {s}\n  {o.args}\n  {o.stderr[-300:]!r}"
        for o in outcomes
        for c, s in o.findings
    ]
    assert not bad, "\n".join(bad)


def test_mir_fuzz_text_that_reads_but_does_not_check(fuzzer):
    """The `locals` mutation (a renumbered local, a block argument more or less, a field
    past a tuple's end) reaches `lower`'s checks: their problems are at MIR positions."""
    n = len(KINDS)
    at = KINDS.index("locals")
    outcomes = [fuzzer.run("lower", at + n * k) for k in range(16)]
    assert {o.kind for o in outcomes} == {"locals"}
    assert sum(o.code == 3 for o in outcomes) >= 4
    bad = [f"[{c}] #{o.index}: {s}\n  {o.stderr[-300:]!r}" for o in outcomes for c, s in o.findings]
    assert not bad, "\n".join(bad)


def test_the_mutations_are_reproducible_and_change_the_text():
    for kind in KINDS:
        a, b = mutate(kind, 3, FAST_SEED), mutate(kind, 3, FAST_SEED)
        assert a == b and a[0]


def test_judge_mir_wants_a_position_on_every_exit_3_line():
    ok = b"q.mir:3:9: expected '='\nq.mir:4:1: {f} bb1: local '%3' is used before it is defined\n"
    assert judge_mir(3, ok, "q.mir", []) == []
    assert judge_mir(3, b"q.mir: empty file\n", "q.mir", []) == []  # blanks only: no position
    for bad in (
        b"q.mir: bodies[1].blocks[0].args: block 'bb3' takes 1 argument(s), got 2\n",
        b"q.mir:3:9: expected '='\nq.mir: bodies[0]: unknown field\n",
        b"q.mir:3:9: no newline at the end",
    ):
        assert [c for c, _ in judge_mir(3, bad, "q.mir", [])] == ["no-position"], bad
    # the shared judge's looser line rule gives way to this one; other findings stay
    assert judge_mir(3, ok, "q.mir", [("bad-error-line", "x"), ("internal", "y")]) == [
        ("internal", "y")
    ]
    assert judge_mir(0, b"", "q.mir", []) == []
