"""Pins, forbids and the warm start are recorded in the solve section (`constraints`):
`optimal` there means optimal under them, `validate` holds the assignment to them, and
`explain`, `diff` and `show` say so."""

from __future__ import annotations

import orjson

from placement_cli.algorithms.solve.options import warm_start_id
from tests.conftest import EXAMPLES, run_cli

PLAN = str(EXAMPLES / "three_targets.yaml")


def _solve(tmp_path, name, *args):
    out = tmp_path / name
    r = run_cli("solve", PLAN, "-q", "-o", str(out), *args)
    assert r.returncode == 0, r.stderr
    return out, orjson.loads(out.read_bytes())


def test_the_section_records_what_it_was_solved_under(tmp_path):
    free, art = _solve(tmp_path, "free.json")
    assert "constraints" not in art["solve"]  # nothing given: nothing written (goldens hold)
    pinned, art = _solve(
        tmp_path, "pinned.json", "--pin", "bb0=interpreter", "--forbid", "bb3=embedding"
    )
    con = art["solve"]["constraints"]
    assert con == {
        "pins": {"bb0": "interpreter"},
        "forbids": [{"block": "bb3", "target": "embedding"}],
        "warm_start": None,
    }
    assert art["solve"]["optimal"] and art["solve"]["assignment"]["bb0"] == "interpreter"
    _, warm = _solve(tmp_path, "warm.json", "--warm-start", str(free))
    # The warm start by the assignment it provided, not by the path of its file.
    assert warm["solve"]["constraints"]["warm_start"] == warm_start_id(
        tuple(orjson.loads(free.read_bytes())["solve"]["assignment"].items())
    )
    assert run_cli("validate", str(pinned)).returncode == 0


def test_validate_holds_the_assignment_to_the_recorded_pins(tmp_path):
    pinned, art = _solve(tmp_path, "pinned.json", "--pin", "bb0=interpreter")
    art["solve"]["constraints"]["pins"] = {"bb0": "postgres"}
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps(art))
    r = run_cli("validate", str(bad))
    assert r.returncode == 3
    assert (
        b"solve.constraints.pins: the section pins bb0=postgres, but its assignment puts bb0 on interpreter"
        in r.stderr
    )
    art["solve"]["constraints"]["pins"] = {"nosuch": "postgres"}
    bad.write_bytes(orjson.dumps(art))
    assert b"unknown block 'nosuch'" in run_cli("validate", str(bad)).stderr


def test_explain_is_optimal_under_the_pins_and_finds_nothing_cheaper(tmp_path):
    free, free_art = _solve(tmp_path, "free.json")
    pinned, art = _solve(tmp_path, "pinned.json", "--pin", "bb0=interpreter")
    assert art["solve"]["cost"]["total"] > free_art["solve"]["cost"]["total"]  # the pin costs
    r = run_cli("explain", str(pinned), "bb1", "--format", "json")
    ex = orjson.loads(r.stdout)
    total = art["solve"]["cost"]["total"]
    for row in ex["targets"]:
        p = row["pinned"]
        if p and p["proven"] and p["total"] is not None:
            assert p["total"] >= total - 1e-9, row  # every pinned solve keeps bb0's pin
    text = run_cli("explain", str(pinned), "bb0").stdout.decode()
    assert "proven optimal under --pin bb0=interpreter" in text
    assert "the solve pinned the block to 'interpreter'" in text


def test_diff_and_show_say_the_pins(tmp_path):
    free, _ = _solve(tmp_path, "free.json")
    pinned, _ = _solve(tmp_path, "pinned.json", "--pin", "bb0=interpreter")
    d = orjson.loads(run_cli("diff", str(free), str(pinned), "--format", "json").stdout)
    assert d["same"] is False
    assert "constraints" in orjson.dumps(d).decode()
    shown = run_cli("show", str(pinned), "--format", "text").stdout.decode()
    assert "(optimal under 1 pin/forbid)" in shown.splitlines()[0]
