"""The report of `placement execute` (`docs/execute.md`), format 1: what the model
predicted for each executed placement against what the engines took.

Times are milliseconds. A measured time is a `Spread` over the timed repeats (median,
min, max, and every repeat in order). Lists follow the tree's preorder (fragments,
cuts) and the order placements were executed in (`placements`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from placement_cli.core.cache_modes import Caches


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class Spread(_Strict):
    """Measured milliseconds over the timed repeats."""

    median: float
    min: float
    max: float
    runs: list[float]


class TreeNodeInfo(_Strict):
    """One operator of the tree (for `show`): id, op, children ids, and its predicted
    self-time on each engine that runs it."""

    id: str
    op: str | None = None
    children: list[str] = []
    time: dict[str, float] = {}


class FragmentReport(_Strict):
    """A maximal subtree on one engine. `predicted_ms`: the critical path inside it (its
    inputs counted 0); `measured`: its run, from its start to its rows in hand,
    including receiving its inputs; `rows`/`bytes`: its output (what its consumer
    receives, the root's: the result)."""

    root: str
    engine: str
    nodes: list[str]
    inputs: list[str]
    predicted_ms: float
    measured: Spread | None = None
    rows: int | None = None
    bytes: int | None = None


class CutReport(_Strict):
    """A cut edge: the child's rows cross from `from_engine` to `to_engine`.
    `predicted_ms`: the transfer model; `measured`: the hand-off timed alone (the
    receiving engine takes the Arrow table and scans it); `rows`, `bytes` (Arrow),
    `width` (bytes per row) handed over."""

    child: str
    parent: str
    from_engine: str
    to_engine: str
    predicted_ms: float
    measured: Spread | None = None
    rows: int | None = None
    bytes: int | None = None
    width: float | None = None
    # Why the hand-off could not be timed alone (the placement's runs still count).
    error: str | None = None


class PlacementReport(_Strict):
    """One executed placement. `label`: its engines in words (`duckdb`, or `duckdb;
    n4->datafusion`); `status`: `ok`, `mismatch` (rows differ from the reference:
    an error), `not-executable` (an engine failed: `error` says why) or `skipped` (no
    source for an engine). `predicted_ms` is the model's latency of this assignment,
    `measured` the wall time from the first fragment's start to the result."""

    label: str
    # `as-written`: the whole query as written, on its one engine's own planner.
    sql: Literal["plan", "as-written"] = "plan"
    chosen: bool = False
    single_engine: str | None = None
    engines: dict[str, str]
    cuts: list[CutReport]
    fragments: list[FragmentReport]
    predicted_ms: float
    measured: Spread | None = None
    # CPU milliseconds of this process per timed run (in-process engines' threads too).
    cpu: Spread | None = None
    status: Literal["ok", "mismatch", "not-executable", "skipped"]
    error: str | None = None
    rank_predicted: int | None = None
    rank_measured: int | None = None
    # Rounds this placement was faster than the fastest single-engine way, run by run.
    wins: int | None = None


class Reference(_Strict):
    """The single-engine result every placement's rows are checked against."""

    engine: str
    rows: int
    ms: float


class Summary(_Strict):
    """The whole: the chosen placement against the best single engine (measured medians),
    the best measured and the best predicted placement (labels), Spearman's rank
    correlation between predicted and measured latency over the placements that ran
    (`null` with fewer than two, or a constant side), and the counts."""

    chosen: str | None = None
    chosen_predicted_ms: float | None = None
    chosen_measured_ms: float | None = None
    best_single: str | None = None
    best_single_ms: float | None = None
    best_measured: str | None = None
    best_predicted: str | None = None
    spearman: float | None = None
    placements: int
    executed: int
    not_executable: int
    mismatches: int
    skipped: int


class Machine(_Strict):
    """The cores this process could use, the wall seconds of the runs, the other
    processes' average CPU use meanwhile in cores (null off Linux), and whether that
    reached a quarter of a core (`shared`: the `shared-cores` warning)."""

    cores: int
    seconds: float
    other_cores: float | None = None
    shared: bool = False


class Verify(_Strict):
    """`execute --verify`: the candidates (single-engine ways, then splits), the rounds
    and the extra rounds of every candidate run after them while ways were still in
    question, the fastest single-engine way and the best split (medians, ms), the best
    split's paired wins over `pairs` rounds, the one-sided sign test's `p`, its median `gain`,
    the thresholds, what was adopted and why, and the seconds the runs took."""

    candidates: int
    single_ways: int
    splits: int
    rounds: int
    extra_rounds: int = 0
    min_gain: float
    alpha: float
    fastest_single: str | None = None
    fastest_single_ms: float | None = None
    best_split: str | None = None
    best_split_ms: float | None = None
    wins: int | None = None
    pairs: int | None = None
    p: float | None = None
    gain: float | None = None
    adopted: str | None = None
    reason: str
    seconds: float


class ExecuteSection(_Strict):
    """The `execute` section."""

    name: str | None = None
    input_ref: dict[str, str] = {}
    engines: list[str]
    root: str
    tree: list[TreeNodeInfo]
    budget: int | None = None
    all: bool = False
    repeat: int = Field(ge=1)
    warmup: int = Field(ge=0)
    # The measuring processes (`execute --forks`), each with its own warm-up and `repeat`
    # rounds, whose runs are pooled; absent: one.
    forks: int | None = Field(default=None, ge=2)
    # The threads each engine ran with (None: the engine's own configuration decides).
    threads: dict[str, int | None] | None = None
    # The CPU caches each timed run started with (`--caches`); absent: not recorded.
    caches: Caches | None = None
    machine: Machine | None = None
    # How the timed runs were ordered: every way once per round, a fresh order each.
    order: Literal["interleaved"] | None = None
    verify: Verify | None = None
    reference: Reference
    placements: list[PlacementReport]
    summary: Summary


class Diagnostic(_Strict):
    severity: Literal["error", "warning", "info"]
    code: str
    message: str
    blocks: list[str] = []


class ExecuteArtifact(_Strict):
    """`{"format_version": 1, "kind": "execute", "status", "diagnostics", "execute"}`."""

    format_version: Literal[1]
    kind: Literal["execute"]
    # `stopped`: the run's own error (a server gone) ended it; what finished is here.
    status: Literal["ok", "mismatch", "stopped"]
    diagnostics: list[Diagnostic]
    execute: ExecuteSection
