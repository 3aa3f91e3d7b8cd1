"""Building a plan's indexed form and checking its semantic rules (`build_graph`, which
runs the checks of `placement_cli.ir.plan_parts` and `placement_cli.ir.block_costs` in
the plan's order; the form itself: `placement_cli.ir.indexed`, whose names are
re-exported here).

A plan's types are checked by msgspec (`placement_cli.formats.structs`) or by the
models (`placement_cli.formats.plan`); its meaning (references, duplicates,
argument counts, matrices' targets and diagonals, the objective's range) is checked here
and nowhere else. Afterwards blocks are indices in input order, targets bit positions,
domains int bitsets (`placement_cli.ir.indexed.Graph`).
"""

from __future__ import annotations

from typing import Any

from placement_cli.core.errors import InputError
from placement_cli.core.io import gc_paused
from placement_cli.core.limits import objective_problems
from placement_cli.core.problems import validation_problems
from placement_cli.formats.checking import Reject
from placement_cli.formats.structs import Plan as PlanStruct
from placement_cli.formats.structs import convert_plan, decode_plan, from_model
from placement_cli.ir.block_costs import BlockCosts
from placement_cli.ir.indexed import (
    INF,
    Graph,
    Matrix,
    assemble,
    bits,
    identity_matrix,
    make_matrix,
    popcount,
)
from placement_cli.ir.plan_parts import (
    SUCCESSOR_COUNT,
    Checker,
    Matrices,
    block_index,
    block_paths,
    check_terminator,
    entry_index,
    path_indices,
    target_index,
)

__all__ = [
    "INF",
    "SUCCESSOR_COUNT",
    "Graph",
    "Matrix",
    "assemble",
    "bits",
    "build_graph",
    "identity_matrix",
    "make_matrix",
    "popcount",
]


def build_graph(plan: Any, prefix: str = "", *, check: bool = False) -> Graph:
    """Check every semantic rule of the plan format and build the indexed form.

    `plan` is a `structs.Plan` (msgspec checked its types), a validated pydantic
    `plan.Plan` (read as its `structs.Plan`), or a plan's JSON bytes or parsed document
    (with `check`, or a `dict`): decoded or converted to a `structs.Plan` first, and
    `Reject` raised when msgspec refuses it (the caller then asks the models, which say
    why). All problems are collected and raised together as one `InputError`, in the
    order of the plan's parts: the targets, the block ids and the entry, the matrices
    and the paths (`placement_cli.ir.plan_parts`), then block by block its costs
    (`placement_cli.ir.block_costs`), paths, terminator and edges, and last the
    objective's range.

    >>> from placement_cli.formats.plan import Plan
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"],
    ...     "blocks": [{"id": "b0", "terminator": {"kind": "return"}}]}))
    >>> g.block_ids, g.domain
    (('b0',), (3,))
    """
    if type(plan) is PlanStruct:
        doc = plan
    elif check or type(plan) is dict:
        got = decode_plan(plan) if type(plan) is bytes else convert_plan(plan)
        if got is None:
            raise Reject("plan")
        doc = got
    else:
        doc = from_model(plan)
    chk = Checker()
    p = prefix
    targets = tuple(doc.targets)
    tindex = target_index(targets, p, chk)
    blocks = doc.blocks
    ids, nparams, index = block_index(blocks, p, chk)
    entry = entry_index(doc, index, p, chk)
    mats = Matrices(doc, targets, tindex, p, chk)
    path_index, path_origin = path_indices(doc, tindex, p, chk)

    block_costs = BlockCosts(targets, p, chk)
    add_costs = block_costs.add
    edge_matrix = mats.edge
    edge_src: list[int] = []
    edge_dst: list[int] = []
    edge_pos: list[int] = []
    edge_mat: list[Matrix] = []
    succ: list[tuple[int, ...]] = []
    paths_of: list[tuple[int, ...]] = []
    for i, b in enumerate(blocks):
        term = b.terminator
        add_costs(i, b, term)
        paths_of.append(block_paths(b.paths, i, path_index, p, chk))
        successors = term.successors
        check_terminator(b, term.kind, successors, i, p, chk)
        first_edge = len(edge_src)  # a block's edges are consecutive ids
        for k, e in enumerate(successors):
            dst = index.get(e.block)
            if dst is None:
                chk.add(
                    f"{p}blocks[{i}].terminator.successors[{k}].block",
                    f"unknown block '{e.block}'",
                )
                dst = -1
            else:
                want_n = nparams[dst]
                got_n = len(e.args)
                if got_n != want_n:
                    chk.add(
                        f"{p}blocks[{i}].terminator.successors[{k}].args",
                        f"block '{e.block}' takes {want_n} argument(s), got {got_n}",
                    )
            edge_src.append(i)
            edge_dst.append(dst)
            edge_pos.append(k)
            edge_mat.append(edge_matrix(e.transitions, i, k))
        last = len(edge_src)
        succ.append((first_edge,) if last == first_edge + 1 else tuple(range(first_edge, last)))

    costs = block_costs.costs
    chk.problems += objective_problems(costs, edge_mat, p)
    if chk.problems:
        raise InputError(chk.problems)

    return assemble(
        plan=doc,
        block_ids=tuple(ids),
        index=index,
        entry=entry,
        domain=block_costs.domain,
        cost=costs,
        bases=block_costs.bases,
        edge_src=edge_src,
        edge_dst=edge_dst,
        edge_pos=edge_pos,
        edge_mat=edge_mat,
        succ=succ,
        block_paths=paths_of,
        path_names=tuple(path_index),
        path_origin=tuple(path_origin),
        default_matrix=mats.default,
    )


def parse_plan(doc: Any, prefix: str = "") -> Graph:
    """Validate a plan document (already parsed) with the models and build its indexed
    form (the library entry point: the document is read, never kept or changed)."""
    # Lazy: pydantic and the plan's models (~115 ms, measured), only when a document needs them.
    from pydantic import ValidationError

    from placement_cli.formats.plan import (
        Plan,
    )

    with gc_paused():
        try:
            plan = Plan.model_validate(doc)
        except ValidationError as exc:
            raise InputError(validation_problems(exc, prefix)) from None
        return build_graph(plan, prefix)


def checked_graph(doc: Any, prefix: str = "") -> Graph:
    """The graph of a plan's JSON bytes or parsed document, its types checked by msgspec
    (`build_graph(..., check=True)`): raises `Reject` when they are not certainly what
    the models accept, else `InputError` for the plan's problems."""
    with gc_paused():
        return build_graph(doc, prefix, check=True)
