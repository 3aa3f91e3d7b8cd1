"""Every command: its arguments, its options (declared in `app/options.py`) and its
handler. The typer commands (`app/cli.py`), the fast launcher (`app/launch.py`) and
`docs/cli.md` (`python -m placement_cli.app.commands`, checked by `tests/test_options.py`)
are derived from these.

>>> [o.key for o in command("solve").options][:4]
['output', 'format', 'quiet', 'debug']
>>> option("solve", "method").choices, option("run", "out_dir").flags
(('auto', 'exact', 'heuristic'), ('--out-dir',))
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, partial
from importlib import import_module
from types import ModuleType

import msgspec

from placement_cli.app.options import (
    ARTIFACT,
    DEBUG,
    DIAGNOSTICS,
    DIAGNOSTICS_FILE,
    FORMAT,
    INPUT,
    INPUT_KIND,
    JOBS,
    NO_CONFIG,
    OUT_DIR,
    OUTPUT,
    QUIET,
    SOLVE,
    SOLVER,
    STRICT,
    TIME_LIMIT,
    TIMINGS,
    TRANSFER,
    TREE_FILE,
    VERSION,
    VIEW_OUTPUT,
    VIEW_QUIET,
    Arg,
    Command,
    Opt,
    model_options,
)
from placement_cli.pipeline.registry import REGISTRY


def _stage(name: str, summary: str, solves: bool) -> Command:
    opts = (
        OUTPUT,
        FORMAT,
        QUIET,
        DEBUG,
        TIMINGS,
        *(SOLVE if solves else ()),
        *INPUT_KIND,
        OUT_DIR,
        JOBS,
    )
    return Command(name, summary, (INPUT,), opts, "placement_cli.app.stagecmd:stage", phases=True)


def _lower() -> Command:
    return Command(
        "lower",
        "Derive a plan from a MIR body: eligibility, block splitting, sizes, transition matrices, "
        "path premium.",
        (
            Arg(
                "path",
                "BODY...",
                "Body files (JSON/YAML), the compiler's MIR text (.mir), or plans, or "
                "directories of them; - for stdin.",
                many=True,
            ),
        ),
        (
            *INPUT_KIND,
            OUTPUT,
            FORMAT,
            QUIET,
            DEBUG,
            OUT_DIR,
            JOBS,
        ),
        "placement_cli.app.lower_command:command",
    )


def _tree() -> Command:
    # Lazy: a frozen dataclass (~2.5 ms, measured), only when typer builds `tree`; it
    # is kept apart from the tree's numpy model so that building imports no numpy.
    from placement_cli.ir.tree.options import TreeOptions

    return Command(
        "tree",
        "Place the operators of a query-plan tree on engines under a cut budget.",
        (
            Arg(
                "path",
                "INPUT...",
                "Tree files (JSON/YAML) or directories of them, or - for stdin.",
                many=True,
            ),
        ),
        (
            *model_options(TreeOptions),
            TRANSFER,
            OUTPUT,
            FORMAT,
            QUIET,
            DEBUG,
            OUT_DIR,
            JOBS,
        ),
        "placement_cli.app.tree_command:command",
    )


def _validate() -> Command:
    return Command(
        "validate",
        "Check a plan, or an artifact and every section in it (a tree artifact against its tree "
        "file); exit 3 listing every problem.",
        (INPUT,),
        (TREE_FILE, QUIET, DEBUG, TIMINGS, *INPUT_KIND, JOBS),
        "placement_cli.app.stagecmd:validate",
        phases=True,
    )


def _run() -> Command:
    return Command(
        "run",
        "Every stage; one artifact per stage in --out-dir (all written or none), and a summary.",
        (INPUT,),
        (
            Opt(
                "out_dir",
                ("--out-dir",),
                "Directory for prune/scc/solve/fuse/islands artifacts (with several inputs: "
                "DIR/NAME/ per input, and DIR/summary.json).",
                default="out",
            ),
            FORMAT,
            *SOLVER,
            QUIET,
            DEBUG,
            TIMINGS,
            *INPUT_KIND,
            JOBS,
        ),
        "placement_cli.app.stagecmd:run_all",
        phases=True,
    )


def _profile() -> Command:
    return Command(
        "profile",
        "Print a built-in target profile as YAML: a starting point for --targets FILE.",
        (
            Arg("action", "ACTION", "show: print the profile."),
            Arg("profile_name", "NAME", "The built-in profile (default: hashql).", optional=True),
        ),
        (OUTPUT, QUIET, DEBUG),
        "placement_cli.app.profile_command:command",
    )


def _schema() -> Command:
    return Command(
        "schema",
        "Write the JSON Schemas of the plan file, the tree file and each artifact.",
        (),
        (
            Opt("out_dir", ("--out-dir",), "Where to write the schema files.", default="schemas"),
            QUIET,
            DEBUG,
        ),
        "placement_cli.app.schemas:command",
    )


def _show() -> Command:
    return Command(
        "show",
        "Draw a placement: the CFG by target, the islands, or the island graph.",
        (ARTIFACT,),
        (
            Opt(
                "view",
                ("--view",),
                "cfg: blocks by target, islands as clusters; islands: one node per island; "
                "graph: the island dependency graph.",
                default="cfg",
                choices=("cfg", "islands", "graph"),
            ),
            Opt(
                "format",
                ("--format",),
                "dot (Graphviz), mermaid, or text (a table; rich on a terminal).",
                default="dot",
                choices=("dot", "mermaid", "text"),
            ),
            VIEW_OUTPUT,
            msgspec.structs.replace(
                TIME_LIMIT, help="Seconds the solve may spend when the input has no solve section."
            ),
            TREE_FILE,
            *INPUT_KIND,
            VIEW_QUIET,
            DEBUG,
        ),
        "placement_cli.app.view_commands:show",
    )


def _explain() -> Command:
    return Command(
        "explain",
        "Why a block can or cannot run on each target, and the proven optimum if pinned there.",
        (ARTIFACT, Arg("block", "BLOCK", "The block id to explain.")),
        (
            Opt("format", ("--format",), "json or text.", default="text", choices=("json", "text")),
            VIEW_OUTPUT,
            msgspec.structs.replace(
                TIME_LIMIT,
                help="Seconds for all the pinned solves together (and for the solve "
                "itself when the input has none).",
                default=10.0,
            ),
            *INPUT_KIND,
            VIEW_QUIET,
            DEBUG,
        ),
        "placement_cli.app.view_commands:explain",
    )


def _diff() -> Command:
    return Command(
        "diff",
        "Compare two artifacts of the same stage. Exit 0 same, 7 different, 3 invalid input.",
        (
            Arg("a", "A", "An artifact (JSON/YAML), or - for stdin."),
            Arg("b", "B", "An artifact of the same stage."),
        ),
        (
            Opt(
                "format",
                ("--format",),
                "json (for scripts) or text.",
                default="text",
                choices=("json", "text"),
            ),
            VIEW_OUTPUT,
            Opt(
                "quiet",
                ("--quiet", "-q"),
                "Print nothing; only the exit status tells (0 same, 7 different), "
                "as `git diff --quiet`.",
                kind="bool",
                default=False,
            ),
            DEBUG,
        ),
        "placement_cli.app.view_commands:diff",
    )


def _codes() -> Command:
    return Command(
        "codes",
        "List the diagnostic codes, or explain one (docs/diagnostics.md).",
        (
            Arg(
                "code",
                "CODE",
                "The code to explain (default: list every code).",
                optional=True,
            ),
        ),
        (
            Opt(
                "format",
                ("--format",),
                "text, or json (the registry as data, for scripts).",
                default="text",
                choices=("text", "json"),
            ),
        ),
        "placement_cli.app.codes_command:command",
    )


def _builders() -> dict[str, Callable[[], Command]]:
    stages = {s.name: partial(_stage, s.name, s.summary, s.solver_options) for s in REGISTRY}
    return {
        "validate": _validate,
        "lower": _lower,
        **stages,
        "run": _run,
        "tree": _tree,
        "execute": lambda: _engine_commands().execute_command(),
        "show": _show,
        "explain": _explain,
        "diff": _diff,
        "profile": _profile,
        "schema": _schema,
        "codes": _codes,
        "import": lambda: _engine_commands().import_command(),
        "calibrate measure": lambda: _engine_commands().calibrate_measure(),
        "calibrate fit": lambda: _engine_commands().calibrate_fit(),
    }


def _engine_commands() -> ModuleType:
    # Lazy: the engine commands read the engine registry; the fast launcher (pipeline
    # commands only) reads this module and must not.
    return import_module("placement_cli.app.engine_commands")


# Commands named `GROUP SUB` are subcommands of GROUP, which has this summary.
GROUPS: dict[str, str] = {
    "calibrate": "Measure hand-offs between engines (measure), and fit the transfer model "
    "a + b*R + c*W + d*R*W to them (fit); docs/calibrate.md.",
}


# Each command is built on first use: `lower` and `tree` read their choices from their
# own modules, which the fast launcher (pipeline commands only) must not import.
NAMES: tuple[str, ...] = tuple(_builders())


@cache
def command(name: str) -> Command:
    """The command called `name` (KeyError when there is none).

    >>> command("validate").handler
    'placement_cli.app.stagecmd:validate'
    """
    cmd = _builders()[name]()
    # Every command takes --diagnostics, --diagnostics-file, --timings, --no-config and
    # --version (and --strict, every command that reads input); the pipeline commands
    # time their own phases, the others their whole run (app/dispatch.py).
    common = (DIAGNOSTICS, DIAGNOSTICS_FILE, *((STRICT,) if _reads(cmd) else ()))
    extra = tuple(o for o in (*common, TIMINGS, NO_CONFIG, VERSION) if o not in cmd.options)
    return msgspec.structs.replace(cmd, options=cmd.options + extra)


def _reads(cmd: Command) -> bool:
    """Whether a command reads an input (its warnings are what --strict judges)."""
    return bool(cmd.args) and cmd.name not in ("profile", "codes")


def commands() -> tuple[Command, ...]:
    """Every command, in the order `--help` lists them."""
    return tuple(command(n) for n in NAMES)


def option(name: str, key: str) -> Opt:
    """The option `key` of command `name`."""
    for o in command(name).options:
        if o.key == key:
            return o
    raise KeyError(key)


def markdown() -> str:
    """The option tables of `docs/cli.md`, one section per command."""
    out = [
        "# Command line",
        "",
        "Generated from `placement_cli/app/commands.py` by `make docs` (`python -m placement_cli.app.commands`);",
        "`tests/test_options.py` fails when this file is stale. Do not edit it by hand.",
        "",
    ]
    for c in commands():
        usage = " ".join(["placement", c.name, *(a.usage for a in c.args), "[OPTIONS]"])
        out += [f"## `{c.name}`", "", c.summary, "", f"    {usage}", ""]
        if c.args:
            out += ["| argument | meaning |", "|---|---|"]
            out += [f"| `{a.usage}` | {a.help} |" for a in c.args]
            out.append("")
        out += ["| option | value | default | meaning |", "|---|---|---|---|"]
        for o in c.options:
            out.append(
                f"| {', '.join(f'`{f}`' for f in o.flags)} | {_value(o)} | {_shown_default(o)} | "
                f"{o.help.replace('|', '/')} |"
            )
        out.append("")
    return "\n".join(out)


def _value(o: Opt) -> str:
    if o.kind == "bool":
        return "flag"
    if o.choices:
        return " / ".join(f"`{c}`" for c in o.choices)
    text = o.metavar or o.kind.upper().replace("STR", "TEXT")
    if o.minimum is not None:
        text += f" >= {o.minimum:g}"
    return text + (" (repeatable)" if o.repeatable else "")


def _shown_default(o: Opt) -> str:
    if o.kind == "bool" or o.default is None:
        return ""
    return f"`{o.default:g}`" if isinstance(o.default, float) else f"`{o.default}`"


if __name__ == "__main__":
    import sys

    sys.stdout.write(markdown())
