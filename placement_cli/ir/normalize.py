"""The normalised plan written into artifacts (format 2, `docs/format.md`): derived
domains and block costs filled in, each distinct matrix named once. Built from a checked
`Graph` on first use (`normalize(g)`, kept with the graph): a stage that only reads a plan to run an
algorithm never pays for it. Kept apart from `ir/graph.py`, which checks and indexes a plan.
"""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Any

import orjson
from msgspec.json import encode

from placement_cli.formats.artifact import Raw, fragment

if TYPE_CHECKING:
    from placement_cli.ir.indexed import Graph
from placement_cli.core.io import num, num_text


class _Nums(dict):  # type: ignore[type-arg]
    """Plan number -> written number (`io.num`), memoised: a large plan repeats a few
    hundred distinct costs millions of times, and a dict hit is a C-level lookup where
    `num` is a Python call. (1 == 1.0 == True share a key, and all write as 1.)"""

    def __missing__(self, v: Any) -> Any:
        r = self[v] = None if v is None else num(float(v))  # a checked document may hold ints
        return r


def normalize(g: Graph) -> dict[str, Any]:
    """The normalised plan as written into artifacts (`_normalize`), built on first use
    and kept with the graph: a stage that only reads a plan to run an algorithm never
    pays for it."""
    got = g._memo.get("normalized")
    if got is None:
        got = g._memo["normalized"] = _normalize(g)
    return got  # type: ignore[no-any-return]


def _normalize(g: Graph) -> dict[str, Any]:
    """The compact normalised plan (artifact format 2): derived `domain` and block `cost`
    filled in, `entry` explicit, each distinct non-default transition matrix written once
    under `matrices` (named `m0, m1, ...` in order of first use) and referred to by name;
    an edge on the default matrix carries no `transitions`. Empty lists and maps are left
    out. It is a valid plan file, and normalising it again gives the same bytes.

    Written once, by `rendered` (what artifacts carry), and read back: one writer, so a
    field it writes reaches every artifact and every view of the plan alike."""
    got = rendered(g, plain=True)
    got["blocks"] = orjson.loads(b"".join(got["blocks"].parts))
    return got


def _top(g: Graph, blocks: Any, matrices: dict[str, Any]) -> dict[str, Any]:
    """The normalised plan around its `blocks` (a list, or their rendered bytes)."""
    plan = g.plan
    normalized: dict[str, Any] = {
        "version": 1,
        "targets": list(g.targets),
        "entry": g.block_ids[g.entry],
        "transitions": g.default_matrix.to_json(g.targets),
        "blocks": blocks,
    }
    if matrices:
        normalized["matrices"] = matrices
    if plan.paths:
        normalized["paths"] = {k: list(v) for k, v in plan.paths.items()}
    if plan.name is not None:
        normalized["name"] = plan.name
    provenance = getattr(plan, "provenance", None)
    if provenance:  # a lowered plan: each block's origin in the MIR travels with it
        normalized["provenance"] = provenance
    return normalized


# Pieces of a block's line, in the sorted key order `artifact.render` writes.
_PARAMS = b',"params":'
_PATHS = b',"paths":'
_PREMIUM = b',"premium":'
_STATEMENTS = b',"statements":'
_NO_STATEMENTS = b',"statements":[]'
_TERM = b',"terminator":{'
_TERM_COST = b',"terminator":{"cost":'
_SUCC_FIRST = b',"successors":[{'
_SUCC_NEXT = b",{"
_ARGS = b'"args":'
_BLOCK = b'"block":'
_ARGS_BLOCK = b',"block":'


def rendered(g: Graph, plain: bool = False) -> dict[str, Any]:
    """The normalised plan (`normalize`) with its `blocks` already written as
    `artifact.render` writes them in an artifact's `plan` (an `artifact.Raw`), made from
    memoised pieces (a block's cost and domain per distinct domain and cost row, its
    statements per distinct statement list, a successor's matrix name per matrix)
    rather than a dict per block, statement and successor rendered one by one; its
    `matrices` already written too (one `Raw`, `_MatrixWriter.write_all`), or with
    `plain` as data. `tests/test_normalize_render.py` holds it to a
    record-by-record reference writer on every example and on random plans.

    >>> from placement_cli.formats.plan import Plan
    >>> from placement_cli.ir.graph import build_graph
    >>> from placement_cli.formats.artifact import fragment, render
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a", "b"],
    ...     "blocks": [{"id": "x", "statements": [{"cost": {"a": 1.0, "b": 2.5}}],
    ...                 "terminator": {"kind": "goto", "successors": [{"block": "y"}]}},
    ...                {"id": "y", "terminator": {"kind": "return"}}]}))
    >>> render({"plan": fragment(rendered(g))}) == render({"plan": normalize(g)})
    True
    """
    targets = g.targets
    n = len(targets)
    default = g.default_matrix
    dumps = orjson.dumps
    sort = orjson.OPT_SORT_KEYS
    nums = _Nums()
    ids = g.block_ids
    idb = _json_strings(ids)
    mats: list[Any] = []  # the distinct matrices in order of first use: m0, m1, ...
    # id(matrix) -> the end of a successor that names it (the default: no name).
    tails: dict[int, bytes] = {id(default): b"}"}
    heads: dict[tuple[Any, ...], bytes] = {}  # (domain, cost row) -> '{"cost":..,"domain":..,"id":'
    stmts_memo: dict[bytes, bytes] = {}  # the statements as read -> ',"statements":[..]'
    kinds: dict[str, bytes] = {}  # terminator kind -> '"kind":".."'

    out: list[bytes] = [b"[\n      "]
    push = out.append
    bases = g._memo["base"]
    domain, succ, edge_mat, edge_dst = g.domain, g.succ, g.edge_mat, g.edge_dst
    for i, b in enumerate(g.plan.blocks):
        dom = domain[i]
        base = bases[i]
        hk = (dom, *base)
        head = heads.get(hk)
        if head is None:
            ts = [t for t in range(n) if dom >> t & 1]
            cost = dumps({targets[t]: nums[base[t]] for t in ts}, option=sort)
            head = heads[hk] = (
                b'{"cost":' + cost + b',"domain":' + dumps([targets[t] for t in ts]) + b',"id":'
            )
        push(head)
        push(idb[i])
        sts = b.statements
        params = b.params
        if params:
            push(_PARAMS + dumps(list(params)))
        paths = b.paths
        if paths:
            push(_PATHS + dumps(list(paths)))
        premium = b.premium
        if premium:
            push(_PREMIUM + dumps({k: nums[v] for k, v in premium.items()}, option=sort))
        if not sts:
            push(_NO_STATEMENTS)
        else:
            # Keyed by the statements' own JSON: equal JSON is an equal list, which
            # normalises to equal bytes.
            key = encode(sts)
            got = stmts_memo.get(key)
            if got is None:
                got = stmts_memo[key] = _STATEMENTS + dumps(_statements(sts, nums), option=sort)
            push(got)
        term = b.terminator
        tsuccs = term.successors
        tcost = term.cost
        if tcost is None:
            push(_TERM)
        else:
            push(_TERM_COST + dumps({k: nums[v] for k, v in tcost.items()}, option=sort) + b",")
        kind = term.kind
        kb = kinds.get(kind)
        if kb is None:
            kb = kinds[kind] = b'"kind":' + dumps(kind)
        push(kb)
        if tsuccs:
            first = _SUCC_FIRST
            for e, eid in zip(tsuccs, succ[i], strict=True):
                push(first)
                first = _SUCC_NEXT
                args = e.args
                if args:
                    push(_ARGS + dumps(list(args)) + _ARGS_BLOCK)
                else:
                    push(_BLOCK)
                push(idb[edge_dst[eid]])
                mt = edge_mat[eid]
                tail = tails.get(id(mt))
                if tail is None:
                    tail = tails[id(mt)] = b',"transitions":"m%d"}' % len(mats)
                    mats.append(mt)
                push(tail)
            push(b"]}},\n      ")
        else:
            push(b"}},\n      ")
    # The list as `render` lays it out at an artifact's `plan.blocks`.
    if len(out) > 1:
        out[-1] = out[-1][:-8]  # no separator after the last block
        out.append(b"\n    ]")
    else:
        out[0] = b"[]"
    matrices: Any = {}
    if plain:
        matrices = {f"m{j}": m.to_json(targets) for j, m in enumerate(mats)}
    elif mats:
        matrices = _MatrixWriter(targets).write_all(mats)
    return _top(g, Raw(out), matrices)


class _Texts(dict):  # type: ignore[type-arg]
    """Plan number -> the bytes orjson writes for it (`io.num_text`), memoised as
    `_Nums`. A foreign plan's matrices hold about as many distinct numbers as entries
    (100k on 100k blocks), so the miss path counts too."""

    def __missing__(self, v: float) -> bytes:
        r = self[v] = num_text(v)
        return r


class _MatrixWriter:
    """The normalised plan's `matrices` (`m0`, `m1`, ... in order of first use) as the
    bytes `artifact.render` writes for them in an artifact's `plan`: each matrix's
    compact JSON (`Matrix.to_json` under `orjson.dumps` with sorted keys) written from
    a template per layout of allowed entries (the layout's keys in orjson's order around
    a `%b` per entry), every entry of every matrix filled in by one `%`, with the
    numbers' memoised texts. A foreign plan has a distinct matrix on every edge (117k
    on 100k blocks): building a dict of dicts for each and handing them to orjson was a
    quarter of writing the plan, and a `%` and an `orjson.Fragment` per matrix a fifth.

    >>> from placement_cli.ir.indexed import make_matrix
    >>> from placement_cli.formats.artifact import render
    >>> m = make_matrix(2, (0.0, 2.5, None, 0.0))
    >>> print(render({"plan": {"matrices": _MatrixWriter(("b%", "a")).write_all([m])}}).decode(), end="")
    {
      "plan": {
        "matrices": {
          "m0": {"a":{"a":0},"b%":{"a":2.5,"b%":0}}
        }
      }
    }
    """

    def __init__(self, targets: tuple[str, ...]) -> None:
        # The targets in the order orjson sorts keys (by their UTF-8 bytes), as indices.
        first = {t: i for i, t in reversed(list(enumerate(targets)))}
        keys = orjson.loads(orjson.dumps(dict.fromkeys(targets, 0), option=orjson.OPT_SORT_KEYS))
        self.order = [first[t] for t in keys]
        # Each target's key as a template's text: JSON, a literal % doubled.
        self.keys = [orjson.dumps(t).replace(b"%", b"%%") + b":" for t in targets]
        self.layouts: dict[tuple[int, ...], tuple[bytes, Any]] = {}
        self.texts = _Texts()

    def write_all(self, mats: list[Any]) -> Raw:
        """`{"m0": .., "m1": .., ...}` for the matrices `mats`, as `render` lays out a
        map at an artifact's `plan.matrices`: keys sorted (as strings: m0, m1, m10,
        ...), one entry per line."""
        layouts = self.layouts
        entries: list[bytes] = []
        values: list[float] = []
        for j in sorted(range(len(mats)), key=str):
            m = mats[j]
            got = layouts.get(m.out)
            if got is None:
                got = layouts[m.out] = self._layout(m.n, m.out)
            template, pick = got
            entries.append(b'"m%d": ' % j + template)
            values += pick(m.cost)
        text = _ENTRY_SEP.join(entries) % tuple(map(self.texts.__getitem__, values))
        return Raw([b"{\n" + _ENTRY_PAD, text, b"\n    }"])

    def _layout(self, n: int, out: tuple[int, ...]) -> tuple[bytes, Any]:
        """The template of a layout (`out`: the allowed destinations of each source)
        and what picks its entries' costs, in the template's order."""
        rows: list[bytes] = []
        at: list[int] = []
        for s in self.order:
            given = [d for d in self.order if out[s] >> d & 1]
            if given:
                rows.append(
                    self.keys[s] + b"{" + b",".join(self.keys[d] + b"%b" for d in given) + b"}"
                )
                at += [s * n + d for d in given]
        template = b"{" + b",".join(rows) + b"}"
        if len(at) > 1:
            return template, itemgetter(*at)
        return template, lambda cost: tuple(cost[k] for k in at)


# `render`'s layout of a map at an artifact's `plan.matrices` (depth 2: entries indented
# by three levels, the closing brace by two).
_ENTRY_PAD = b"      "
_ENTRY_SEP = b",\n" + _ENTRY_PAD


def _json_strings(strings: tuple[str, ...]) -> list[bytes]:
    """Each string as JSON bytes (what orjson writes for it).

    Not `orjson.dumps` per string: each bytes object it returns sits alone on a fresh
    page of memory (measured: one page fault, about 3 microseconds, per object kept),
    so keeping 100k of them cost a third of a second. Strings without a quote, a
    backslash or a control character are written as they are; any other, by orjson.

    >>> _json_strings(("bb0", 'a"b', "é")) == [orjson.dumps(s) for s in ("bb0", 'a"b', "é")]
    True
    """
    whole = "".join(strings)
    if '"' not in whole and "\\" not in whole and whole.isprintable():
        return [f'"{s}"'.encode() for s in strings]
    return [
        f'"{s}"'.encode()
        if '"' not in s and "\\" not in s and s.isprintable()
        else bytes(memoryview(orjson.dumps(s)))
        for s in strings
    ]


def _statements(sts: Any, nums: _Nums) -> list[dict[str, Any]]:
    """A block's statements as `normalize` writes them."""
    got = []
    for st in sts:
        rec: dict[str, Any] = {"cost": {k: nums[v] for k, v in st.cost.items()}}
        text = st.text
        if text is not None:
            rec["text"] = text
        got.append(rec)
    return got


def plan_fragment(g: Any) -> Raw:
    """The normalised plan of graph `g` as the bytes `render` writes for an artifact's
    `plan` (built once per graph and kept: `run` writes the same plan into five artifacts).

    >>> from placement_cli.formats.plan import Plan
    >>> from placement_cli.ir.graph import build_graph
    >>> from placement_cli.formats.artifact import render
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a"],
    ...     "blocks": [{"id": "x", "terminator": {"kind": "return"}}]}))
    >>> render({"plan": plan_fragment(g)}) == render({"plan": normalize(g)})
    True
    """
    got = g._memo.get("plan_bytes")
    if got is None:
        got = g._memo["plan_bytes"] = fragment(rendered(g))
    return got
