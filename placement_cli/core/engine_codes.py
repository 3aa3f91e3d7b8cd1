"""The diagnostic codes of the commands that read or run real engines (`execute`,
`import`), in the order `placement codes` lists them; part of `core/codes.py`'s
`CODES`, the one registry, kept apart as the rules of lower's eligibility are
(`core/rule_codes.py`).
"""

from __future__ import annotations

from placement_cli.core.code_record import Code

ENGINE_CODES: tuple[Code, ...] = (
    # ------------------------------------------------------------------ execute
    Code(
        "result-mismatch",
        ("error",),
        ("execute",),
        "a placement returned other rows than the single-engine reference",
        "`placement execute` checks every placement's rows against the whole query run on "
        "one engine (the same rows as a multiset, numbers equal within 0.01). A placement "
        "whose rows differ is a wrong answer, not a timing: its times are not reported, "
        "the report's status is `mismatch`. Look at the fragment runner's SQL for the "
        "fragments of that placement (a re-planned fragment may change what a subtree "
        "means).",
        (8,),
    ),
    Code(
        "not-executable",
        ("warning",),
        ("execute",),
        "an engine could not run a fragment of a placement",
        "An engine failed on a fragment (it cannot run that subtree as given, an "
        "unsupported type or function, a statement timeout): the placement is listed with "
        "the engine's reason and left out of the ranking.",
    ),
    Code(
        "model-ranks-badly",
        ("warning",),
        ("execute",),
        "the predicted latencies rank the placements badly",
        "Over `execute --all`, Spearman's rank correlation between predicted and measured "
        "latency is below 0.5: the tree's self-times or transfer model do not order the "
        "placements as the engines do. Feed the measurements back (`--calibrate-out`, "
        "`--times-out`) and place again; repeat on a quiet machine before trusting either.",
    ),
    Code(
        "predicted-best-loses",
        ("warning",),
        ("execute",),
        "the placement the model predicts fastest is slower than a single engine",
        "Among the executed placements, the one with the least predicted latency took "
        "longer (median) than the best single-engine run: a split chosen by this model "
        "would not pay off here.",
    ),
    Code(
        "run-stopped",
        ("error",),
        ("execute",),
        "the run's own error ended `execute` before every way ran",
        "A source went away while the placements ran (a PostgreSQL server shut down or "
        "its connection lost; the message names the server without its password): the "
        "report is written with every way as far as it got (those never reached are "
        "`skipped`, saying why), its status `stopped`, and the command exits 6. An "
        "engine's own refusal of a query is never this: that is `not-executable`.",
        (6,),
    ),
    Code(
        "shared-cores",
        ("warning",),
        ("execute",),
        "other work was running on the cores the runs were timed on",
        "While the placements were timed, other processes (a PostgreSQL server on this "
        "machine among them) used a quarter of a core or more on average, measured from "
        "every CPU's busy time less this process's own: the engines shared cores, so the "
        "times are slower and noisier than on a quiet machine. The report's `machine` "
        "records the cores and that share; the rounds are interleaved, so the ways share "
        "the noise alike, but compare absolute times only from a quiet machine.",
    ),
    Code(
        "threads-differ",
        ("warning",),
        ("execute",),
        "the engines run with other threads than the tree's times were measured with",
        "The tree file records the threads each engine was probed with (`query.threads`, "
        "`import sql --probe --threads`), and `execute` runs some engine with another "
        "number (its own `--threads`, by default the cores): the predicted latencies are "
        "times taken with the probe's threads, so they are not this run's. On a machine "
        "of few cores the difference is large both ways (one thread per engine avoids "
        "oversubscribing the cores when two engines work at once, two make one engine "
        "faster alone). Give `execute` the probe's `--threads` to compare like with like.",
    ),
    Code(
        "caches-differ",
        ("warning",),
        ("execute",),
        "the runs start with other CPU caches than the tree's times were measured with",
        "The tree file records the CPU caches each of the probe's timed runs started with "
        "(`query.caches`, `import sql --probe --caches`; absent in a tree probed before it "
        "was recorded: warm), and `execute` times its runs with the other (`--caches`, by "
        "default cold): a run that starts cold pays to bring its data and code back into "
        "the caches, so the predicted latencies are not this run's. Give `execute` the "
        "probe's `--caches` to compare like with like.",
    ),
    Code(
        "split-rejected",
        ("info",),
        ("execute",),
        "`execute --verify` kept the fastest single-engine way",
        "No split that was run beat the fastest single-engine way in every paired round "
        "(or by a one-sided sign test at 5%) and by at least 5% (median): the decision "
        "written to `--placed-out` is the single-engine way. The message gives the best "
        "split's paired wins and median gain.",
    ),
    Code(
        "split-adopted",
        ("info",),
        ("execute",),
        "`execute --verify` measured a split faster than every single-engine way",
        "A split beat the fastest single-engine way in every paired round (or by a "
        "one-sided sign test at 5%) and by at least 5% (median): the decision written to "
        "`--placed-out` is that split.",
    ),
    # ------------------------------------------------------------------ import
    Code(
        "estimated-times",
        ("warning",),
        ("import",),
        "the plan's times are a planner's estimates, not measurements",
        "The file is an EXPLAIN without ANALYZE: it has no actual times, so the tree "
        "takes the planner's cost (PostgreSQL's `Total Cost`, in cost units, not "
        "milliseconds) as each node's time and the planner's row estimates as its rows. "
        "The tree file lists the engine under `estimated`. Cost units are comparable "
        "within one engine only; for a placement across engines, import EXPLAIN "
        "(ANALYZE, FORMAT JSON) instead.",
    ),
    Code(
        "negative-self-time",
        ("warning",),
        ("import",),
        "some nodes took less time than their children; their subtrees were scaled",
        "A node's exclusive time is its inclusive time minus its children's. When the "
        "children were measured as slower than their parent (timer noise, a CTE read by "
        "two nodes and timed in each), or a planner costs a node that stops early (a "
        "Limit) below its input, the difference would be negative: the node gets 0 and "
        "its children's subtrees are scaled down to its time, so a subtree never takes "
        "longer than its root measured and the times still add up to the root's total. "
        "The message counts such nodes, says how much was scaled away and names the "
        "first.",
    ),
    Code(
        "planner-cannot-plan",
        ("warning",),
        ("import",),
        "the query's plan is of no use: the tree is the whole query as one node",
        "`import sql --probe` builds the tree from DataFusion's plan of the query. When "
        "DataFusion cannot plan it (a function or syntax of another engine: DuckDB's JSON "
        "and LIST functions, for instance), or no engine runs the plan's root, the query "
        "still gets a tree: one node (`op` "
        "query), timed on every engine that runs the SQL as written, the tree file's "
        "`query.native` set. `execute` runs it there; no placement splits it. When no "
        "engine takes the SQL the call is invalid input (exit 3) with each engine's "
        "reason.",
    ),
    Code(
        "node-merged",
        ("warning",),
        ("import",),
        "some plan nodes ran on no engine alone: each merged into its parent",
        "`import sql --probe` runs every subtree of the plan alone on every engine. A node "
        "no engine can run alone (DataFusion cannot consume its Substrait relation back as "
        "a root, as with some grouping sets, and no engine takes the SQL written for it) "
        "while its parent runs is merged into that parent: the tree file has the parent "
        "with the merged node's children, its time is part of the parent's, and no cut "
        "falls there. `execute` accepts such a tree: a tree node's children are its "
        "nearest descendants in the plan.",
    ),
    Code(
        "clamped-self-time",
        ("warning",),
        ("import",),
        "some probed nodes ran faster than their slowest input alone; their self-time is 0",
        "`import sql --probe` times every subtree of the query alone and takes a node's "
        "self-time as its subtree's median minus its slowest child's subtree's median "
        "(`execute --times-out` does the same with what it ran). A node whose result is "
        "smaller than its input's can run faster than that input materialised alone (the "
        "engine pushes filters and projections into the scan, and skips the export to "
        "Arrow the child's own run paid), or timing noise can make the difference "
        "negative: the node's self-time is then 0. The message counts the nodes of one "
        "engine, says how many milliseconds were set to 0 and names the first.",
    ),
    Code(
        "in-pipeline-not-timed",
        ("warning",),
        ("import",),
        "some probed nodes have no in-pipeline time on some engine (`--in-pipeline`)",
        "`import sql --probe --in-pipeline` times, for every node, the rest of the query "
        "on each engine with the node's result handed in as a table (`above` in the tree "
        "file). It holds every node's result until the timed rounds end, up to a bound "
        "of bytes; a node past the bound, or whose rest an engine cannot run (the "
        "unparser or the engine fails on the SQL with the result cut out), has no rest "
        "on that engine. `tree --latency measured` then takes such a node's subtree as "
        "materialised and prices a cut there by the tree file's transfers, as without "
        "`--in-pipeline`. The message counts the nodes, names the first eight and gives "
        "the first one's reason.",
    ),
    Code(
        "scan-metrics-from-parent",
        ("info",),
        ("import",),
        "a DataFusion scan reported no metrics; its parent's were used",
        "An in-memory table scan in DataFusion records no time and no rows. Its time "
        "is taken as the time its parent spent fetching from it (`fetch_time`), and its "
        "rows as its parent's when the parent passes every row on (a repartition or "
        "coalesce), so a scan that produced rows never costs 0.",
    ),
    Code(
        "engine-cannot-run",
        ("warning",),
        ("import",),
        "an engine could not run some subtrees of the probed query: no time there",
        "`import sql --probe` runs every subtree of the query's plan on every engine. "
        "Where an engine failed (DataFusion's unparser could not write the subtree in "
        "its SQL dialect, the engine refused the SQL or timed out) or returned another "
        "number of rows than the first engine, the node and every node above it get no "
        "time on that engine, so `tree` never places them there. The message names the "
        "nodes and the first cause.",
    ),
)
