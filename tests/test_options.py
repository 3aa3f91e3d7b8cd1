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


def test_docs_cli_md_is_generated_from_the_declarations():
    """Fails when docs/cli.md is stale: run `make docs`."""
    assert (ROOT / "docs" / "cli.md").read_text() == markdown()


def test_every_declared_option_is_a_typer_parameter_with_its_spellings_and_default():
    for cmd in commands():
        sub = CLICK.commands[cmd.name]  # type: ignore[attr-defined]
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
