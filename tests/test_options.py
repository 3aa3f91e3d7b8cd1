"""The command line's one declaration (`placement_cli/app/options.py`, `placement_cli/app/commands.py`) and what is derived
from it: the typer commands, the fast launcher and `docs/cli.md`."""

from __future__ import annotations

from typer.main import get_command

from placement_cli.algorithms.solve.options import SolveOptions
from placement_cli.app.cli import app
from placement_cli.app.commands import commands, markdown, option
from placement_cli.app.dispatch import handler
from tests.conftest import ROOT

CLICK = get_command(app)


def click_command(name: str):
    """The click command of `name` (`GROUP SUB` for a subcommand)."""
    sub = CLICK
    for word in name.split():
        sub = sub.commands[word]  # type: ignore[attr-defined]
    return sub


def test_docs_cli_md_is_generated_from_the_declarations():
    """Fails when docs/cli.md is stale: run `make docs`."""
    assert (ROOT / "docs" / "cli.md").read_text() == markdown()


def test_every_declared_option_is_a_typer_parameter_with_its_spellings_and_default():
    for cmd in commands():
        sub = click_command(cmd.name)
        params = {p.name: p for p in sub.params}
        assert [p.name for p in sub.params] == [a.key for a in cmd.args] + [
            o.key for o in cmd.options
        ]
        for o in cmd.options:
            p = params[o.key]
            assert tuple(p.opts) == o.flags, (cmd.name, o.key)
            got = p.default.value if hasattr(p.default, "value") else p.default
            if o.repeatable:
                assert got in (None, ()), (cmd.name, o.key)
            else:
                assert got == o.default, (cmd.name, o.key)
            if o.choices:
                assert tuple(p.type.choices) == o.choices, (cmd.name, o.key)


def test_no_flag_is_spelt_twice_in_a_command():
    for cmd in commands():
        flags = [f for o in cmd.options for f in o.flags]
        assert len(flags) == len(set(flags)), cmd.name
        keys = [a.key for a in cmd.args] + [o.key for o in cmd.options]
        assert len(keys) == len(set(keys)), cmd.name


def test_every_handler_exists():
    for cmd in commands():
        assert callable(handler(cmd.name)), cmd.name


def test_solver_defaults_and_choices_come_from_the_stage_options():
    """`--method` and `--time-limit` are SolveOptions's fields: one default, one set of choices."""
    defaults = SolveOptions()
    for name in ("solve", "fuse", "islands", "run"):
        assert option(name, "method").default == defaults.method
        assert option(name, "time_limit").default == defaults.time_limit
    assert "exact" in option("solve", "method").choices


# A process in which `solve`'s options model has one more field, declared as any field is
# (`core/option_field.py`); it then asks every derived part of the command line about it.
_ADDED = r"""
import json, sys
from typing import Annotated, Literal
from placement_cli.algorithms.solve import options as m
from placement_cli.core.option_field import Flag

class Derived(m.SolveOptions, frozen=True):
    order: Annotated[
        Literal["input", "size"],
        Flag(("--order",), "The order blocks are tried in.", settable=True),
    ] = "input"
    rounds_hint: Annotated[
        int, Flag(("--rounds-hint",), "Rounds to try first.", minimum=1, settable=True)
    ] = 3

m.SolveOptions = Derived  # before any module of the command line reads it

from typer.main import get_command
from placement_cli.app.cli import app
from placement_cli.app.commands import command, markdown
from placement_cli.app.config import SETTABLE, apply_config
from placement_cli.app.launch import fast_call
from placement_cli.app.solve_cli import solve_options
from placement_cli.core.errors import InputError

line = ["solve", "plan.json", "--order", "size", "--rounds-hint=4"]
_, fast, given = fast_call(line)
ctx = get_command(app).commands["solve"].make_context("solve", line[1:])
typer_values = {k: getattr(v, "value", v) for k, v in ctx.params.items()}
table = apply_config(command("solve"), command("solve").defaults(), set(),
                     {"order": "size", "rounds-hint": 7}, "/p/placement.toml")
try:
    apply_config(command("solve"), {}, set(), {"rounds-hint": 0}, "/p/placement.toml")
    bad_config = None
except InputError as exc:
    bad_config = [p.message for p in exc.problems]
try:
    Derived(rounds_hint=0)
    bad_model = None
except ValueError as exc:
    bad_model = str(exc)
model = solve_options(fast)
print(json.dumps({
    "fast": [fast["order"], fast["rounds_hint"], sorted(given)],
    "typer": [typer_values["order"], typer_values["rounds_hint"]],
    "settable": list(SETTABLE),
    "config": [table["order"], table["rounds_hint"], table["config"]["settings"]],
    "bad_config": bad_config,
    "bad_model": bad_model,
    "handler": [type(model).__name__, model.order, model.rounds_hint],
    "docs": [l for l in markdown().splitlines() if "--order" in l or "--rounds-hint" in l],
}))
"""


def test_a_field_added_to_a_stage_options_model_reaches_every_part_of_the_command_line(tmp_path):
    """One declaration: a field added to `SolveOptions` (with its flag) is an option of
    every command that solves, read by typer and by the fast launcher, settable in
    placement.toml and checked there and on the model by its bound, listed in
    docs/cli.md, and in the model the handler gets, with no other edit."""
    import json
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-c", _ADDED], capture_output=True, cwd=tmp_path, check=False
    )
    assert r.returncode == 0, r.stderr.decode()
    got = json.loads(r.stdout)
    assert got["fast"] == ["size", 4, ["order", "rounds_hint"]]
    assert got["typer"] == ["size", 4]
    assert got["settable"][:4] == ["method", "time-limit", "order", "rounds-hint"]
    assert got["config"] == ["size", 7, {"order": "size", "rounds_hint": 7}]
    assert got["bad_config"] == ["expected a number >= 1, got 0"]
    assert got["bad_model"] == "invalid solve options: rounds_hint: expected an integer >= 1, got 0"
    assert got["handler"] == ["Derived", "size", 4]
    # solve, fuse, islands and run solve; each lists both options.
    assert len(got["docs"]) == 8
    assert (
        "| `--order` | `input` / `size` | `input` | The order blocks are tried in. |" in got["docs"]
    )
    assert "| `--rounds-hint` | INT >= 1 | `3` | Rounds to try first. |" in got["docs"]


def test_no_stage_option_or_setting_is_written_by_hand():
    """Every option spelt like a stage's own is the one its options model declares (a
    view may word its help and default apart), and the settings placement.toml may give
    are exactly the declarations marked settable."""
    from placement_cli.app.config import _PATHS, SETTABLE
    from placement_cli.app.options import CALL_SETTINGS, model_options, settable
    from placement_cli.frontends.lower.options import LowerOptions
    from placement_cli.ir.tree.options import TreeOptions

    derived = {m: model_options(m) for m in (SolveOptions, LowerOptions, TreeOptions)}
    by_flag = {f: o for opts in derived.values() for o in opts for f in o.flags}
    for cmd in commands():
        own = cmd.name == "tree"
        for o in cmd.options:
            d = by_flag.get(o.flags[0])
            if d is None or (o.key == "time_limit" and (own != (d in derived[TreeOptions]))):
                continue
            if cmd.name in ("show", "explain", "execute", "import"):
                # `tree`'s --budget (execute: the placements --all runs; import: the
                # budget the tree file carries), worded apart, as a view words --time-limit.
                assert (o.key, o.flags, o.kind, o.minimum) == (d.key, d.flags, d.kind, d.minimum)
            else:
                assert o == d, (cmd.name, o.key)
    assert SETTABLE == settable((*derived[SolveOptions], *derived[LowerOptions], *CALL_SETTINGS))
    assert _PATHS == ("targets",)
    # tree's model is not read for the settings (app/config.py says why): it may mark none.
    assert settable(derived[TreeOptions]) == ()


def test_engine_options_are_declared_once():
    """`--db`, `--pg`, `--engines`, `--repeat`, `--warmup` and `--threads` of every
    engine command are `EngineOptions`' fields (a command may only set its own default),
    and no engine name is spelt in a command's declaration but through the registry."""
    from placement_cli.app.options import model_options
    from placement_cli.engines.options import EngineOptions
    from placement_cli.engines.registry import NAMES

    declared = {o.flags[0]: o for o in model_options(EngineOptions)}
    seen: dict[str, list[str]] = {}
    for cmd in commands():
        for o in cmd.options:
            d = declared.get(o.flags[0])
            if d is None:
                continue
            seen.setdefault(o.flags[0], []).append(cmd.name)
            assert (o.key, o.flags, o.help, o.kind, o.minimum, o.metavar) == (
                d.key,
                d.flags,
                d.help,
                d.kind,
                d.minimum,
                d.metavar,
            ), (cmd.name, o.key)
    assert seen["--db"] == ["execute", "import", "calibrate measure"]
    assert seen["--engines"] == ["import"]
    assert ", ".join(NAMES) in declared["--engines"].help
