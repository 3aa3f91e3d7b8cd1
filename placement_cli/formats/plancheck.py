"""Fast acceptance of plans, without pydantic: "fast accept, slow diagnose" (artifacts
and their sections: `placement_cli.formats.sectioncheck`).

The strict pydantic models (`placement_cli.formats.plan`, `placement_cli.formats.sections`) are the
definition of what a plan or an artifact may look like, and the source of every error
message. Importing and running them costs a fifth of a second per process before any
input is read, and validating a large plan through them is most of its load time. The
checks here accept a parsed document only when the models certainly would, with the
same values: exact types (`str`, `int`/`float` but never `bool` for numbers, `list`,
`dict` with string keys), finite non-negative costs, lengths, literal values, required
fields, no unknown fields. Anything else, including what the models would accept but is
unusual (a `bool` where a literal `1` is wanted, a huge integer, a `tuple`), raises
`Reject`, and the caller asks the models, which accept it or say exactly what is wrong.
`tests/test_plancheck_fuzz.py` holds the two to agreeing on random and mutated inputs.

Nothing is changed or copied: a cost the models would read as a float may stay an `int`
here (only integers a float holds exactly are accepted), and the readers of a checked
document (`graph.build_graph`, `planview`) treat the two alike.

>>> check_plan({"version": 1, "targets": ["a"], "blocks": [{"id": "x",
...     "statements": [{"cost": {"a": 2}}], "terminator": {"kind": "return"}}]})
>>> check_plan({"version": True, "targets": ["a"], "blocks": []})
Traceback (most recent call last):
...
placement_cli.formats.plancheck.Reject: version
"""

from __future__ import annotations

from typing import Any

from orjson import JSONEncodeError, dumps

# Integers orjson reads and writes as integers (wider ones it reads as floats, where the
# models, reading bytes themselves, would see an integer): anything outside is left to
# the models.
INT_MIN, INT_MAX = -(2**63), 2**64 - 1
# An integral float this large may be an integer orjson read as a float.
BIG_FLOAT = float(2**64)
# Integers converted to a float cost exactly (the models' conversion gives the same).
_EXACT_INT = 2**53


class Reject(Exception):
    """The document is not certainly accepted: ask the models (the message is the path
    where the fast check stopped, for debugging only)."""


# --- plans -----------------------------------------------------------------------------

_PLAN_FIELDS = frozenset(
    (
        "version",
        "name",
        "targets",
        "entry",
        "transitions",
        "matrices",
        "paths",
        "blocks",
        "provenance",
        "lower",
    )
)
_BLOCK_FIELDS = frozenset(
    ("id", "params", "statements", "domain", "cost", "paths", "premium", "terminator")
)
_STATEMENT_FIELDS = frozenset(("text", "cost"))
_TERM_FIELDS = frozenset(("kind", "successors", "cost"))
_EDGE_FIELDS = frozenset(("block", "args", "transitions"))
TERM_KINDS = frozenset(("goto", "switch", "return", "unreachable", "graph_read"))
# For `graph.build_graph`, which makes the block checks inline.
BLOCK_FIELDS, TERM_FIELDS, EDGE_FIELDS = _BLOCK_FIELDS, _TERM_FIELDS, _EDGE_FIELDS


def _strs(v: Any, where: str, min_len: int = 0) -> None:
    """A list of strings (each at least `min_len` long)."""
    if type(v) is not list:
        raise Reject(where)
    for x in v:
        if type(x) is not str or len(x) < min_len:
            raise Reject(where)


def _costs(v: Any, where: str, nullable: bool) -> None:
    """dict[str, Cost] (or dict[str, Cost | None]), Cost a finite float >= 0."""
    if type(v) is not dict:
        raise Reject(where)
    for k, c in v.items():
        if type(k) is not str:
            raise Reject(where)
        t = type(c)
        if t is float:
            # NaN fails too; an integral float of 2**64 or more may be a wider integer in
            # the bytes (orjson reads those as floats), which the models would refuse.
            if not 0.0 <= c < BIG_FLOAT:
                raise Reject(where)
        elif t is int:
            if not 0 <= c <= _EXACT_INT:
                raise Reject(where)
        elif c is not None or not nullable:
            raise Reject(where)


def _matrix(v: Any, where: str) -> None:
    if type(v) is not dict:
        raise Reject(where)
    for k, row in v.items():
        if type(k) is not str:
            raise Reject(where)
        _costs(row, where, False)


# Free-form values nesting deeper than this (below their field) are left to the models:
# pydantic's JSON parser refuses documents nested about 200 deep, orjson only past 1024.
MAX_FREE_DEPTH = 64


def _any_map(v: Any, where: str) -> None:
    """dict[str, Any] | None: string keys, and nested no deeper than `MAX_FREE_DEPTH`."""
    if v is None:
        return
    if type(v) is not dict:
        raise Reject(where)
    for k in v:
        if type(k) is not str:
            raise Reject(where)
    stack: list[tuple[Any, int]] = [(v, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_FREE_DEPTH:
            raise Reject(where)
        for x in node.values() if type(node) is dict else node:
            if type(x) is dict or type(x) is list:
                stack.append((x, depth + 1))


def check_head(doc: Any) -> list[Any]:
    """Everything of a plan but its blocks' contents; returns the blocks (a non-empty
    list)."""
    if type(doc) is not dict or not doc.keys() <= _PLAN_FIELDS:
        raise Reject("plan")
    v = doc.get("version")
    if type(v) is not int or v != 1:
        raise Reject("version")
    v = doc.get("name")
    if v is not None and type(v) is not str:
        raise Reject("name")
    v = doc.get("entry")
    if v is not None and type(v) is not str:
        raise Reject("entry")
    targets = doc.get("targets")
    _strs(targets, "targets", 1)
    if not 1 <= len(targets) <= 64:  # type: ignore[arg-type]
        raise Reject("targets")
    v = doc.get("transitions")
    if v is not None:
        _matrix(v, "transitions")
    if "matrices" in doc:
        v = doc["matrices"]
        if type(v) is not dict:
            raise Reject("matrices")
        for k, m in v.items():
            if type(k) is not str:
                raise Reject("matrices")
            _matrix(m, "matrices")
    if "paths" in doc:
        v = doc["paths"]
        if type(v) is not dict:
            raise Reject("paths")
        for k, ts in v.items():
            if type(k) is not str:
                raise Reject("paths")
            _strs(ts, "paths")
    _any_map(doc.get("provenance"), "provenance")
    _any_map(doc.get("lower"), "lower")
    blocks = doc.get("blocks")
    if type(blocks) is not list or not blocks:
        raise Reject("blocks")
    return blocks


def check_block_head(b: Any) -> None:
    """A block is a mapping of known fields with its id and parameters (what is read of
    a block when another block's edge leads to it)."""
    if type(b) is not dict or not b.keys() <= _BLOCK_FIELDS:
        raise Reject("blocks[]")
    v = b.get("id")
    if type(v) is not str or not v:
        raise Reject("blocks[].id")
    if "params" in b:
        _strs(b["params"], "blocks[].params")


def check_block(b: Any) -> None:
    """The rest of a block (`check_block_head` accepted it), except three parts that
    repeat and are checked apart, once per distinct serialisation: the contents of its
    statement list (`check_statements`), what else costs (`check_costs`) and explicit
    edge matrices (`check_matrix`)."""
    if "statements" in b and type(b["statements"]) is not list:
        raise Reject("blocks[].statements")
    if "paths" in b:
        _strs(b["paths"], "blocks[].paths")
    term = b.get("terminator")
    if type(term) is not dict or not term.keys() <= _TERM_FIELDS:
        raise Reject("blocks[].terminator")
    v = term.get("kind")
    if type(v) is not str or v not in TERM_KINDS:
        raise Reject("blocks[].terminator.kind")
    if "successors" in term:
        succs = term["successors"]
        if type(succs) is not list:
            raise Reject("blocks[].terminator.successors")
        edge_fields = _EDGE_FIELDS
        for e in succs:
            if (
                type(e) is not dict
                or not e.keys() <= edge_fields
                or type(e.get("block")) is not str
            ):
                raise Reject("blocks[].terminator.successors[]")
            if "args" in e:
                _strs(e["args"], "blocks[].terminator.successors[].args")
            v = e.get("transitions")
            if v is not None and type(v) is not str and type(v) is not dict:
                raise Reject("blocks[].terminator.successors[].transitions")


def check_costs(b: dict[str, Any]) -> None:
    """What else of a block costs (`check_block` accepted it): its domain, cost, premium
    and terminator cost."""
    v = b.get("domain")
    if v is not None:
        _strs(v, "blocks[].domain")
    v = b.get("cost")
    if v is not None:
        _costs(v, "blocks[].cost", False)
    v = b.get("premium")
    if v is not None:
        _costs(v, "blocks[].premium", False)
    v = b["terminator"].get("cost")
    if v is not None:
        _costs(v, "blocks[].terminator.cost", True)


def check_statements(stmts: list[Any]) -> None:
    """The contents of a block's statement list."""
    stmt_fields = _STATEMENT_FIELDS
    for s in stmts:
        if type(s) is not dict or not s.keys() <= stmt_fields or "cost" not in s:
            raise Reject("blocks[].statements[]")
        v = s.get("text")
        if v is not None and type(v) is not str:
            raise Reject("blocks[].statements[].text")
        cost = s["cost"]  # `_costs(cost, ..., True)` inline: one per statement
        if type(cost) is not dict:
            raise Reject("blocks[].statements[].cost")
        for k, c in cost.items():
            t = type(c)
            if type(k) is not str:
                raise Reject("blocks[].statements[].cost")
            if t is float:
                if not 0.0 <= c < BIG_FLOAT:
                    raise Reject("blocks[].statements[].cost")
            elif t is int:
                if not 0 <= c <= _EXACT_INT:
                    raise Reject("blocks[].statements[].cost")
            elif c is not None:
                raise Reject("blocks[].statements[].cost")


def check_matrix(v: Any) -> None:
    """An edge's explicit transition matrix."""
    _matrix(v, "blocks[].terminator.successors[].transitions")


def serialised(v: Any) -> bytes | None:
    """The key a repeated part is recognised by: its orjson bytes, or None when orjson
    cannot write it. Equal bytes mean equal keys, values and value types (plans come
    from orjson or `yaml_core`: exact built-in types), except `null`, which orjson also
    writes for NaN and infinities: a part whose bytes hold `null` is accepted by its
    key only if its checks refuse NaN and infinities wherever they allow None.

    >>> serialised([{"cost": {"a": 1}}]), serialised({1: 2})
    (b'[{"cost":{"a":1}}]', None)
    """
    try:
        return dumps(v)
    except (TypeError, JSONEncodeError):
        return None


def _plan(doc: Any) -> None:
    blocks = check_head(doc)
    # Repeated statement lists and matrices (a few dozen and a handful of distinct ones
    # on 100k blocks) are checked once per serialisation; a statement list whose bytes
    # hold `null` every time (a None cost and a NaN one are written alike).
    accepted: set[bytes] = set()
    accepted_stmts: set[bytes] = set()
    for b in blocks:
        check_block_head(b)
        check_block(b)
        check_costs(b)
        stmts = b.get("statements")
        if stmts:
            key = serialised(stmts)
            if key is None or key not in accepted_stmts:
                check_statements(stmts)
                if key is not None and b"null" not in key:
                    accepted_stmts.add(key)
        for e in b["terminator"].get("successors") or ():
            v = e.get("transitions")
            if type(v) is dict:
                # An accepted matrix has no `null` (its costs are never None).
                key = serialised(v)
                if key is None or key not in accepted:
                    check_matrix(v)
                    if key is not None:
                        accepted.add(key)


def check_plan_part(doc: Any) -> None:
    """`check_plan`, for the plan inside an artifact (`sectioncheck.check_artifact`)."""
    _plan(doc)


def check_plan(doc: Any) -> None:
    """Accept `doc` as a plan exactly when `model.Plan` certainly would; raise `Reject`
    otherwise. `graph.build_graph(doc, check=True)` applies the same checks while it
    builds the graph (one traversal)."""
    _plan(doc)


check_strs = _strs


# --- free-form values carried into the next artifact -----------------------------------


def writable(value: Any) -> Any:
    """Check that a free-form value (carried as it is into the next artifact) can be
    written again: integers within 64 bits, finite floats, at any depth.

    >>> writable({"a": [1, 2.5, "x"]})
    {'a': [1, 2.5, 'x']}
    >>> writable({"a": [2**70]})
    Traceback (most recent call last):
    ...
    ValueError: an integer outside the 64-bit range
    """
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, bool) or v is None or isinstance(v, str):
            continue
        if isinstance(v, int):
            if not INT_MIN <= v <= INT_MAX:
                raise ValueError("an integer outside the 64-bit range")
        elif isinstance(v, float):
            if v != v or v in (float("inf"), float("-inf")):
                raise ValueError("a non-finite number")
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
    return value
