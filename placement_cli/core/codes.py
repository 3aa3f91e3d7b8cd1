"""Every diagnostic code the tool emits, documented once.

`CODES` is the one source of `placement codes [CODE]` (`app/codes_command.py`) and of
`docs/diagnostics.md` (`python -m placement_cli.core.diagnostics`, run by `make docs`;
`tests/test_codes.py` fails when the file is stale, when a code raised anywhere in
`placement_cli/` is missing here, or when a code here is raised nowhere).

A code is raised in an artifact's `diagnostics` as `{severity, code, message, blocks}`
(with `stage` in the pipeline's artifacts), except the per-target reasons of `placement
explain`, which are listed under each target of its output and carry no severity (their
severity here is `reason`).

>>> CODES["pin-infeasible"].severities, CODES["pin-infeasible"].exits
(('error',), (4,))
>>> [c for c in CODES if "reason" in CODES[c].severities][:2]
['no-calls', 'no-closures']
"""

from __future__ import annotations

import textwrap

from placement_cli.core.code_record import Code
from placement_cli.core.engine_codes import ENGINE_CODES
from placement_cli.core.rule_codes import RULE_CODES


def _codes(*codes: Code) -> dict[str, Code]:
    return {c.code: c for c in codes}


CODES: dict[str, Code] = _codes(
    # ------------------------------------------------------------------ any input
    Code(
        "invalid-input",
        ("error",),
        ("every command",),
        "the input is not a valid plan, body, MIR text, tree or artifact",
        "The file could not be read as what the command expects: a syntax error, a "
        "field of the wrong type, a reference to a block that does not exist, an "
        "artifact section that does not match its plan, or an input over a limit. "
        "Every problem is reported at once, each with its field path (and, in the "
        "json, github and sarif reports of `--diagnostics`, the line and column of the "
        "node it names). Nothing is written. Fix each problem named; `placement "
        "validate` checks a file without running anything.",
        (3,),
    ),
    # ------------------------------------------------------------------ the call itself
    Code(
        "usage-error",
        ("error",),
        ("every command",),
        "the command line, the project's configuration or an input path is wrong",
        "An unknown or misspelt option, a missing argument, a value an option does not "
        "accept, an input file that does not exist, options that exclude each other "
        "(`-o` with `--out-dir`), or a bad key in `placement.toml`. Nothing is run. "
        "Reported by `--diagnostics` as the call's own failure (in SARIF: a "
        "notification of the invocation, not a result). Fix the command line; "
        "`placement COMMAND --help` lists the options.",
        (2,),
    ),
    Code(
        "io-error",
        ("error",),
        ("every command",),
        "reading an input or writing an output failed in the file system",
        "The message names the path and the reason: a folder of `-o` that does not "
        "exist (`-o` never creates folders; `--out-dir` does), a loop of symbolic links, "
        "a permission, a full disk. A failed write leaves no partial file behind and an "
        "old file intact. Fix the path or the file system and run again.",
        (6,),
    ),
    Code(
        "internal-error",
        ("error",),
        ("every command",),
        "a bug in placement",
        "Something the tool did not expect happened; the input may be fine. The "
        "message names the exception; `--debug` prints the traceback. Please report it "
        "with the input and the command line that caused it.",
        (1,),
    ),
    Code(
        "interrupted",
        ("error",),
        ("every command",),
        "the call was interrupted (Ctrl-C, SIGINT)",
        "The call stopped before it finished: no artifact of it was written (a file "
        "being written is left as it was before). Run the command again; use "
        "`--time-limit` to bound a long solve instead of interrupting it.",
        (130,),
    ),
    # ------------------------------------------------------------------ lower
    Code(
        "unpriceable-transfer",
        ("warning",),
        ("lower",),
        "an edge carries a value of unbounded size and no size cap is set",
        "Lowering a MIR body prices each edge that crosses targets by the size of the "
        "values live across it. The size analysis found at least one such value whose "
        "size it cannot bound (a collection of unknown cardinality, or a value a loop "
        "keeps growing), and neither the body file's `size_cap` nor `--size-cap` says "
        "how many information units an unbounded size counts as. Those transfers cost "
        "4294967294, the reference compiler's maximal cost, so the solver avoids "
        "crossing targets on those edges at almost any price. The message names the "
        "first such edge and `blocks` lists their source blocks. Pass `--size-cap N`, or "
        "set `size-cap = N` in `placement.toml` (a body file may also set `size_cap`; "
        "MIR text has no place for it), to price them; the placement is still computed "
        "either way.",
    ),
    Code(
        "unknown-vertex-path",
        ("warning",),
        ("lower",),
        "a statement reads a vertex path the profile does not declare",
        "The body reads a path of the vertex (`vertex.metadata.archivd`, say) that the "
        "target profile's path table does not resolve. As in the reference compiler, whose "
        "entity path resolution returns nothing for a field it does not know, the access is "
        "unresolvable: it counts as reading every path (the whole vertex's premium), and "
        "only a target that reads the vertex as a whole (the interpreter, in the built-in "
        "hashql profile) can run the statement. The message names the path and the "
        "declared path nearest to it (`did you mean metadata.archived?`). A profile that "
        "sets `open_vertex: false` makes the same read an invalid input (exit 3) instead. "
        "Fix the spelling (`placement profile show` lists the paths), or declare the path "
        "in your profile; `--strict` turns this warning into a failure in CI.",
    ),
    Code(
        "unknown-type",
        ("warning",),
        ("lower",),
        "a local's type names a type nobody declares",
        "A type in the body is a bare name (no `::` module path) that is not a primitive "
        "(`Boolean`, `Integer`, `Number`, `String`, `Null`, `List`, `Dict`), not a named "
        "type of the body file, and not the short name of a nominal type the profile "
        "describes: most likely a misspelling (`let %5: Strng`). It is read as an opaque "
        "type of that name, which is equality-unsafe against every other type and so can "
        "move statements from postgres to the interpreter. The message names the type and "
        "the nearest known name. Fix the spelling; `--strict` turns this warning into a "
        "failure in CI.",
    ),
    Code(
        "unpriceable-premium",
        ("warning",),
        ("lower",),
        "a block reads a vertex path of unbounded size from another target",
        "A block reads a vertex path (a field of a vertex) that lives on another target, "
        "which costs a premium proportional to the path's size; the size of at least one "
        "such path is unbounded and no size cap is set, so the premium costs 4294967294 "
        "(the reference compiler's maximal cost) on every target that has to fetch it. "
        "`blocks` lists the blocks concerned. Pass `--size-cap N`, or set `size-cap = N` "
        "in `placement.toml` (a body file may also set `size_cap`; MIR text has no place "
        "for it); the placement is still computed either way.",
    ),
    Code(
        "no-propagation",
        ("info",),
        ("lower",),
        "the input is a plan: split by the statements' support sets as given",
        "`lower` (or a stage) was given a plan whose statements carry per-target costs "
        "rather than a MIR body with operands. Splitting then cuts blocks where the set "
        "of targets that can run a statement changes, using those sets exactly as the "
        "plan gives them: there are no data dependencies to propagate a restriction "
        "through, as lowering a body does. When the plan has no top-level `transitions`, "
        "the message adds that the gotos inserted between the pieces allow every switch "
        "at cost 0. Nothing to do unless you meant to lower a body file.",
    ),
    Code(
        "not-split",
        ("info",),
        ("lower",),
        "a block whose cost is given as a whole is not split",
        "Lowering a plan splits blocks between statements, but a block whose `cost` is "
        "given for the block as a whole (rather than per statement) cannot be divided "
        "between pieces, so it stays one block. `blocks` lists them. Give per-statement "
        "costs instead of a block cost if those blocks should be split.",
    ),
    # ------------------------------------------------------------------ prune
    Code(
        "empty-domain",
        ("error",),
        ("prune",),
        "no target can run a reachable block",
        "A block reachable from the entry has no target at all before any propagation: "
        "its declared `domain` is empty, or no target has a cost for one of its "
        "statements or its terminator (a statement only the interpreter can run, in a "
        "deployment without the interpreter, for instance). No placement can exist: the "
        "artifact of every stage is still written with `status: infeasible` and the "
        "solve stage adds `infeasible`. Run `placement explain ARTIFACT BLOCK` to see "
        "which statement excludes each target, then add a target that can run it or "
        "change the program.",
        (4,),
    ),
    Code(
        "empty-domain-unreachable",
        ("warning",),
        ("prune",),
        "no target can run a block that is unreachable",
        "As `empty-domain`, but the block cannot be reached from the entry, so it is "
        "never placed and the placement is unaffected. Worth a look if the block was "
        "meant to be reachable (a missing edge in the plan or body).",
    ),
    Code(
        "domain-wipeout",
        ("error",),
        ("prune",),
        "arc consistency left a reachable block with no target",
        "Each target of a reachable block was allowed on its own, but arc consistency "
        "removed them all: for every target, some edge into or out of the block has no "
        "allowed transition to any target still left at its other end (postgres can be "
        "left but never entered, for instance). The message lists each removed target "
        "with the edge that removed it. No placement can exist (`status: infeasible`). "
        "Allow the missing transitions in the plan's `transitions`, or let a neighbouring "
        "block run on a target the transitions connect.",
        (4,),
    ),
    Code(
        "domain-wipeout-unreachable",
        ("warning",),
        ("prune",),
        "arc consistency left an unreachable block with no target",
        "As `domain-wipeout`, but for a block that cannot be reached from the entry: it "
        "is never placed, so the placement is unaffected.",
    ),
    # ------------------------------------------------------------------ solve
    Code(
        "infeasible",
        ("error",),
        ("solve",),
        "no feasible placement exists (proven)",
        "The solver proved that no assignment of targets to blocks satisfies every "
        "domain and every transition: either a block has no target left after pruning "
        "(see the prune stage's `empty-domain` or `domain-wipeout`), or an exhaustive "
        "search found that one block, or one cycle of blocks, has no targets that fit "
        "its neighbours. The message names the block or the cycle. The artifact is "
        "written with `status: infeasible`, and fuse and islands add `no-assignment`. "
        "Relax the transitions or domains around the named blocks; `placement explain` "
        "shows each target's reasons.",
        (4,),
    ),
    Code(
        "pin-infeasible",
        ("error",),
        ("solve",),
        "the pins and forbids make a placement impossible",
        "A `--pin BLOCK=TARGET`, `--forbid` or `--pins FILE` entry cannot be honoured: "
        "the pinned target is not in the block's pruned domain, two pins name different "
        "targets for one block, the forbids leave a block no target, or, with the pins "
        "applied, arc consistency or the exhaustive search finds no placement that "
        "respects them (the message then names the block left without a target and "
        "quotes the pins). The plan itself may have a placement: drop or change the "
        "pin named in the message. The artifact is written with `status: infeasible`.",
        (4,),
    ),
    Code(
        "huge-costs",
        ("warning",),
        ("solve",),
        "costs too large for the exact method: solved on scaled costs",
        "The plan's costs are so large that the exact method's sums would overflow, so "
        "the solve used the heuristic and the complete search on costs scaled by a power "
        "of two instead. The assignment is still feasible and its cost is computed on the "
        "real costs, but the optimality proof comes from the complete search only. Scale "
        "the plan's costs down (they only matter relative to each other) to get the "
        "exact method back.",
    ),
    Code(
        "solver-disagreement",
        ("warning",),
        ("solve",),
        "the exact method and the heuristic disagreed; the verified answer was kept",
        "The exact method returned an assignment that does not check as feasible, or "
        "claimed that no placement exists while the heuristic found one. Its answer was "
        "ignored and the verified one used, so the artifact is correct, but this points "
        "at a bug in the exact method: please report it with the plan.",
    ),
    Code(
        "time-limit",
        ("error", "warning"),
        ("solve", "tree"),
        "the time limit stopped the search",
        "The search ran out of its `--time-limit`. As a warning (solve only) a feasible "
        "placement was found but is not proven optimal: the artifact has `optimal: "
        "false` and an honest `lower_bound`, and the command exits 0. As an error no "
        "placement was found and nothing was proven either way: the artifact is written "
        "with `status: unsolved` (exit 5); for `tree` the message says how many nodes "
        "the DP finished. Raise `--time-limit`, or try another `--method`.",
        (5,),
    ),
    Code(
        "memory-limit",
        ("error", "warning"),
        ("solve", "tree"),
        "the memory limit stopped the search",
        "The search would have grown past its memory limit (2048 MB for the solve, "
        "2 GiB of DP tables for `tree`). As a warning (solve only) the best placement "
        "found is written but not proven optimal (exit 0). As an error no placement was "
        "found and nothing was proven: `status: unsolved` (exit 5). For `tree`, a lower "
        "`--budget` needs smaller tables; for solve, a smaller plan or `--method "
        "heuristic`.",
        (5,),
    ),
    # ------------------------------------------------------------------ fuse, islands
    Code(
        "no-assignment",
        ("error",),
        ("fuse", "islands"),
        "no placement to fuse or to build islands from",
        "Fuse and islands work on the solve stage's assignment, and there is none: "
        "the solve stage found the plan infeasible (`infeasible`, `pin-infeasible`, or "
        "prune's errors) or was stopped unsolved by a limit. This code only follows "
        "those; look at the first error in `diagnostics`. The fuse and islands "
        "artifacts are still written, empty, with the solve stage's status, and the "
        "exit code is the solve stage's: 4 when infeasible, 5 when unsolved.",
        (4, 5),
    ),
    Code(
        "assignment-infeasible",
        ("error",),
        ("fuse",),
        "the assignment given to fuse is not feasible",
        "Fusion was handed an assignment that puts a block outside its domain or "
        "crosses a forbidden transition. The command line never gets here: a solve "
        "section read from an artifact is checked (exit 3 when it does not hold) and "
        "the solver's own answer is verified. Only a library caller of "
        "`placement_cli.algorithms.fuse.fuse` passing its own assignment can see it.",
    ),
    Code(
        "unreachable-dropped",
        ("info",),
        ("fuse",),
        "unreachable blocks are left out of the fused plan",
        "Blocks that cannot be reached from the entry take no target, so fusion leaves "
        "them out of the fused plan. `blocks` lists them. Nothing to do unless they were "
        "meant to be reachable.",
    ),
    Code(
        "fuse-cost-changed",
        ("warning",),
        ("fuse",),
        "fusion changed the placement's cost (a bug)",
        "Merging same-target goto chains must keep the placement's cost exactly; this "
        "warning says it did not (or made the placement infeasible). It is a bug in "
        "fusion: please report it with the input. The solve artifact's assignment is "
        "unaffected.",
    ),
    Code(
        "cyclic-islands",
        ("info",),
        ("islands",),
        "the island graph is cyclic: groups are scheduled as single units",
        "The dependency graph between islands has cycles: a loop crosses targets, or an "
        "island runs both before and after another (an acyclic program whose branch and "
        "join share a target can do this too). Each strongly connected group of islands "
        "is scheduled as one unit, and the message lists the groups. Expected for loops "
        "that alternate targets; an orchestrator must run such a group as a whole.",
    ),
    # ------------------------------------------------------------------ tree
    Code(
        "dag-expanded",
        ("info",),
        ("tree",),
        "--expand-dag duplicated a shared sub-plan",
        "The operator file is a DAG (a node has several parents) and `--expand-dag` "
        "turned it into a tree by copying each shared sub-plan once per parent, the "
        "copies named `ID#2`, `ID#3`, .... One diagnostic per shared node names its "
        "parents and copies, and a last one gives the sizes before and after. The "
        "copies are placed independently, so a shared scan may be computed more than "
        "once.",
    ),
    Code(
        "unplaced-nodes",
        ("warning",),
        ("tree",),
        "nodes not under the root are not placed",
        "Some nodes of the operator file are not descendants of the root, so they are "
        "not part of the tree and get no engine. `blocks` lists them. Check the "
        "`children` lists, or the root, if they were meant to be placed.",
    ),
    Code(
        "budget-clamped",
        ("info",),
        ("tree",),
        "the cut budget is larger than the tree's edge count",
        "The `--budget` (or the file's `budget`) allows more cuts than the tree has "
        "edges, so it is lowered to the number of edges, which already allows every "
        "cut. The artifact's `budget` is the one used; the result is the same as with "
        "the larger budget.",
    ),
    Code(
        "transfer-profile-unused",
        ("info",),
        ("tree",),
        "a direction of the transfer profile names an engine the tree does not have",
        "`tree --transfer PROFILE` applies each of the profile's directions whose two "
        "engines are both in the tree file's `engines`; the others are ignored and "
        "listed here. Harmless when the profile was measured for more engines than "
        "this tree uses; when a pair the tree needs is left without a model (see "
        "`transfer-uncovered`), check that the profile spells the engines as the tree does.",
    ),
    Code(
        "transfer-uncovered",
        ("warning",),
        ("tree",),
        "a pair of engines an edge could be cut across has no transfer model",
        "With `tree --transfer PROFILE`, some child can run on one engine and its parent "
        "on another, but neither the tree file's `transfer.linear`, the profile nor a "
        "`default` gives a model for that direction, so the DP never cuts that way "
        "(explicit per-edge entries still allow their edges). Measure and fit that "
        "direction (`calibrate measure --pairs A:B`, `calibrate fit`), or name the "
        "engines in the profile as the tree does.",
    ),
    Code(
        "unsupported-node",
        ("error",),
        ("tree",),
        "no engine can run an operator",
        "A node's `time` is missing or null for every engine, so no engine can run it "
        "and no placement exists at any budget. The artifact is written with `status: "
        "infeasible`. Give the node a time on at least one engine.",
        (4,),
    ),
    Code(
        "no-transfer",
        ("error",),
        ("tree",),
        "no transfer connects a child's engines to its parent's",
        "No placement exists at any budget: every engine that can run a child's subtree "
        "is cut off from every engine that runs its parent (no transfer is declared "
        "between them), or no engine that runs a node can receive all of its children. "
        "The message names the child and the parent. Declare a transfer between those "
        "engines or let one of the nodes run on the other's engine. Status "
        "`infeasible`.",
        (4,),
    ),
    Code(
        "budget-too-small",
        ("error",),
        ("tree",),
        "every placement needs more cuts than the budget allows",
        "The tree can be placed, but only with more cuts (engine changes between a "
        "child and its parent) than the budget allows. The diagnostic carries "
        "`min_budget`, the fewest cuts any placement needs, and the message says which "
        "`--budget` to pass. Status `infeasible`.",
        (4,),
    ),
    # ------------------------------------------------------------------ execute, import
    *ENGINE_CODES,
    # ------------------------------------------------------------------ lower rules
    *RULE_CODES,
    # ------------------------------------------------------------------ explain
    Code(
        "unreachable",
        ("reason",),
        ("explain",),
        "the block is unreachable and takes no target",
        "A reason `placement explain` gives for every target of a block that cannot be "
        "reached from the entry: such a block is never placed.",
    ),
    Code(
        "not-in-domain",
        ("reason",),
        ("explain",),
        "the target is not in the block's declared domain",
        "The block's `domain` in the plan lists the targets it may run on, and this one "
        "is not among them. Add it to the domain if the block may run there.",
    ),
    Code(
        "unsupported-statement",
        ("reason",),
        ("explain",),
        "a statement has no cost on the target",
        "A statement of the block has no cost for this target, which means the target "
        "cannot run it (the reason's `statement` is its index). From a body file this is "
        "lowering's eligibility analysis: an operation, or an operand it depends on, "
        "that the target's profile does not support.",
    ),
    Code(
        "unsupported-terminator",
        ("reason",),
        ("explain",),
        "the terminator has no cost on the target",
        "The block's terminator has costs, but none for this target, so the target cannot run it.",
    ),
    Code(
        "pruned",
        ("reason",),
        ("explain",),
        "prune removed the target: a neighbour cannot follow or precede it",
        "The target could run the block on its own, but arc consistency removed it: the "
        "edge named in the reason (`edge`) allows this target only with targets that are "
        "no longer left at the edge's other end. `edge` is null when the prune section "
        "read from the input does not say which edge.",
    ),
    Code(
        "pinned",
        ("reason",),
        ("explain",),
        "the solve pinned the block to another target",
        "The solve section records `--pin BLOCK=TARGET` (its `constraints.pins`): the "
        "block had to run on the pinned target, so `explain` counts every other target "
        "as impossible for it, and its `optimal` means optimal under the pins. Solve "
        "again without the pin to see whether another target would be cheaper.",
    ),
    Code(
        "forbidden",
        ("reason",),
        ("explain",),
        "the solve forbade the block this target",
        "The solve section records `--forbid BLOCK=TARGET` (its `constraints.forbids`): "
        "the block was not allowed on that target, and the proven optimum is the optimum "
        "without it. Solve again without the forbid to compare.",
    ),
)


def severity_text(c: Code) -> str:
    return "/".join(c.severities)


def listing() -> str:
    """One line per code: code, severity, title (`placement codes`).

    >>> listing().splitlines()[0].split()[:2]
    ['invalid-input', 'error']
    """
    width = max(map(len, CODES))
    sev = max(len(severity_text(c)) for c in CODES.values())
    return "".join(
        f"{c.code:<{width}}  {severity_text(c):<{sev}}  {c.title}\n" for c in CODES.values()
    )


def _exit_text(c: Code) -> str:
    if not c.exits:
        return "Exit code: not affected (0 unless another diagnostic decides it)."
    codes = " or ".join(map(str, c.exits))
    return f"Exit code when it is an error: {codes}."


def explain(code: str) -> str:
    """The paragraph of one code (`placement codes CODE`), wrapped at 88 columns."""
    c = CODES[code]
    head = f"{c.code} ({severity_text(c)}; raised by {', '.join(c.raised_by)}): {c.title}"
    body = textwrap.fill(c.text, 88)
    tail = "" if "reason" in c.severities else "\n\n" + _exit_text(c)
    return f"{head}\n\n{body}{tail}\n"


def markdown() -> str:
    """`docs/diagnostics.md`."""
    out = [
        "# Diagnostic codes",
        "",
        "Generated from `placement_cli/core/codes.py` by `make docs`",
        "(`python -m placement_cli.core.diagnostics`); `tests/test_codes.py` fails when this",
        "file is stale. Do not edit it by hand. `placement codes` lists the codes and",
        "`placement codes CODE` prints one.",
        "",
        "Every artifact carries `diagnostics`, a list of `{severity, code, message, blocks}`",
        "(with `stage` in the pipeline's artifacts). A stage's diagnostics are repeated in",
        "the artifact of every later stage, and a command prints the errors and warnings it",
        "raised itself on stderr as `severity: code: message`. An `error` makes the artifact's",
        "status `infeasible` (exit 4) or `unsolved` (exit 5); warnings and infos never change",
        "the exit code. The last codes (severity `reason`) are the per-target reasons",
        "`placement explain` gives under each target.",
        "",
        "| code | severity | raised by | meaning |",
        "|---|---|---|---|",
    ]
    out += [
        f"| [`{c.code}`](#{c.code}) | {severity_text(c)} | {', '.join(c.raised_by)} | {c.title} |"
        for c in CODES.values()
    ]
    for c in CODES.values():
        raised = f"{severity_text(c)}; raised by {', '.join(c.raised_by)}"
        out += ["", f"## {c.code}", "", f"**{c.title}** ({raised})"]
        out += ["", textwrap.fill(c.text, 88)]
        if "reason" not in c.severities:
            out += ["", _exit_text(c)]
    return "\n".join(out) + "\n"
