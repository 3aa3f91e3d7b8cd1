"""The declaration types of the command line (`Opt`, `Arg`, `Command`) and the options
several commands share, each declared once; `app/commands.py` says which command takes
which. The typer commands (`app/cli.py`), the fast launcher (`app/launch.py`), the
settings `placement.toml` may give (`app/config.py`) and the option tables of
`docs/cli.md` are all derived from these declarations.

A stage's own options are not declared here: its options model (`SolveOptions`,
`LowerOptions`, `TreeOptions`) declares them on its fields (`core/option_field.py`),
and `model_options` derives their `Opt`s: flags, help, kind, choices (the field's
`Literal`), default (the field's) and lower bound.

Nothing here imports typer or pydantic: the fast launcher reads these declarations on
every pipeline command, before it knows whether typer is needed.

>>> [o.key for o in SOLVE], METHOD.choices, METHOD.default, OUT_DIR.flags
(['method', 'time_limit', 'pin', 'forbid', 'pins_file', 'warm_start'], ('auto', 'exact', 'heuristic'), 'auto', ('--out-dir',))
"""

from __future__ import annotations

from typing import Any

import msgspec

from placement_cli.algorithms.solve.options import SolveOptions
from placement_cli.core.option_field import Kind, flags_of, hints, literal_choices, value_kind
from placement_cli.frontends.lower.options import LowerOptions


class Opt(msgspec.Struct, frozen=True):
    """One option: the keyword its command body gets (`key`), its spellings, its help.

    `kind` is the value's type; `choices` restricts a string; `minimum` bounds a number
    from below; a `repeatable` option collects a list (None when not given); an option
    with `default=None` and no flag kind is optional (None when not given). A
    `settable` option may be set by the project's configuration (`app/config.py`);
    `path`: a settable path, relative to the configuration file."""

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
    settable: bool = False
    path: bool = False


class Arg(msgspec.Struct, frozen=True):
    """One positional argument; a `many` argument takes one path or more (files or
    directories), and the command then runs once per file (`app/batch.py`); an
    `optional` one may be left out (None then); a `several` one takes one value or
    more that the command reads together (a list, never a batch)."""

    key: str
    metavar: str
    help: str
    many: bool = False
    optional: bool = False
    several: bool = False
    # One or more values the handler gets together as a list (`calibrate fit A.csv
    # B.csv` fits them as one set), never a batch of runs as `many` is.
    gather: bool = False

    @property
    def usage(self) -> str:
        """The argument as a usage line shows it (`[CODE]` when optional)."""
        return f"[{self.metavar}]" if self.optional else self.metavar


class Command(msgspec.Struct, frozen=True):
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


def model_options(model: type, *, plain: bool = False) -> tuple[Opt, ...]:
    """The options a stage's options model declares on its fields, in field order: the
    field's flags, help, metavar and bound; its `Literal` values as choices; its
    default. An option the handler turns into the field's value (`Flag.kind`: a file
    it reads, text it splits) is of that kind, with no default; `plain`: only the
    options that are the field's value as given.

    >>> [(o.key, o.kind, o.default) for o in model_options(LowerOptions)][1:]
    [('targets', 'str', None), ('split', 'str', None), ('size_cap', 'float', None)]
    """
    types = hints(model)
    out = []
    for f, flag in flags_of(model):
        converted = flag.kind is not None
        if plain and converted:
            continue
        out.append(
            Opt(
                flag.key or f.name,
                flag.flags,
                flag.help,
                kind=flag.kind or value_kind(types[f.name]),
                default=None if converted or flag.repeatable else f.default,
                choices=() if converted else literal_choices(types[f.name]),
                minimum=flag.minimum,
                repeatable=flag.repeatable,
                metavar=flag.metavar,
                settable=flag.settable,
                path=flag.path,
            )
        )
    return tuple(out)


def settable(options: tuple[Opt, ...]) -> tuple[str, ...]:
    """The keys a project file may set among `options`: each settable option's long
    flag without its dashes, in order.

    >>> settable((METHOD, PIN, FORMAT))
    ('method', 'format')
    """
    return tuple(
        dict.fromkeys(f[2:] for o in options if o.settable for f in o.flags if f[:2] == "--")
    )


def solve_option(key: str) -> Opt:
    """`solve`'s option `key`, as its model declares it."""
    return next(o for o in SOLVE if o.key == key)


# --- the options several commands share
OUTPUT = Opt(
    "output", ("-o", "--output"), "Write the artifact here (atomically) instead of stdout."
)
FORMAT = Opt(
    "format",
    ("--format",),
    "Artifact format.",
    default="json",
    choices=("json", "yaml"),
    settable=True,
)
QUIET = Opt(
    "quiet",
    ("--quiet", "-q"),
    "No summary or warnings on stderr (a machine-readable --diagnostics report keeps them).",
    kind="bool",
    default=False,
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
    "How errors and warnings are reported, one document per call (every input, any exit "
    "code): text (FILE: PATH: message), json (one object a line), github (Actions "
    "annotations), sarif (one SARIF 2.1.0 log); with file, line and column where known. "
    "On stderr, a machine format has the stream to itself.",
    default="text",
    choices=("text", "json", "github", "sarif"),
)
DIAGNOSTICS_FILE = Opt(
    "diagnostics_file",
    ("--diagnostics-file",),
    "Write the --diagnostics report to this file (atomically) instead of stderr; stderr "
    "keeps the human lines.",
    metavar="PATH",
)
STRICT = Opt(
    "strict",
    ("--strict",),
    "Every warning is an error: reported as one, and a call that would exit 0 exits 3 "
    "(also strict = true in placement.toml).",
    kind="bool",
    default=False,
    settable=True,
)
NO_CONFIG = Opt(
    "no_config",
    ("--no-config",),
    "Ignore the project's configuration (placement.toml, or [tool.placement] in pyproject.toml).",
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
    settable=True,
)
OUT_DIR = Opt(
    "out_dir",
    ("--out-dir",),
    "With several inputs (or a directory): one folder per input here, DIR/NAME/COMMAND.json, "
    "and DIR/summary.json.",
)

# --- the stages' own options, declared on their options models
SOLVE = model_options(SolveOptions)
METHOD, TIME_LIMIT = solve_option("method"), solve_option("time_limit")
PIN = solve_option("pin")
# --- the front end's options: `lower`, and every command that may lower a body first
# (`--body`, then `--targets`, `--split`, `--size-cap`)
LOWER = model_options(LowerOptions)
# --- what the input is, and which of its bodies to place: every command that reads one
FROM = Opt(
    "source",
    ("--from",),
    "What the input is: body (a body file, a plan or an artifact), hashql-mir (the HashQL "
    "compiler's MIR text). Default: hashql-mir for a .mir file or text that starts like "
    "MIR (standard input too), else body.",
    choices=("body", "hashql-mir"),
)
# What the input is and how a body in it is lowered: every command that reads one.
INPUT_KIND = (FROM, *LOWER)
# `run`'s solver options: the plain ones (pins and warm starts are a single stage's).
SOLVER = model_options(SolveOptions, plain=True)
# Settings of a call rather than of an input's stages that a project file may set.
CALL_SETTINGS = (FORMAT, JOBS, STRICT)


ARTIFACT = Arg(
    "path", "ARTIFACT", "Plan file or artifact (JSON/YAML), or - for stdin; missing stages are run."
)
VIEW_OUTPUT = Opt("output", ("-o", "--output"), "Write here (atomically) instead of stdout.")
VIEW_QUIET = Opt("quiet", ("--quiet", "-q"), "No warnings on stderr.", kind="bool", default=False)
NAME = Opt("name", ("--name",), "The name written into what the command makes.")
TRANSFER = Opt(
    "transfer",
    ("--transfer",),
    "A transfer profile (`calibrate fit`): its models replace the file's "
    "`transfer.linear` for those engine pairs (docs/calibrate.md).",
    metavar="PROFILE",
)
TREE_FILE = Opt(
    "tree",
    ("--tree",),
    "For a tree artifact written without --include-input: the tree file it was computed "
    "from (default: the file its input_ref records, by path from the artifact's folder or "
    "the current directory, else by name; the first with the recorded sha256).",
    metavar="FILE",
)
