"""The same project in two checkouts gives the same artifact bytes, run from any working
directory: no artifact records an absolute or working-directory-dependent path (the
configuration file by its name, the settings as written, a warm start by what it
provided), for every command and option that records provenance."""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import orjson
import pytest

from tests.conftest import EXAMPLES, run_cli

CONFIG = """\
method = "heuristic"
time-limit = 3
split = "per-statement"
size-cap = 32
targets = "profiles/ours.yaml"
"""


@functools.cache
def _profile() -> bytes:
    """The built-in profile as `profile show` prints it, made once for every project."""
    profile = run_cli("profile", "show", "hashql")
    assert profile.returncode == 0, profile.stderr
    return profile.stdout


def _project(root: Path) -> Path:
    """A copy of the examples with a placement.toml (and the profile it names)."""
    root.mkdir(parents=True)
    shutil.copytree(EXAMPLES, root / "examples")
    (root / "placement.toml").write_text(CONFIG)
    (root / "profiles").mkdir()
    (root / "profiles" / "ours.yaml").write_bytes(_profile())
    (root / "pins.yaml").write_text("bb3: embedding\n")
    (root / "out").mkdir()  # `-o` writes into an existing folder
    return root


# (command line, files it writes), paths relative to the project's root.
CALLS = [
    (["lower", "examples/seed_split.body.yaml", "-o", "out/lower.json"], ["out/lower.json"]),
    # Every stage command writes through one writer: `solve` and `islands` (which runs the
    # others first) hold `-o`'s bytes; the other stages' artifacts of the same input are
    # the `run` below (a stage's own bytes: the goldens' test_single_stage_equals_run_output).
    *[
        ([stage, "examples/three_targets.yaml", "-o", f"out/{stage}.json"], [f"out/{stage}.json"])
        for stage in ("solve", "islands")
    ],
    (["islands", "examples/filter.body.yaml", "-o", "out/body.json"], ["out/body.json"]),
    (["islands", "examples/web_filter.mir", "-o", "out/mir.json"], ["out/mir.json"]),
    (
        ["solve", "examples/three_targets.yaml", "--pin", "bb3=embedding", "-o", "out/pin.json"],
        ["out/pin.json"],
    ),
    (
        ["solve", "examples/three_targets.yaml", "--pins", "pins.yaml", "-o", "out/pins.json"],
        ["out/pins.json"],
    ),
    (
        [
            "solve",
            "examples/nested_loops.yaml",
            "--warm-start",
            "out/solve.json",
            "-o",
            "out/warm.json",
        ],
        ["out/warm.json"],
    ),
    (
        ["run", "examples/seed_split.body.yaml", "--out-dir", "out/run"],
        [f"out/run/{s}.json" for s in ("prune", "scc", "solve", "fuse", "islands")],
    ),
    (
        ["run", "examples/three_targets.yaml", "examples/web_filter.mir", "--out-dir", "out/many"],
        [
            f"out/many/{n}/{s}.json"
            for n in ("three_targets", "web_filter")
            for s in ("prune", "scc", "solve", "fuse", "islands")
        ],
    ),
    (
        ["tree", "examples/operator_tree.yaml", "--budget", "2", "-o", "out/tree.json"],
        ["out/tree.json"],
    ),
]


def _absolute(args: list[str], root: Path) -> list[str]:
    """The same command line with every path made absolute (run from elsewhere)."""
    return [
        str(root / a) if ("/" in a or a.endswith((".yaml", ".json"))) and "=" not in a else a
        for a in args
    ]


def _outputs(root: Path, cwd: Path | None) -> dict[str, bytes]:
    got: dict[str, bytes] = {}
    for args, files in CALLS:
        line = args if cwd is None else _absolute(args, root)
        r = run_cli(*line, "-q", cwd=cwd or root)
        assert r.returncode in (0, 4), (line, r.stderr)
        for f in files:
            got[f] = (root / f).read_bytes()
    return got


@pytest.fixture(scope="module")
def checkouts(tmp_path_factory):
    base = tmp_path_factory.mktemp("checkouts")
    one = _project(base / "one" / "project")
    two = _project(base / "elsewhere" / "deeper" / "project-copy")
    away = base / "cwd"
    away.mkdir()
    return {
        "one, from its root": _outputs(one, None),
        "two, from its root": _outputs(two, None),
        "one, from another directory": _outputs(one, away),
        "two, from its examples": _outputs(two, two / "examples"),
    }


def test_the_configuration_is_in_use(checkouts):
    solve = orjson.loads(checkouts["one, from its root"]["out/solve.json"])
    assert solve["solve"]["method"] == "heuristic"
    assert solve["config"]["settings"]["targets"] == "profiles/ours.yaml"
    lowered = orjson.loads(checkouts["one, from its root"]["out/lower.json"])
    assert lowered["lower"]["split"] == "per-statement", lowered["lower"]["split"]


@pytest.mark.parametrize("what", [f for _, files in CALLS for f in files])
def test_every_artifact_has_the_same_bytes_in_every_checkout(checkouts, what):
    first, *others = checkouts.items()
    for where, got in others:
        assert got[what] == first[1][what], f"{what}: {where} differs from {first[0]}"
    assert b"/project" not in first[1][what] and str(EXAMPLES.parent).encode() not in first[1][what]


def test_a_warm_start_is_recorded_by_what_it_provided(checkouts, tmp_path):
    warm = orjson.loads(checkouts["one, from its root"]["out/warm.json"])
    recorded = warm["solve"]["constraints"]["warm_start"]
    assert recorded.startswith("sha256:") and "out/" not in recorded, recorded
    # The same assignment under another file name is the same warm start; another is not.
    root = tmp_path / "p"
    _project(root)
    (root / "out" / "solve.json").write_bytes(checkouts["one, from its root"]["out/solve.json"])
    shutil.copy(root / "out" / "solve.json", root / "renamed.json")
    a = run_cli("solve", "examples/nested_loops.yaml", "--warm-start", "renamed.json", cwd=root)
    assert a.stdout == checkouts["one, from its root"]["out/warm.json"], a.stderr
    other = run_cli("solve", "examples/nested_loops.yaml", "-o", "nl.json", cwd=root)
    assert other.returncode == 0, other.stderr
    b = run_cli("solve", "examples/nested_loops.yaml", "--warm-start", "nl.json", cwd=root)
    assert orjson.loads(b.stdout)["solve"]["constraints"]["warm_start"] != recorded
