"""Every command's arguments and options, declared once.

The typer commands (`app/cli.py`), the fast launcher (`app/launch.py`) and the option
tables of `docs/cli.md` (`python -m placement_cli.app.options`, checked by
`tests/test_options.py`) are all derived from `COMMANDS`. A default or a set of choices
that a stage's own options model already has (`SolveOptions.method`, `TreeOptions`'s
time limit, `lower`'s split modes) is read from that model, not written again.

Nothing here imports typer or pydantic: the fast launcher reads these declarations on
every pipeline command, before it knows whether typer is needed.

>>> [o.key for o in command("solve").options][:4]
['output', 'format', 'quiet', 'debug']
>>> option("solve", "method").choices, option("solve", "method").default
(('auto', 'exact', 'heuristic'), 'auto')
>>> option("run", "out_dir").flags
('--out-dir',)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from typing import Any, Literal, get_args, get_type_hints

from placement_cli.algorithms.solve.options import SolveOptions
from placement_cli.frontends.lower.split import SplitMode
from placement_cli.pipeline.registry import REGISTRY

Kind = Literal["str", "float", "int", "bool"]


@dataclass(frozen=True, slots=True)
class Opt:
    """One option: the keyword its command body gets (`key`), its spellings, its help.

    `kind` is the value's type; `choices` restricts a string; `minimum` bounds a number
    from below; a `repeatable` option collects a list (None when not given); an option
    with `default=None` and no flag kind is optional (None when not given)."""

    key: str
    flags: tuple[str, ...]
    help: str
    kind: Kind = "str"
    default: Any = None
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    repeatable: bool = False
    metavar: str | None = None
    eager: bool = False  # acts while the line is read and ends the process (--version)


@dataclass(frozen=True, slots=True)
class Arg:
    """One positional argument; a `many` argument takes one path or more (files or
    directories), and the command then runs once per file (`app/batch.py`); an
    `optional` one may be left out (None then)."""

    key: str
    metavar: str
    help: str
    many: bool = False
    optional: bool = False

    @property
    def usage(self) -> str:
        """The argument as a usage line shows it (`[CODE]` when optional)."""
        return f"[{self.metavar}]" if self.optional else self.metavar


@dataclass(frozen=True, slots=True)
class Command:
    """A command: its name, its one-line summary (`--help`), its arguments and options,
    and the function that runs it (`module:function`, called with the values by key)."""

    name: str
    summary: str
    args: tuple[Arg, ...]
    options: tuple[Opt, ...]
    handler: str
    phases: bool = False  # the handler prints its own phase times for --timings

    def defaults(self) -> dict[str, Any]:
        """Every option's value when it is not given (eager options act, and give none)."""
        return {o.key: o.default for o in self.options if not o.eager}

    @property
    def many(self) -> Arg | None:
        """The argument that takes many inputs, if the command has one."""
        return next((a for a in self.args if a.many), None)


def _literal_choices(model: type, field: str) -> tuple[str, ...]:
    """The values of a `Literal[...]` field (None excluded) of a dataclass."""
    hint = get_type_hints(model)[field]
    out: list[str] = []
    stack = [hint]
    while stack:  # Literal[...] | None nests: flatten it in order
        h = stack.pop(0)
        args = get_args(h)
        if args and all(isinstance(a, str) for a in args):
            out += args
        else:
            stack[:0] = [a for a in args if a is not type(None)]
    return tuple(out)


def _default(model: type, field: str) -> Any:
    return {f.name: f.default for f in dataclasses.fields(model)}[field]


# --- the options several commands share
OUTPUT = Opt(
    "output", ("-o", "--output"), "Write the artifact here (atomically) instead of stdout."
)
FORMAT = Opt("format", ("--format",), "Artifact format.", default="json", choices=("json", "yaml"))
QUIET = Opt(
    "quiet", ("--quiet", "-q"), "No summary or warnings on stderr.", kind="bool", default=False
)
DEBUG = Opt(
    "debug", ("--debug",), "Show tracebacks for internal errors.", kind="bool", default=False
)
TIMINGS = Opt(
    "timings", ("--timings",), "Print each phase's wall time on stderr.", kind="bool", default=False
)
DIAGNOSTICS = Opt(
    "diagnostics",
    ("--diagnostics",),
    "How errors and warnings are written on stderr: text (FILE: PATH: message), json (one "
    "object a line), github (Actions annotations), sarif (one SARIF 2.1.0 log); with file, "
    "line and column where known.",
    default="text",
    choices=("text", "json", "github", "sarif"),
)
NO_CONFIG = Opt(
    "no_config",
    ("--no-config",),
    "Ignore the project's placement.toml / [tool.placement] (app/config.py).",
    kind="bool",
    default=False,
)
VERSION = Opt(
    "version", ("--version",), "Print the version and exit.", kind="bool", default=False, eager=True
)
INPUT = Arg(
    "path",
    "INPUT...",
    "Plan files, body files, MIR text (.mir) or artifacts (JSON/YAML), or directories of "
    "them, or - for stdin.",
    many=True,
)
JOBS = Opt(
    "jobs",
    ("--jobs", "-j"),
    "With several inputs: how many to run at once (default: the number of cores).",
    kind="int",
    minimum=1,
)
OUT_DIR = Opt(
    "out_dir",
    ("--out-dir",),
    "With several inputs (or a directory): one folder per input here, DIR/NAME/COMMAND.json, "
    "and DIR/summary.json.",
)

# --- solve's options (defaults and choices from `SolveOptions`)
METHOD = Opt(
    "method",
    ("--method",),
    "heuristic: the seed algorithm; exact: proven optimum (or best bound within the limit); "
    "auto: exact first, and the heuristic too when the optimum is not proven in time.",
    default=_default(SolveOptions, "method"),
    choices=_literal_choices(SolveOptions, "method"),
)
TIME_LIMIT = Opt(
    "time_limit",
    ("--time-limit",),
    "Seconds the exact method (and so the optimality proof) may spend.",
    kind="float",
    default=_default(SolveOptions, "time_limit"),
    minimum=0.0,
)
PIN = Opt(
    "pin", ("--pin",), "Run BLOCK on TARGET (repeatable).", repeatable=True, metavar="BLOCK=TARGET"
)
FORBID = Opt(
    "forbid",
    ("--forbid",),
    "Never run BLOCK on TARGET (repeatable).",
    repeatable=True,
    metavar="BLOCK=TARGET",
)
PINS_FILE = Opt(
    "pins_file",
    ("--pins",),
    "Pins from a YAML/JSON file: a mapping BLOCK: TARGET, or a list of "
    "BLOCK=TARGET / {block, target, forbid}.",
    metavar="FILE",
)
WARM_START = Opt(
    "warm_start",
    ("--warm-start",),
    "Start from the assignment of an earlier solve/fuse/islands artifact (blocks matched by id).",
    metavar="ARTIFACT",
)
# --- the front end's options: `lower`, and every command that may lower a body first
LOWER = (
    Opt(
        "targets",
        ("--targets",),
        "Target profile file for a body (default: the body file's profile, else hashql).",
    ),
    Opt(
        "split",
        ("--split",),
        "How a body's blocks are split: runs (default): cut where support changes; "
        "intersection: never cut; per-statement: one block per statement.",
        choices=get_args(SplitMode),
    ),
    Opt(
        "size_cap",
        ("--size-cap",),
        "Information units an unbounded size counts as in a body (default: the file's "
        "size_cap, else unpriceable).",
        kind="float",
        minimum=0.0,
    ),
)
SOLVER = (METHOD, TIME_LIMIT)
SOLVER_STAGE = (METHOD, TIME_LIMIT, PIN, FORBID, PINS_FILE, WARM_START)


def _stage(name: str, summary: str, solves: bool) -> Command:
    opts = (
        OUTPUT,
        FORMAT,
        QUIET,
        DEBUG,
        TIMINGS,
        *(SOLVER_STAGE if solves else ()),
        *LOWER,
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
            Opt(
                "source",
                ("--from",),
                "What the input is: body (a body file or a plan), hashql-mir (the "
                "HashQL compiler's MIR text). Default: hashql-mir for a .mir file, else body.",
                choices=("body", "hashql-mir"),
            ),
            *LOWER,
            Opt(
                "body_name",
                ("--body",),
                "The body to place (default: the file's `place`, else the first).",
            ),
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
            Opt(
                "budget",
                ("--budget", "-k"),
                "Cut budget K (default: the file's budget).",
                kind="int",
                minimum=0,
            ),
            Opt(
                "expand_dag",
                ("--expand-dag",),
                "Duplicate shared sub-plans instead of rejecting a DAG.",
                kind="bool",
                default=False,
            ),
            Opt(
                "include_input",
                ("--include-input",),
                "Write the tree file back into the artifact (default: its name and sha256 only).",
                kind="bool",
                default=False,
            ),
            Opt(
                "time_limit",
                ("--time-limit",),
                "Seconds for the DP; when they run out the artifact says `unsolved` (exit 5).",
                kind="float",
                default=60.0,
                minimum=0.001,
            ),
            OUTPUT,
            FORMAT,
            QUIET,
            DEBUG,
            OUT_DIR,
            JOBS,
        ),
        "placement_cli.app.tree_command:command",
    )


ARTIFACT = Arg(
    "path", "ARTIFACT", "Plan file or artifact (JSON/YAML), or - for stdin; missing stages are run."
)
VIEW_OUTPUT = Opt("output", ("-o", "--output"), "Write here (atomically) instead of stdout.")
VIEW_QUIET = Opt("quiet", ("--quiet", "-q"), "No warnings on stderr.", kind="bool", default=False)
TREE_FILE = Opt(
    "tree",
    ("--tree",),
    "For a tree artifact written without --include-input: the tree file it was computed "
    "from (default: the file its input_ref names, next to the artifact or in the current "
    "directory).",
    metavar="FILE",
)


def _validate() -> Command:
    return Command(
        "validate",
        "Check a plan, or an artifact and every section in it (a tree artifact against its tree "
        "file); exit 3 listing every problem.",
        (INPUT,),
        (TREE_FILE, QUIET, DEBUG, TIMINGS, *LOWER, JOBS),
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
            *LOWER,
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
            Opt(
                "time_limit",
                ("--time-limit",),
                "Seconds the solve may spend when the input has no solve section.",
                kind="float",
                default=TIME_LIMIT.default,
                minimum=0.0,
            ),
            TREE_FILE,
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
            Opt(
                "time_limit",
                ("--time-limit",),
                "Seconds for all the pinned solves together (and for the solve "
                "itself when the input has none).",
                kind="float",
                default=10.0,
                minimum=0.0,
            ),
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
        "show": _show,
        "explain": _explain,
        "diff": _diff,
        "profile": _profile,
        "schema": _schema,
        "codes": _codes,
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
    # Every command takes --diagnostics, --timings, --no-config and --version; the pipeline commands
    # time their own phases, the others their whole run (app/dispatch.py).
    extra = tuple(o for o in (DIAGNOSTICS, TIMINGS, NO_CONFIG, VERSION) if o not in cmd.options)
    return dataclasses.replace(cmd, options=cmd.options + extra)


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
        "Generated from `placement_cli/app/options.py` by `make docs` (`python -m placement_cli.app.options`);",
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
