"""`placement lower BODY`: the command's handler (its options: `app/commands.py`)."""

from __future__ import annotations

from typing import Any

from placement_cli.app.console import say, warn_diagnostics
from placement_cli.app.values import Common, lower_options
from placement_cli.core.errors import EXIT_OK, InputError, Problem
from placement_cli.core.io import (
    dumps,
    gc_paused,
    is_json,
    parse_document,
    source_name,
    write_output,
)
from placement_cli.frontends.lower.options import LowerOptions
from placement_cli.frontends.lower.stage import lower_to_plan
from placement_cli.frontends.mir_text import read_body
from placement_cli.pipeline.kinds import is_mir_input, one_body, read_input, say_what_it_is


def lower_command(
    path: str, output: str | None, fmt: str, options: LowerOptions, source_format: str | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Lower a body file, MIR text or a plan (split), and write the plan; returns (plan,
    diagnostics). `source_format` (`--from`): `hashql-mir` or `body`; None decides by
    the extension (`.mir` is MIR text), then by the bytes (`pipeline/kinds.py`)."""
    source = source_name(path)
    data = read_input(path)
    doc: Any
    mir = is_mir_input(path, data, source_format)
    try:
        with gc_paused():
            if mir:
                doc = read_body(data, source)
                one_body(doc, source, options.body)
            elif is_json(path, data) and b'"bodies"' in data and b'"format_version"' not in data:
                doc = data  # pydantic validates JSON bytes faster than parsed data
            else:
                doc = parse_document(path, data)
                if not isinstance(doc, dict):
                    raise InputError(
                        [Problem("", "a body file is a mapping at the top level")], source
                    )
        # The plan is valid by construction (tests/test_lower_properties.py checks it on
        # random bodies); validating it again would cost as much as lowering.
        plan, _, diags = lower_to_plan(doc, source, options)
    except InputError:
        if not mir:
            say_what_it_is(data, source)  # a file of another kind: one line
        raise
    write_output(dumps(plan, fmt), output)
    return plan, diags


def command(name: str, v: dict[str, Any]) -> int:
    """`placement lower`: lower the body, write the plan, report what was split."""
    c = Common.of(v)
    plan, diags = lower_command(c.path, c.output, c.format, lower_options(v), c.source)
    warn_diagnostics([d for d in diags if d["severity"] != "info"], c.quiet, c.diagnostics, c.path)
    low = plan["lower"]
    say(
        f"lowered: {low['blocks_before']} blocks -> {low['blocks_after']} ({low['split']})", c.quiet
    )
    return EXIT_OK
