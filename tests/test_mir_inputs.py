"""MIR text is an input of every command that reads one, not only of `lower`: on
standard input and under any extension it is told by its first line (or `--from
hashql-mir` says so); `--body` picks the body to place; a file with several bodies to
place places each (one output per body, as a batch does) or asks for `--body`, never
silently the first."""

from __future__ import annotations

import shutil

import orjson
import pytest

from placement_cli.app.commands import command
from tests.conftest import EXAMPLES, ROOT, run_cli

FILTER = EXAMPLES / "web_filter.mir"
TWO = ROOT / "tests" / "data" / "mir" / "graph_read.mir"  # two graph-read filters
BODIES = ("{graph::read::filter@3}", "{graph::read::filter@5}")
FOLDERS = ("graph-read-filter-3", "graph-read-filter-5")
STAGES = ("prune", "scc", "solve", "fuse", "islands")
RUN_FILES = [f"{s}.json" for s in STAGES]


@pytest.mark.parametrize("name", ["validate", "lower", *STAGES, "show", "explain"])
def test_every_command_that_reads_an_input_takes_from_and_body(name):
    flags = {f for o in command(name).options for f in o.flags}
    assert {"--from", "--body"} <= flags


@pytest.mark.parametrize("stage", ["lower", *STAGES])
def test_mir_on_stdin_is_read_as_mir_by_every_stage(stage):
    named = run_cli(stage, str(FILTER), "-q")
    assert named.returncode == 0, named.stderr
    piped = run_cli(stage, "-", "-q", stdin=FILTER.read_bytes())
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == named.stdout
    said = run_cli(stage, "-", "-q", "--from", "hashql-mir", stdin=FILTER.read_bytes())
    assert said.returncode == 0, said.stderr
    assert said.stdout == named.stdout


def test_mir_on_stdin_runs_and_validates(tmp_path):
    named = run_cli("run", str(FILTER), "--out-dir", str(tmp_path / "a"), "-q")
    assert named.returncode == 0, named.stderr
    piped = run_cli("run", "-", "--out-dir", str(tmp_path / "b"), "-q", stdin=FILTER.read_bytes())
    assert piped.returncode == 0, piped.stderr
    for f in RUN_FILES:
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f
    v = run_cli("validate", "-", stdin=FILTER.read_bytes())
    assert v.returncode == 0, v.stderr
    assert v.stderr.decode().startswith("<stdin>: ok: ")


def _extra(stage: str) -> list[str]:
    return ["bb0", "--format", "json"] if stage == "explain" else ["-q"]


@pytest.fixture(scope="module")
def named_outputs() -> dict[str, bytes]:
    """`lower`, `solve` and `explain` of the `.mir` file, once for every extension."""
    got = {}
    for stage in ("lower", "solve", "explain"):
        r = run_cli(stage, str(FILTER), *_extra(stage))
        assert r.returncode == 0, (stage, r.stderr)
        got[stage] = r.stdout
    return got


@pytest.mark.parametrize("suffix", [".txt", ".yaml", ".json", ""])
def test_mir_under_another_extension_is_read_as_mir(tmp_path, named_outputs, suffix):
    other = tmp_path / f"q{suffix}"
    shutil.copy(FILTER, other)
    for stage, named in named_outputs.items():
        moved = run_cli(stage, str(other), *_extra(stage))
        assert moved.returncode == 0, (stage, moved.stderr)
        assert moved.stdout == named, stage


def test_from_body_on_mir_text_says_what_it_looks_like(tmp_path):
    r = run_cli("solve", "-", "--from", "body", stdin=FILTER.read_bytes())
    assert r.returncode == 3
    lines = r.stderr.decode().strip().splitlines()
    assert lines == ["<stdin>: this looks like MIR text: use --from hashql-mir"], lines


@pytest.mark.parametrize(
    "args",
    [
        ("solve",),
        ("lower",),
        ("prune", "-o", "OUT"),
        ("show",),
        ("explain", "bb0"),
    ],
)
def test_two_bodies_and_one_output_ask_for_body(tmp_path, args):
    name, *rest = args
    rest = [str(tmp_path / "x.json") if a == "OUT" else a for a in rest]
    for path, stdin in ((str(TWO), None), ("-", TWO.read_bytes())):
        r = run_cli(name, path, *rest, stdin=stdin)
        assert r.returncode == 2, (name, r.stderr)
        err = r.stderr.decode()
        assert "2 bodies to place" in err and "--body" in err, err
        assert all(b in err for b in BODIES), err
        assert r.stdout == b""


def _alone(stage: str, body: str) -> bytes:
    r = run_cli(stage, str(TWO), "--body", body, "-q")
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("stage", ["lower", "solve"])
def test_two_bodies_with_out_dir_place_each_as_body_alone(tmp_path, stage):
    out = tmp_path / "out"
    r = run_cli(stage, str(TWO), "--out-dir", str(out), "-q")
    assert r.returncode == 0, r.stderr
    for body, folder in zip(BODIES, FOLDERS, strict=True):
        got = (out / "graph_read" / folder / f"{stage}.json").read_bytes()
        assert got == _alone(stage, body)
    summary = orjson.loads((out / "summary.json").read_bytes())
    assert [(row["body"], row["name"]) for row in summary["rows"]] == [
        (b, f"graph_read/{f}") for b, f in zip(BODIES, FOLDERS, strict=True)
    ]


@pytest.mark.parametrize("stdin", [False, True])
def test_run_places_each_body(tmp_path, stdin):
    out = tmp_path / "out"
    path = "-" if stdin else str(TWO)
    r = run_cli("run", path, "--out-dir", str(out), "-q", stdin=TWO.read_bytes() if stdin else None)
    assert r.returncode == 0, r.stderr
    stem = "stdin" if stdin else "graph_read"
    for body, folder in zip(BODIES, FOLDERS, strict=True):
        alone = tmp_path / "alone" / folder
        one = run_cli("run", str(TWO), "--body", body, "--out-dir", str(alone), "-q")
        assert one.returncode == 0, one.stderr
        for f in RUN_FILES:
            assert (out / stem / folder / f).read_bytes() == (alone / f).read_bytes(), f


def test_validate_checks_each_body():
    r = run_cli("validate", str(TWO))
    assert r.returncode == 0, r.stderr
    err = r.stderr.decode()
    for body in BODIES:
        assert f"{TWO} ({body}): ok: " in err, err


def test_body_picks_one_and_an_unknown_body_is_named():
    for stage in ("solve", "validate"):
        r = run_cli(stage, str(TWO), "--body", BODIES[1], "-q")
        assert r.returncode == 0, r.stderr
    r = run_cli("solve", str(TWO), "--body", "nope")
    assert r.returncode == 3
    assert "unknown body 'nope'" in r.stderr.decode()


def test_one_filter_among_other_bodies_is_placed_without_asking():
    # web_filter.mir: two thunks and one filter; the filter is the one body to place
    assert run_cli("solve", str(FILTER), "-q").returncode == 0
