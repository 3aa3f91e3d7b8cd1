"""The operator-tree file format of `placement tree` (`docs/tree.md`), version 1.

Strict, frozen, extra fields forbidden, finite numbers only, as the plan format: a typo
or a YAML 1.1 surprise is an error with a field path, never a silently different tree.
Cross-field rules (known engines, known children, one root, no cycles) are checked by
`placement_cli.ir.tree.check` (through `read.parse_tree`), which reports them with the same kind of path.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from placement_cli.core.cache_modes import Caches
from placement_cli.core.limits import COUNT_MAX

Cost = Annotated[float, Field(ge=0)]
Name = Annotated[str, Field(min_length=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        strict=True,
        allow_inf_nan=False,
        validate_default=False,
        populate_by_name=True,
    )


class LinearTransfer(_Strict):
    """Cost of moving a child's output between two engines, `a + b*R + c*W + d*R*W`:
    `fixed + per_row * rows + per_width * row_width + per_byte * (rows * row_width)`,
    with R = rows and W = row_width (bytes) of the child."""

    fixed: Cost = 0.0
    per_row: Cost = 0.0
    per_width: Cost = 0.0
    per_byte: Cost = 0.0


class ExplicitTransfer(_Strict):
    """The cost of moving `child`'s output from engine `from` to engine `to`; overrides the
    linear model for that one edge (every copy of the child under `--expand-dag`)."""

    child: Name
    from_: Name = Field(alias="from")
    to: Name
    cost: Cost


class ProfileRef(_Strict):
    """A transfer profile (`calibrate fit`) by its file's name and the sha256 of its
    bytes: never a path, so the same file records the same bytes wherever it is."""

    name: Name
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class Transfer(_Strict):
    """The transfer model. A pair of engines with neither an explicit entry, a `linear`
    entry nor a `default` cannot be cut between: such a cut is not allowed.

    `profile` names the transfer profile whose models were written into `linear`
    (`placement import --transfer`); informative, the models are what counts."""

    default: LinearTransfer | None = None
    linear: dict[str, dict[str, LinearTransfer]] = {}
    explicit: list[ExplicitTransfer] = []
    profile: ProfileRef | None = None


class Measured(_Strict):
    """Wall-clock times (ms) of one thing run `runs` times after a warm-up: their
    median, fastest and slowest (the spread of the repeats)."""

    median: Cost
    min: Cost
    max: Cost
    runs: Annotated[int, Field(ge=1, le=COUNT_MAX)]


class TreeNode(_Strict):
    """One operator. `time[engine]` is its predicted self-time there; an engine that is
    missing or null cannot run it. `rows`/`row_width` (bytes) size its output.

    From `import sql --probe`: `plan_node` is the node's relation in `TreeFile.query`'s
    plan (its index in preorder, the root 0), `subtree[engine]` the times of running
    the node's whole subtree alone there, from which `time` was derived; `no_cut`, why
    the node's output cannot cross to another engine exactly (no placement cuts it from
    its parent); `above[engine]` (`--in-pipeline`), the times of running the rest of
    the query there with the node's result handed in as a table: the root's subtree
    less that is what the node's subtree costs inside the engine's pipeline."""

    id: Name
    op: str | None = None
    children: list[str] = []
    time: dict[str, Cost | None] = {}
    rows: Cost | None = None
    row_width: Cost | None = None
    plan_node: Annotated[int, Field(ge=0, le=COUNT_MAX)] | None = None
    subtree: dict[str, Measured] = {}
    no_cut: Annotated[str, Field(min_length=1)] | None = None
    above: dict[str, Measured] = {}


class Query(_Strict):
    """What `execute` needs to run any placement of a probed tree: the SQL, its plan
    (DataFusion's optimized plan as Substrait JSON; nodes name their relation by
    `plan_node`), the engines that ran fragments of it from SQL re-planned by
    themselves (DataFusion's unparser) rather than from the plan, and the probe's
    settings: its repeats, its warm-up runs, the threads each engine ran with
    (None where the engine's own configuration decides, as PostgreSQL's server), the
    processes whose runs it pooled and the CPU caches each timed run started with."""

    sql: str
    substrait: dict[str, Any] | None = None
    # The query is one node, run as written by each engine (the planner could not plan
    # it): no plan, no fragments.
    native: bool = False
    replanned: list[Name] = []
    repeat: Annotated[int, Field(ge=1, le=COUNT_MAX)] | None = None
    warmup: Annotated[int, Field(ge=0, le=COUNT_MAX)] | None = None
    threads: dict[Name, Annotated[int, Field(ge=1, le=COUNT_MAX)] | None] | None = None
    # The processes the probe ran in, their runs pooled (`--forks`); absent: one.
    forks: Annotated[int, Field(ge=2, le=COUNT_MAX)] | None = None
    # The CPU caches each timed run started with (`--caches`); absent: not recorded
    # (a tree probed before it was, its runs as they fell: warm).
    caches: Caches | None = None
    # Each engine on the query as written (its own planner), timed as a node's subtree:
    # the single-engine ways a placement is judged against.
    as_written: dict[Name, Measured] = {}


class TreeFile(_Strict):
    """An operator tree to place: engines, operators, transfers and the cut budget."""

    version: Literal[1]
    name: str | None = None
    engines: list[Name] = Field(min_length=1)
    # Engines whose times are a planner's cost estimates (cost units, not measured
    # milliseconds): `placement import` of an EXPLAIN without ANALYZE marks them.
    estimated: list[Name] = []
    budget: Annotated[int, Field(ge=0)] | None = None
    root: str | None = None
    nodes: list[TreeNode] = Field(min_length=1)
    transfer: Transfer = Transfer()
    # The query the tree was probed from (`import sql --probe`), for `execute`.
    query: Query | None = None
