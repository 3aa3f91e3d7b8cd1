"""The commands that run real engines, declared as every command is (a function that
returns its `Command`, listed in `app/commands.py`): `import`, `execute`, `calibrate
measure`, `calibrate fit`. Their engine options are `EngineOptions`' fields
(`engines/options.py`), each command taking the ones it uses; their handlers live in
their own modules (`app/import_command.py`, `app/execute_command.py`,
`app/calibrate_command.py`).

Read only when typer builds these commands (never by the fast launcher): the engine
registry it reads (~4 ms) imports no engine package.
"""

from __future__ import annotations

import msgspec

from placement_cli.app.options import (
    DEBUG,
    FORMAT,
    NAME,
    OUTPUT,
    QUIET,
    TRANSFER,
    TREE_FILE,
    Arg,
    Command,
    Opt,
    model_options,
)
from placement_cli.engines.options import EngineOptions
from placement_cli.engines.registry import DEFAULT_PAIRS, NAMES
from placement_cli.ir.tree.options import TreeOptions

# The reader of each format `import` takes (`module:function`, imported only when used).
FORMATS: dict[str, str] = {
    "postgres-explain": "placement_cli.frontends.engine_plans.postgres:read",
    "duckdb-profile": "placement_cli.frontends.engine_plans.duckdb:read",
    "datafusion-metrics": "placement_cli.frontends.engine_plans.datafusion:read",
}


def engine_options(*keys: str, **defaults: int) -> tuple[Opt, ...]:
    """The options of `EngineOptions` named by `keys`, in the model's field order;
    `defaults`: a command's own default for some of them."""
    return tuple(
        msgspec.structs.replace(o, default=defaults[o.key]) if o.key in defaults else o
        for o in model_options(EngineOptions)
        if o.key in keys
    )


def _tree_budget(help: str, default: int | None) -> Opt:
    """`tree`'s `--budget`, as `TreeOptions` declares it, with this command's meaning."""
    budget = next(o for o in model_options(TreeOptions) if o.key == "budget")
    return msgspec.structs.replace(budget, help=help, default=default)


def import_command() -> Command:
    return Command(
        "import",
        "Make a tree file for `placement tree` from the plans and profiles engines print "
        "(docs/import.md).",
        (
            Arg(
                "plan_format",
                "FORMAT",
                f"What the files are: {', '.join(FORMATS)}, or sql (a query, with --probe).",
            ),
            Arg(
                "files",
                "FILE...",
                "One file per engine, all of one query (their plans must have the same shape); "
                "FORMAT:FILE reads one file as another format; - for stdin.",
                several=True,
            ),
        ),
        (
            Opt(
                "engine",
                ("--engine",),
                "The engine of each file, in order (repeatable; default: the format's "
                "engine, e.g. postgres for postgres-explain).",
                repeatable=True,
                metavar="NAME",
            ),
            _tree_budget(
                "The cut budget K the tree file carries (default: none; `tree --budget`).", None
            ),
            msgspec.structs.replace(NAME, help="The tree's name (default: the first file's name)."),
            msgspec.structs.replace(
                TRANSFER,
                help="A transfer profile (`calibrate fit`): its models written into the tree "
                "file's `transfer.linear`, its name and sha256 into `transfer.profile`.",
            ),
            Opt(
                "probe",
                ("--probe",),
                "sql: time every subtree of the query's plan on every engine (docs/probe.md).",
                kind="bool",
                default=False,
            ),
            Opt(
                "handoffs",
                ("--handoffs",),
                "With --probe: also time each node's own result handed to every other engine "
                "(taken and read whole there) and write those times as the tree's explicit "
                "transfers, which any transfer model gives way to.",
                kind="bool",
                default=False,
            ),
            Opt(
                "in_pipeline",
                ("--in-pipeline",),
                "With --probe: also time, for every node, the rest of the query on each engine "
                "with the node's result handed in (`above` in the tree file): what its subtree "
                "costs inside the pipeline, which `tree --latency measured` uses. About doubles "
                "the probe's runs.",
                kind="bool",
                default=False,
            ),
            *engine_options(
                "db", "pg", "engines", "repeat", "warmup", "threads", "forks", "caches"
            ),
            OUTPUT,
            FORMAT,
            QUIET,
            DEBUG,
        ),
        "placement_cli.app.import_command:command",
    )


def execute_command() -> Command:
    return Command(
        "execute",
        "Run a tree placement on the real engines; report predicted against measured "
        "time, every result checked against a single engine.",
        (
            Arg(
                "path",
                "TREE_ARTIFACT",
                "A `tree` artifact (its placement is run), or a tree file (placed first, with "
                "its budget); the tree file must record its query (`import sql --probe`).",
            ),
        ),
        (
            *engine_options("db", "pg", "repeat", "warmup", "threads", "forks", "caches"),
            Opt(
                "all",
                ("--all",),
                "Execute every placement with at most --budget cuts that the tree allows (each "
                "single engine among them), and rank them.",
                kind="bool",
                default=False,
            ),
            _tree_budget("Cuts per placement for --all and --verify.", 1),
            Opt(
                "verify",
                ("--verify",),
                "Run the model's N best splits and every single-engine way in interleaved "
                "rounds (at least 5) and adopt a split only when it beats the fastest "
                "single-engine way in every paired round (or by a sign test) and by 5% or "
                "more; the decision goes to --placed-out.",
                kind="int",
                minimum=0,
                metavar="N",
            ),
            Opt(
                "placed_out",
                ("--placed-out",),
                "With --verify: write the tree artifact again with the verified decision "
                "(`tree.decision`, rule `verified`) for `show`, `explain` and a later "
                "`execute`.",
                metavar="FILE",
            ),
            Opt(
                "result",
                ("--result",),
                "Write the chosen placement's rows here: Arrow IPC (.arrow, .feather, .ipc), "
                "Parquet (.parquet) or CSV (.csv), by the name's ending.",
                metavar="FILE",
            ),
            Opt(
                "calibrate_out",
                ("--calibrate-out",),
                "Write every measured hand-off as the CSV `calibrate fit` reads "
                "(src,dst,rows,width,ms,repeat).",
                metavar="FILE",
            ),
            Opt(
                "times_out",
                ("--times-out",),
                "Write the measured per-node times (node,engine,subtree_ms,self_ms,runs) as CSV.",
                metavar="FILE",
            ),
            Opt(
                "tree_out",
                ("--tree-out",),
                "Write the tree file again with the measured self-times in place of its own "
                "(where measured): the tree the next `placement tree` places.",
                metavar="FILE",
            ),
            Opt(
                "sql",
                ("--sql",),
                "The query, for a tree file that records none; planned again in DataFusion, its "
                "plan's nodes must be the tree's.",
                metavar="FILE",
            ),
            msgspec.structs.replace(
                TRANSFER,
                help="The transfer profile the placement was made with (default: the one "
                "the tree artifact names, found as its tree file is); for a tree file, "
                "applied as `tree --transfer` applies it.",
            ),
            TREE_FILE,
            OUTPUT,
            QUIET,
            DEBUG,
        ),
        "placement_cli.app.execute_command:command",
    )


def calibrate_measure() -> Command:
    pairs = ",".join(f"{s}:{d}" for s, d in DEFAULT_PAIRS)
    return Command(
        "calibrate measure",
        "Time hand-offs of R rows of W bytes between engines, by the route execution "
        "takes, into the CSV `calibrate fit` reads (docs/calibrate.md).",
        (),
        (
            Opt(
                "pairs",
                ("--pairs",),
                f"The directions, SRC:DST,... of {', '.join(NAMES)} (default: those of "
                f"{pairs} whose engines the sources give).",
            ),
            # Five runs a point: a fit weighs each point by its median.
            *engine_options("db", "pg", "repeat", "warmup", "threads", repeat=5),
            Opt(
                "rows",
                ("--rows",),
                "Row counts, N,N,... (default: per direction, docs/calibrate.md).",
                metavar="N,...",
            ),
            Opt(
                "widths",
                ("--widths",),
                "Bytes per row, W,W,...",
                default="16,64,256",
                metavar="W,...",
            ),
            OUTPUT,
            QUIET,
            DEBUG,
        ),
        "placement_cli.app.calibrate_command:measure",
    )


def calibrate_fit() -> Command:
    return Command(
        "calibrate fit",
        "Fit the transfer model a + b*R + c*W + d*R*W per direction to measured hand-offs: "
        "R², held-out error (docs/calibrate.md).",
        (
            Arg(
                "files",
                "CSV...",
                "The measurement CSV files (src,dst,rows,width,ms[,repeat]), fitted together.",
                several=True,
            ),
        ),
        (
            Opt(
                "weights",
                ("--weights",),
                "relative (each point by 1/T: the relative error is minimised) or none.",
                default="relative",
                choices=("relative", "none"),
            ),
            Opt(
                "reduce",
                ("--reduce",),
                "The runs of one point (same src, dst, rows, width) become one point: their "
                "median, their min (contention only adds time), or none (every run a point).",
                default="median",
                choices=("median", "min", "none"),
            ),
            msgspec.structs.replace(NAME, help="The profile's name."),
            OUTPUT,
            QUIET,
            DEBUG,
        ),
        "placement_cli.app.calibrate_command:fit",
    )
