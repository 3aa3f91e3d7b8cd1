"""`placement profile show` and the front end's options on every command that lowers a
body first (`--targets`, `--split`, `--size-cap`)."""

from __future__ import annotations

import orjson

from tests.conftest import EXAMPLES, run_cli

BODY = str(EXAMPLES / "filter.body.yaml")
SPLIT = str(EXAMPLES / "seed_split.body.yaml")


def _blocks(art: bytes) -> list[dict]:
    doc = orjson.loads(art)
    return (doc.get("plan") or doc)["blocks"]


def test_the_shown_profile_places_a_body_as_the_built_in_one(tmp_path):
    shown = run_cli("profile", "show")
    assert shown.returncode == 0
    assert b"\nname: hashql\n" in shown.stdout and b"postgres" in shown.stdout
    f = tmp_path / "hashql.yaml"
    f.write_bytes(shown.stdout)
    a = run_cli("solve", BODY, "-q")
    b = run_cli("solve", BODY, "-q", "--targets", str(f))
    assert a.returncode == b.returncode == 0, b.stderr
    assert _blocks(a.stdout) == _blocks(b.stdout)
    assert orjson.loads(a.stdout)["solve"] == orjson.loads(b.stdout)["solve"]


def test_profile_usage_errors():
    assert run_cli("profile", "list").returncode == 2
    r = run_cli("profile", "show", "nosuch")
    assert r.returncode == 2 and b"hashql" in r.stderr


def test_stages_take_the_split_and_the_size_cap():
    runs = run_cli("scc", SPLIT, "-q")
    whole = run_cli("scc", SPLIT, "-q", "--split", "intersection")
    assert [b["id"] for b in _blocks(runs.stdout)] == ["bb0", "bb0.1"]
    assert [b["id"] for b in _blocks(whole.stdout)] == ["bb0"]
    lowered = run_cli("lower", SPLIT, "-q", "--split", "intersection")
    assert [b["id"] for b in _blocks(lowered.stdout)] == ["bb0"]
    r = run_cli("validate", BODY, "--size-cap", "-1")
    assert r.returncode == 2
