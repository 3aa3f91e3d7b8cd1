"""The declaration types of the command line (`Opt`, `Arg`, `Command`) and the options
several commands share, each declared once; `app/commands.py` says which command takes
which. The typer commands (`app/cli.py`), the fast launcher (`app/launch.py`) and the
option tables of `docs/cli.md` are all derived from these declarations. A default or a
set of choices that a stage's own options model already has (`SolveOptions.method`,
`lower`'s split modes) is read from that model, not written again.

Nothing here imports typer or pydantic: the fast launcher reads these declarations on
every pipeline command, before it knows whether typer is needed.

>>> METHOD.choices, METHOD.default, OUT_DIR.flags
(('auto', 'exact', 'heuristic'), 'auto', ('--out-dir',))
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal, get_args, get_type_hints

from placement_cli.algorithms.solve.options import SolveOptions
from placement_cli.frontends.lower.split import SplitMode

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
# --- what the input is, and which of its bodies to place: every command that reads one
FROM = Opt(
    "source",
    ("--from",),
    "What the input is: body (a body file, a plan or an artifact), hashql-mir (the HashQL "
    "compiler's MIR text). Default: hashql-mir for a .mir file or text that starts like "
    "MIR (standard input too), else body.",
    choices=("body", "hashql-mir"),
)
BODY = Opt(
    "body_name",
    ("--body",),
    "The body to place (default: the file's `place`, else its one graph-read filter, else "
    "the first). MIR text with several filters and no --body: each is placed (DIR/NAME/BODY/ "
    "with --out-dir; `run` and `validate` always), or, writing one output, a usage error "
    "naming them.",
)
INPUT_KIND = (FROM, BODY)
SOLVER = (METHOD, TIME_LIMIT)
SOLVER_STAGE = (METHOD, TIME_LIMIT, PIN, FORBID, PINS_FILE, WARM_START)


ARTIFACT = Arg(
    "path", "ARTIFACT", "Plan file or artifact (JSON/YAML), or - for stdin; missing stages are run."
)
VIEW_OUTPUT = Opt("output", ("-o", "--output"), "Write here (atomically) instead of stdout.")
VIEW_QUIET = Opt("quiet", ("--quiet", "-q"), "No warnings on stderr.", kind="bool", default=False)
TREE_FILE = Opt(
    "tree",
    ("--tree",),
    "For a tree artifact written without --include-input: the tree file it was computed "
    "from (default: the file its input_ref records, by path from the artifact's folder or "
    "the current directory, else by name; the first with the recorded sha256).",
    metavar="FILE",
)
