"""The fast launcher (`placement_cli.app.launch`) against typer, the authority on the command line.

Whatever the launcher runs itself must be exactly what typer would have run: the same
command body with the same values. Everything else it must leave to typer. Checked on
thousands of random command lines built from the options' own spellings and from
near misses, and end to end as processes (same bytes out, same exit codes, same
messages) against the typer path.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command

from placement_cli.app.cli import app, plain
from placement_cli.app.launch import fast_call
from placement_cli.pipeline.registry import REGISTRY

ROOT = Path(__file__).resolve().parent.parent
COMMAND = get_command(app)
SOLVING = {s.name: s.solver_options for s in REGISTRY}
# The typer path as a process: the same commands, parsed by typer alone.
TYPER = "import sys; from placement_cli.app.cli import app; app(args=sys.argv[1:], prog_name='placement')"


def typer_call(argv: list[str]) -> tuple[str, dict[str, Any]] | None:
    """What typer would run for `argv`: (command, its values as the handler gets them),
    or None when it would stop with a usage error, help or the version (nothing run)."""
    try:
        root = COMMAND.make_context("placement", list(argv))
        rest = [*root._protected_args, *root.args]
        if not rest:
            return None
        sub = COMMAND.get_command(root, rest[0])  # type: ignore[attr-defined]
        if sub is None:
            return None
        ctx = sub.make_context(rest[0], rest[1:], parent=root)
    except Exception:  # noqa: BLE001 - click's usage errors and --help's Exit alike
        return None
    return rest[0], {k: plain(v) for k, v in ctx.params.items()}


COMMANDS = [
    "validate",
    *SOLVING,
    "run",
    "tree",
    "lower",
    "show",
    "nosuch",
    "--help",
    "--version",
    "-h",
]
TOKENS = [
    "plan.json",
    "-",
    "a.yaml",
    "",
    "x y",
    "--output",
    "-o",
    "--output=o.json",
    "--output=",
    "-oo.json",
    "--format",
    "--format=yaml",
    "json",
    "yaml",
    "JSON",
    "xml",
    "--method",
    "--method=exact",
    "auto",
    "exact",
    "heuristic",
    "Exact",
    "--time-limit",
    "--time-limit=2.5",
    "5",
    "0",
    ".5",
    "5.",
    "1e3",
    "-1",
    "nan",
    "inf",
    " 1",
    "--pin",
    "--pin=bb1=postgres",
    "bb0=interpreter",
    "--forbid",
    "--pins",
    "--warm-start",
    "--out-dir",
    "--out-dir=d",
    "-q",
    "--quiet",
    "--quiet=1",
    "--debug",
    "--timings",
    "-qq",
    "-h",
    "--help",
    "--",
    "--outp",
    "--version",
    "-x",
    "--unknown",
]


def random_argv(rng: random.Random) -> list[str]:
    argv = [rng.choice(COMMANDS)]
    for _ in range(rng.randrange(0, 8)):
        argv.append(rng.choice(TOKENS))
    return argv


def plain_argv(rng: random.Random) -> list[str]:
    """A valid command line of the forms the launcher is meant to take."""
    name = rng.choice(["validate", *SOLVING, "run"])
    parts: list[list[str]] = [[rng.choice(["plan.json", "-", "dir/p.yaml"])]]
    flags = [["-q"], ["--quiet"], ["--debug"], ["--timings"]]
    values: list[list[str]] = []
    if name in SOLVING:
        values += [["-o", "out.json"], ["--output", "o.yaml"], ["--output=o2.json"]]
    if name != "validate":
        values += [
            ["--format", rng.choice(["json", "yaml"])],
            [f"--format={rng.choice(['json', 'yaml'])}"],
        ]
    if name == "run" or SOLVING.get(name):
        values += [
            ["--method", rng.choice(["auto", "exact", "heuristic"])],
            ["--time-limit", rng.choice(["0", "2", ".25", "7."])],
        ]
    if SOLVING.get(name):
        values += [
            ["--pin", "bb1=postgres"],
            ["--forbid", "bb2=embedding"],
            ["--pins", "pins.yaml"],
            ["--warm-start", "old.json"],
            ["--pin=bb3=interpreter"],
        ]
    if name == "run":
        values += [["--out-dir", "out2"]]
    chosen = rng.sample(flags, rng.randrange(0, len(flags) + 1))
    seen: set[str] = set()
    for v in rng.sample(values, rng.randrange(0, len(values) + 1)):
        key = v[0].split("=")[0]
        if (
            key in seen
            or (key == "-o" and "--output" in seen)
            or (key == "--output" and "-o" in seen)
        ):
            continue  # one value per single-valued option: repeats go to typer
        seen.add(key)
        chosen.append(v)
    parts += chosen
    rng.shuffle(parts)
    return [name, *(t for part in parts for t in part)]


def test_fast_calls_are_typers_calls_on_random_command_lines() -> None:
    rng = random.Random(20261126)
    taken = 0
    for _ in range(6000):
        argv = random_argv(rng)
        call = fast_call(argv)
        if call is None:
            continue
        taken += 1
        assert typer_call(argv) == call[:2], argv
    assert taken > 100  # the generator reaches the launcher's forms, not only typer's


def test_every_plain_command_line_is_taken_and_matches_typer() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        argv = plain_argv(rng)
        call = fast_call(argv)
        assert call is not None, argv
        assert typer_call(argv) == call[:2], argv


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "--help"],
        ["solve", "-h"],
        ["--version"],
        ["solve"],
        ["solve", "a", "--", "b"],
        ["solve", "p", "--jobs", "0"],
        ["solve", "p", "--jobs", "+2"],
        ["solve", "p", "--time-limit", "-1"],
        ["solve", "p", "--time-limit", "1e3"],
        ["solve", "p", "--format", "xml"],
        ["solve", "p", "-qo", "x"],
        ["solve", "p", "--", "-"],
        ["prune", "p", "--method", "exact"],
        ["run", "p", "-o", "x"],
        ["validate", "p", "--format", "json"],
        ["solve", "p", "-o"],
        ["solve", "p", "-o", "a", "-o", "b"],
        ["tree", "t.yaml"],
        ["show", "cfg", "p"],
        [],
    ],
)
def test_left_to_typer(argv: list[str]) -> None:
    assert fast_call(argv) is None


def test_several_inputs_are_taken_in_order() -> None:
    call = fast_call(["validate", "b.yaml", "-q", "a.yaml", "--jobs", "3"])
    assert call is not None
    assert call[1]["path"] == ["b.yaml", "a.yaml"] and call[1]["jobs"] == 3
    assert typer_call(["validate", "b.yaml", "-q", "a.yaml", "--jobs", "3"]) == call[:2]
    assert call[2] == {"quiet", "jobs"}  # what the line set: the configuration fills the rest


def _both(
    args: list[str], cwd: Path
) -> tuple[subprocess.CompletedProcess[bytes], subprocess.CompletedProcess[bytes]]:
    fast = subprocess.run(
        [sys.executable, "-m", "placement_cli", *args], cwd=cwd, capture_output=True
    )
    typer_path = subprocess.run([sys.executable, "-c", TYPER, *args], cwd=cwd, capture_output=True)
    return fast, typer_path


@pytest.mark.parametrize(
    "args",
    [
        ["solve", "{ex}/three_targets.yaml"],
        ["islands", "{ex}/nested_loops.yaml", "--method", "heuristic", "-q"],
        ["prune", "{ex}/loop_alternating.yaml", "--format", "yaml"],
        ["validate", "{ex}/three_targets.yaml"],
        ["solve", "{ex}/no_target.yaml"],
        ["solve", "missing.yaml"],
        ["solve", "{ex}/three_targets.yaml", "--pin", "nosuch=postgres"],
        ["fuse", "{ex}/three_targets.yaml", "--pins", "missing.yaml"],
        ["scc", "{ex}/seed_split.body.yaml"],
        ["--version"],  # answered by the launcher without typer
    ],
)
def test_processes_agree(args: list[str], tmp_path: Path) -> None:
    argv = [a.format(ex=ROOT / "examples") for a in args]
    fast, slow = _both(argv, tmp_path)
    assert fast.returncode == slow.returncode, (fast.stderr, slow.stderr)
    assert fast.stdout == slow.stdout
    assert fast.stderr == slow.stderr


def test_run_and_output_files_agree(tmp_path: Path) -> None:
    plan = str(ROOT / "examples" / "nested_loops.yaml")
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    args = ["run", plan, "--out-dir", "out", "-q", "--method", "exact"]
    fast = subprocess.run(
        [sys.executable, "-m", "placement_cli", *args], cwd=a, capture_output=True
    )
    slow = subprocess.run([sys.executable, "-c", TYPER, *args], cwd=b, capture_output=True)
    assert fast.returncode == slow.returncode == 0
    names = sorted(p.name for p in (a / "out").iterdir())
    assert names == sorted(p.name for p in (b / "out").iterdir())
    assert len(names) == 5
    for name in names:
        assert (a / "out" / name).read_bytes() == (b / "out" / name).read_bytes(), name


def test_launcher_does_not_import_typer(tmp_path: Path) -> None:
    code = (
        "import sys; from placement_cli.app.launch import dispatch\n"
        "try:\n dispatch(sys.argv[1:])\nexcept SystemExit as e:\n"
        " print(e.code, 'typer' in sys.modules, 'click' in sys.modules, file=sys.stderr)"
    )
    plan = str(ROOT / "examples" / "three_targets.yaml")
    r = subprocess.run(
        [sys.executable, "-c", code, "solve", plan, "-o", "x.json", "-q"],
        cwd=tmp_path,
        capture_output=True,
    )
    assert r.stderr.decode().split() == ["0", "False", "False"]
    r = subprocess.run(
        [sys.executable, "-c", code, "solve", plan, "--bogus"], cwd=tmp_path, capture_output=True
    )
    assert r.stderr.decode().split()[-3:] == ["2", "True", "False"]


def test_command_line_imports_no_numpy(tmp_path: Path) -> None:
    """Typer builds every command for any one it runs (`--help`, `lower`, `tree`...):
    building `tree`'s options must not import the tree's numpy model (~100 ms)."""
    code = (
        "import sys; from placement_cli.app.launch import dispatch\n"
        "try:\n dispatch(sys.argv[1:])\nexcept SystemExit as e:\n"
        " print(e.code, 'typer' in sys.modules, 'numpy' in sys.modules, file=sys.stderr)"
    )
    for args in (["--version"], ["tree", "--help"]):
        r = subprocess.run([sys.executable, "-c", code, *args], cwd=tmp_path, capture_output=True)
        assert r.stderr.decode().split()[-3:] == ["0", "True", "False"], args
