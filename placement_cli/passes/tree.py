"""`tree`: place the operators of a query-plan tree on engines under a cut budget.

The seed (appendix A1, critical-path DP): `dp[v][e][k]` is the least latency of v's
subtree with v on engine e and at most k cross-engine edges ("cuts") inside it. Sibling
subtrees run in parallel, so children combine with MAX; a cut edge adds the transfer of
the child's output to that child's branch. The answer is `min_e dp[root][e][K]`.

Two changes of speed and none of meaning (the literal seed is `reference_dp`, which
the tests and the benchmark run side by side with `fast_dp`):

* `dp[v][e]` is non-increasing in k and constant once k reaches the number of edges
  below v, so it is stored without its constant tail (a short list; reading past the
  end gives the last value). Budgets above a subtree's edge count never cost work.
* The fold `A'[k] = min_i max(A[i], B[k-i])` of two non-increasing sequences is a
  two-pointer walk: the max only drops when the side holding it moves, so each step
  moves that side (`merge_minmax`), O(len A + len B) instead of O(K^2).

Time O(sum over edges (v,u) of min(K, |subtree(u)|) * E^2); see `docs/tree.md`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from operator import add, lt
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from placement_cli import FORMAT_VERSION
from placement_cli.diagnostics import Diagnostic
from placement_cli.errors import InputError, Problem
from placement_cli.io import gc_paused, num, read_document, source_name
from placement_cli.pipeline import validation_problems
from placement_cli.tree_model import LinearTransfer, TreeFile

INF = math.inf
MAX_EXPANDED_NODES = 1_000_000
_INF_ROW: list[float] = [INF]  # shared by every (node, engine) that cannot run; never mutated
_BY_BUDGET_MAX = 8  # `lift` strategy crossover, measured with benchmarks/bench_tree.py


class TreeOptions(BaseModel):
    """`budget` overrides the file's cut budget; `expand_dag` duplicates shared sub-plans."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    budget: int | None = Field(default=None, ge=0)
    expand_dag: bool = False


# --------------------------------------------------------------------------- input


@dataclass(frozen=True, slots=True, eq=False)
class TreeInput:
    """A checked tree file: every id, engine and child resolved, one root, no cycle.
    Whether it is a tree or a DAG is decided by `build_tree` (it depends on options)."""

    source: str
    file: TreeFile
    prefix: str  # field-path prefix of the file inside the document ("" or "tree.input.")
    engines: tuple[str, ...]
    ids: tuple[str, ...]
    kids: tuple[tuple[int, ...], ...]  # input indices of each node's children
    time: tuple[tuple[float, ...], ...]  # time[x][e], INF where e cannot run x
    root: int


def load_tree(path: str) -> TreeInput:
    """Read a tree file (JSON/YAML), a `tree` artifact (its `tree.input`), or `-` for stdin.

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.yaml"
    >>> _ = p.write_text("version: 1\\nengines: [pg]\\nnodes: [{id: scan, time: {pg: 2}}]\\n")
    >>> load_tree(str(p)).ids
    ('scan',)
    """
    source = source_name(path)
    doc = read_document(path)
    try:
        return parse_tree(doc, source)
    except InputError as exc:
        raise exc.with_source(source) from None


def parse_tree(doc: Any, source: str = "<input>") -> TreeInput:
    """Validate a parsed tree document; every problem is reported at once (exit 3).

    >>> t = parse_tree({"version": 1, "engines": ["pg", "duck"], "nodes": [
    ...     {"id": "agg", "children": ["scan"], "time": {"duck": 1}},
    ...     {"id": "scan", "time": {"pg": 2, "duck": 5}}]})
    >>> t.ids[t.root], t.kids, t.time[0]
    ('agg', ((1,), ()), (inf, 1.0))
    """
    prefix = ""
    if isinstance(doc, dict) and "format_version" in doc:
        doc, prefix = _artifact_input(doc)
    if not isinstance(doc, dict):
        raise InputError([Problem(prefix.rstrip("."), "a tree file is a mapping at the top level")], source)
    with gc_paused():
        try:
            f = TreeFile.model_validate(doc)
        except ValidationError as exc:
            raise InputError(validation_problems(exc, prefix), source) from None
        return _check(f, source, prefix)


def _artifact_input(doc: dict[str, Any]) -> tuple[Any, str]:
    if doc.get("format_version") != FORMAT_VERSION:
        raise InputError([Problem("format_version", f"unsupported artifact version {doc.get('format_version')!r}; this tool reads {FORMAT_VERSION}")])
    if doc.get("kind") != "tree":
        raise InputError([Problem("kind", f"not a tree file or tree artifact: kind {doc.get('kind')!r}")])
    sec = doc.get("tree")
    if not isinstance(sec, dict) or "input" not in sec:
        raise InputError([Problem("tree.input", "required field is missing")])
    return sec["input"], "tree.input."


def _check(f: TreeFile, source: str, pre: str) -> TreeInput:
    problems: list[Problem] = []
    eidx: dict[str, int] = {}
    for i, name in enumerate(f.engines):
        if name in eidx:
            problems.append(Problem(f"{pre}engines[{i}]", f"duplicate engine '{name}'"))
        else:
            eidx[name] = i
    n_e = len(f.engines)

    index: dict[str, int] = {}
    for i, node in enumerate(f.nodes):
        if node.id in index:
            problems.append(Problem(f"{pre}nodes[{i}].id", f"duplicate id '{node.id}' (first at nodes[{index[node.id]}])"))
        else:
            index[node.id] = i

    times: list[tuple[float, ...]] = []
    kids: list[tuple[int, ...]] = []
    has_parent = [False] * len(f.nodes)
    for i, node in enumerate(f.nodes):
        row = [INF] * n_e
        for name, t in node.time.items():
            e = eidx.get(name)
            if e is None:
                problems.append(Problem(f"{pre}nodes[{i}].time.{name}", f"unknown engine '{name}'"))
            elif t is not None:
                row[e] = float(t)
        times.append(tuple(row))
        ks = []
        for j, c in enumerate(node.children):
            x = index.get(c)
            if x is None:
                problems.append(Problem(f"{pre}nodes[{i}].children[{j}]", f"unknown node '{c}'"))
            else:
                ks.append(x)
                has_parent[x] = True
        kids.append(tuple(ks))

    problems += _check_transfer(f, eidx, index, pre)
    problems += _check_sizes(f, has_parent, pre)

    cycle = _find_cycle(f, kids, index, pre)
    if cycle is not None:
        problems.append(cycle)

    root = -1
    if f.root is not None:
        if f.root in index:
            root = index[f.root]
        else:
            problems.append(Problem(f"{pre}root", f"unknown node '{f.root}'"))
    elif cycle is None:
        tops = [i for i in range(len(f.nodes)) if not has_parent[i]]
        if len(tops) == 1:
            root = tops[0]
        elif len(tops) > 1:
            shown = ", ".join(f"'{f.nodes[i].id}' (nodes[{i}])" for i in tops[:5])
            more = f" and {len(tops) - 5} more" if len(tops) > 5 else ""
            problems.append(Problem(f"{pre}root", f"several nodes have no parent: {shown}{more}; set `root` to the one to place"))
    if problems:
        raise InputError(problems, source)
    return TreeInput(
        source=source,
        file=f,
        prefix=pre,
        engines=tuple(f.engines),
        ids=tuple(n.id for n in f.nodes),
        kids=tuple(kids),
        time=tuple(times),
        root=root,
    )


def _check_transfer(f: TreeFile, eidx: dict[str, int], index: dict[str, int], pre: str) -> list[Problem]:
    out = []
    for src, row in f.transfer.linear.items():
        if src not in eidx:
            out.append(Problem(f"{pre}transfer.linear.{src}", f"unknown engine '{src}'"))
        for dst in row:
            if dst not in eidx:
                out.append(Problem(f"{pre}transfer.linear.{src}.{dst}", f"unknown engine '{dst}'"))
            elif dst == src:
                out.append(Problem(f"{pre}transfer.linear.{src}.{dst}", "same engine: an edge inside one engine is not a cut and costs nothing"))
    seen: dict[tuple[str, str, str], int] = {}
    for i, x in enumerate(f.transfer.explicit):
        at = f"{pre}transfer.explicit[{i}]"
        if x.child not in index:
            out.append(Problem(f"{at}.child", f"unknown node '{x.child}'"))
        for field, name in (("from", x.from_), ("to", x.to)):
            if name not in eidx:
                out.append(Problem(f"{at}.{field}", f"unknown engine '{name}'"))
        if x.from_ == x.to:
            out.append(Problem(f"{at}.to", "same engine as `from`: an edge inside one engine is not a cut and costs nothing"))
        key = (x.child, x.from_, x.to)
        if key in seen:
            out.append(Problem(at, f"duplicate transfer for child '{x.child}' from '{x.from_}' to '{x.to}' (first at transfer.explicit[{seen[key]}])"))
        else:
            seen[key] = i
    return out


def _models(f: TreeFile) -> list[LinearTransfer]:
    ms = [m for row in f.transfer.linear.values() for m in row.values()]
    return ms + ([f.transfer.default] if f.transfer.default is not None else [])


def _check_sizes(f: TreeFile, has_parent: list[bool], pre: str) -> list[Problem]:
    """A child's output size is needed as soon as some linear model charges for it;
    guessing 0 rows would make every cut look free."""
    ms = _models(f)
    per_row = any(m.per_row > 0 for m in ms)
    per_byte = any(m.per_byte > 0 for m in ms)
    out = []
    for i, node in enumerate(f.nodes):
        if not has_parent[i]:
            continue
        if (per_row or per_byte) and node.rows is None:
            why = "per_row" if per_row else "per_byte"
            out.append(Problem(f"{pre}nodes[{i}].rows", f"required: a linear transfer model has {why} > 0"))
        if per_byte and node.row_width is None:
            out.append(Problem(f"{pre}nodes[{i}].row_width", "required: a linear transfer model has per_byte > 0"))
    return out


def _find_cycle(f: TreeFile, kids: list[tuple[int, ...]], index: dict[str, int], pre: str) -> Problem | None:
    """The first cycle met by an iterative DFS in input order, as a Problem naming the
    node that is its own ancestor and the chain that proves it."""
    n = len(kids)
    color = [0] * n  # 0 new, 1 on the DFS stack, 2 done
    for start in range(n):
        if color[start]:
            continue
        stack = [(start, 0)]
        color[start] = 1
        while stack:
            v, j = stack[-1]
            if j < len(kids[v]):
                stack[-1] = (v, j + 1)
                c = kids[v][j]
                if color[c] == 1:
                    chain = [x for x, _ in stack]
                    chain = chain[chain.index(c):] + [c]
                    names = " -> ".join(f.nodes[x].id for x in chain)
                    pos = _child_pos(f, v, c, index)
                    return Problem(f"{pre}nodes[{v}].children[{pos}]", f"cycle: node '{f.nodes[c].id}' is its own ancestor ({names})")
                if color[c] == 0:
                    color[c] = 1
                    stack.append((c, 0))
            else:
                color[v] = 2
                stack.pop()
    return None


def _child_pos(f: TreeFile, v: int, c: int, index: dict[str, int]) -> int:
    for j, name in enumerate(f.nodes[v].children):
        if index.get(name) == c:
            return j
    return 0  # unreachable: c was found among v's children


# --------------------------------------------------------------------------- tree


@dataclass(frozen=True, slots=True, eq=False)
class Tree:
    """The indexed tree the DP runs on. Node order: the input's nodes under the root in
    input order, then (`--expand-dag`) the copies of shared sub-plans in DFS order."""

    engines: tuple[str, ...]
    ids: tuple[str, ...]
    origin: tuple[int, ...]  # tree node -> input node
    children: tuple[tuple[int, ...], ...]
    root: int
    time: tuple[tuple[float, ...], ...]  # per tree node, INF where the engine cannot run it
    rows: tuple[float, ...]  # per input node (0 where unknown, which the checks allow only when unused)
    nbytes: tuple[float, ...]  # rows * row_width per input node
    coef: tuple[tuple[float, float, float], ...]  # (fixed, per_row, per_byte) at src * E + dst; INF fixed: no transfer
    sized: bool  # some per_row or per_byte is non-zero, so the cost depends on the child
    explicit: dict[int, tuple[tuple[int, int, float], ...]]  # input node -> (src, dst, cost)

    @property
    def n(self) -> int:
        return len(self.ids)

    def transfer(self, u: int) -> list[float]:
        """Flat `T[src * E + dst]` for the edge from u to its parent: 0 on the diagonal,
        INF where no transfer is defined."""
        o = self.origin[u]
        r = self.rows[o]
        b = self.nbytes[o]
        t = [f + pr * r + pb * b for f, pr, pb in self.coef]
        for s, d, c in self.explicit.get(o, ()):
            t[s * len(self.engines) + d] = c
        return t

    def columns(self, u: int, dests: Sequence[int]) -> list[list[float]]:
        """`cols[e][src] = T(u, src, e)` for each e in dests (the DP reads a column per
        parent engine); the same numbers as `transfer`, computed the same way."""
        n_e = len(self.engines)
        o = self.origin[u]
        cols: list[list[float]] = [[]] * n_e  # the shared empty list is never written
        coef = self.coef
        if self.sized:
            r = self.rows[o]
            b = self.nbytes[o]
            for e in dests:
                cols[e] = [f + pr * r + pb * b for f, pr, pb in coef[e::n_e]]
        else:
            for e in dests:
                cols[e] = [f for f, _, _ in coef[e::n_e]]
        for s, d, c in self.explicit.get(o, ()):
            if cols[d]:
                cols[d][s] = c
        return cols


def build_tree(inp: TreeInput, expand_dag: bool = False) -> tuple[Tree, tuple[Diagnostic, ...]]:
    """The tree under the root. A shared sub-plan (a node with two parents) is an input
    error naming it, unless `expand_dag`: then every further use gets its own copy
    (`scan#2`, ...), reported by an info diagnostic.

    >>> inp = parse_tree({"version": 1, "engines": ["pg"], "nodes": [
    ...     {"id": "join", "children": ["scan", "scan"], "time": {"pg": 1}},
    ...     {"id": "scan", "time": {"pg": 2}}]})
    >>> tree, diags = build_tree(inp, expand_dag=True)
    >>> tree.ids, tree.children, diags[0].code
    (('join', 'scan', 'scan#2'), ((1, 2), (), ()), 'dag-expanded')
    """
    f = inp.file
    pre = inp.prefix
    n_in = len(inp.ids)
    diags: list[Diagnostic] = []

    reach = [False] * n_in
    reach[inp.root] = True
    todo = [inp.root]
    while todo:
        for c in inp.kids[todo.pop()]:
            if not reach[c]:
                reach[c] = True
                todo.append(c)

    parents: list[list[tuple[int, int]]] = [[] for _ in range(n_in)]
    for x in range(n_in):
        if reach[x]:
            for j, c in enumerate(inp.kids[x]):
                parents[c].append((x, j))
    shared = [x for x in range(n_in) if len(parents[x]) > 1]
    if shared and not expand_dag:
        problems = []
        for x in shared:
            (p1, _), (p2, j2) = parents[x][0], parents[x][1]
            where = f"listed twice among the children of '{inp.ids[p1]}'" if p1 == p2 else f"a child of '{inp.ids[p1]}' and of '{inp.ids[p2]}'"
            problems.append(
                Problem(
                    f"{pre}nodes[{p2}].children[{j2}]",
                    f"node '{inp.ids[x]}' is shared: it is {where}; "
                    "an operator tree cannot share a sub-plan (pass --expand-dag to duplicate it)",
                )
            )
        raise InputError(problems, inp.source)

    # Preorder DFS from the root creates one tree node per visit: a tree has one visit
    # per node, a DAG one per path from the root to the node.
    visit_origin: list[int] = []
    visit_kids: list[list[int]] = []
    first_visit = [-1] * n_in
    stack = [(inp.root, -1)]
    while stack:
        x, p = stack.pop()
        t = len(visit_origin)
        if shared and t >= MAX_EXPANDED_NODES:
            raise InputError([Problem(f"{pre}nodes", f"expanding the shared sub-plans would create more than {MAX_EXPANDED_NODES} nodes")], inp.source)
        visit_origin.append(x)
        visit_kids.append([])
        if p >= 0:
            visit_kids[p].append(t)
        if first_visit[x] < 0:
            first_visit[x] = t
        for c in reversed(inp.kids[x]):
            stack.append((c, t))

    order = [first_visit[x] for x in range(n_in) if first_visit[x] >= 0]
    copies = [t for t in range(len(visit_origin)) if first_visit[visit_origin[t]] != t]
    order += copies
    new = [0] * len(visit_origin)
    for i, t in enumerate(order):
        new[t] = i

    ids = [inp.ids[visit_origin[t]] for t in order]
    if copies:
        taken = set(inp.ids)
        count = [1] * n_in
        for i in range(len(order) - len(copies), len(order)):
            x = visit_origin[order[i]]
            while True:
                count[x] += 1
                cand = f"{inp.ids[x]}#{count[x]}"
                if cand not in taken:
                    break
            taken.add(cand)
            ids[i] = cand
        names: dict[int, list[str]] = {}
        for i, t in enumerate(order):
            names.setdefault(visit_origin[t], []).append(ids[i])
        for x in shared:
            ps = ", ".join(f"'{inp.ids[p]}'" for p, _ in parents[x])
            cs = names[x]
            diags.append(
                Diagnostic(
                    "info",
                    "dag-expanded",
                    f"node '{inp.ids[x]}' is shared by {len(parents[x])} parents ({ps}); "
                    f"--expand-dag duplicated its sub-plan, so it appears {len(cs)} times: {', '.join(cs)}",
                    tuple(cs),
                )
            )
        diags.append(Diagnostic("info", "dag-expanded", f"the plan DAG of {sum(reach)} nodes was expanded into a tree of {len(order)} nodes", ()))

    unplaced = [inp.ids[x] for x in range(n_in) if not reach[x]]
    if unplaced:
        shown = ", ".join(f"'{u}'" for u in unplaced[:10]) + (f" and {len(unplaced) - 10} more" if len(unplaced) > 10 else "")
        diags.append(
            Diagnostic("warning", "unplaced-nodes", f"{len(unplaced)} node(s) are not under root '{inp.ids[inp.root]}' and are not placed: {shown}", tuple(unplaced))
        )

    eidx = {e: i for i, e in enumerate(inp.engines)}
    index = {x: i for i, x in enumerate(inp.ids)}
    tr = f.transfer
    coef: list[tuple[float, float, float]] = []
    for s in inp.engines:
        for d in inp.engines:
            m = tr.linear.get(s, {}).get(d, tr.default)
            if s == d:
                coef.append((0.0, 0.0, 0.0))
            elif m is None:
                coef.append((INF, 0.0, 0.0))
            else:
                coef.append((float(m.fixed), float(m.per_row), float(m.per_byte)))
    explicit: dict[int, list[tuple[int, int, float]]] = {}
    for item in tr.explicit:
        explicit.setdefault(index[item.child], []).append((eidx[item.from_], eidx[item.to], float(item.cost)))
    rows = tuple(float(nd.rows) if nd.rows is not None else 0.0 for nd in f.nodes)
    nbytes = tuple(
        float(nd.rows) * float(nd.row_width) if nd.rows is not None and nd.row_width is not None else 0.0 for nd in f.nodes
    )
    origin = tuple(visit_origin[t] for t in order)
    tree = Tree(
        engines=inp.engines,
        ids=tuple(ids),
        origin=origin,
        children=tuple(tuple(new[c] for c in visit_kids[t]) for t in order),
        root=new[0],
        time=tuple(inp.time[x] for x in origin),
        rows=rows,
        nbytes=nbytes,
        coef=tuple(coef),
        sized=any(c[1] > 0 or c[2] > 0 for c in coef),
        explicit={k: tuple(v) for k, v in explicit.items()},
    )
    return tree, tuple(diags)


def tree_from_spec(engines: Sequence[str], nodes: Sequence[dict[str, Any]], transfer: dict[str, Any] | None = None) -> Tree:
    """A Tree from plain dicts, first node the root (tests, benchmarks, doctests).

    >>> t = tree_from_spec(["a", "b"], [{"id": "r", "children": ["x"], "time": {"a": 1}},
    ...                                 {"id": "x", "time": {"b": 1}}],
    ...                    {"default": {"fixed": 3}})
    >>> t.transfer(1)
    [0.0, 3.0, 3.0, 0.0]
    """
    doc = {"version": 1, "engines": list(engines), "root": nodes[0]["id"], "nodes": list(nodes)}
    if transfer is not None:
        doc["transfer"] = transfer
    return build_tree(parse_tree(doc))[0]


def children_first(tree: Tree) -> list[int]:
    """Every node after all of its descendants (reversed preorder; no recursion)."""
    out = []
    stack = [tree.root]
    while stack:
        v = stack.pop()
        out.append(v)
        stack.extend(tree.children[v])
    out.reverse()
    return out


# --------------------------------------------------------------------------- the DP


def at(seq: Sequence[float], k: int) -> float:
    """Value of a stored non-increasing sequence at budget k (its tail is implicit)."""
    return seq[k] if k < len(seq) else seq[-1]


def _trim(seq: list[float]) -> list[float]:
    i = len(seq) - 1
    last = seq[i]
    while i > 0 and seq[i - 1] == last:
        i -= 1
    return seq if i == len(seq) - 1 else seq[: i + 1]


def merge_minmax(a: list[float], b: list[float], size: int) -> list[float]:
    """`c[k] = min over i+j=k of max(a[i], b[j])` for non-increasing a and b (read past
    their ends as constant), k < size, returned without its constant tail.

    Only the side that holds the max can lower it, so each step moves that side; when
    that side is at its end, nothing lowers the max any more. Ties move `a` first, and
    `split_minmax` replays the same walk.

    >>> merge_minmax([9, 5, 1], [7, 6, 2], 10)
    [9, 7, 6, 5, 2]
    """
    la = len(a)
    lb = len(b)
    n = la + lb - 1
    if n > size:
        n = size
    i = j = 0
    x = a[0]
    y = b[0]
    out = [x if x >= y else y]
    for _ in range(n - 1):
        if x >= y:
            i += 1
            if i == la:
                break
            x = a[i]
        else:
            j += 1
            if j == lb:
                break
            y = b[j]
        out.append(x if x >= y else y)
    return _trim(out)


def split_minmax(a: list[float], b: list[float], k: int) -> tuple[int, int]:
    """The (i, j) with i + j <= k that `merge_minmax` used for `c[k]`.

    >>> split_minmax([9, 5, 1], [7, 6, 2], 3)
    (1, 2)
    """
    la = len(a)
    lb = len(b)
    i = j = 0
    x = a[0]
    y = b[0]
    for _ in range(k):
        if x >= y:
            if i + 1 == la:
                break
            i += 1
            x = a[i]
        else:
            if j + 1 == lb:
                break
            j += 1
            y = b[j]
    return i, j


_WINDOW_MIN = 48  # `lift` windows long sequences from this length on (shorter: plain elementwise min)


def lift(du: list[list[float]], cols: list[list[float]], dests: Sequence[int], size: int) -> list[list[float]]:
    """Seed lines 10-19 for one child u and each parent engine e in `dests`:
    `B[k] = min(du[e][k], min over e' != e of du[e'][k-1] + T(u, e', e))`, k < size,
    with `cols[e][e'] = T(u, e', e)`. Other positions of the result are `[INF]`.

    >>> lift([[5.0, 4.0], [1.0]], [[0.0, 1.0], [2.0, 0.0]], [0], 10)
    [[5.0, 2.0], [inf]]
    """
    n_e = len(du)
    out: list[list[float]] = [_INF_ROW] * n_e
    longest = 0
    for row in du:
        if row[-1] < INF and len(row) > longest:
            longest = len(row)
    if longest == 0:  # the child's subtree cannot be placed at all
        return out
    n = longest + 1 if longest < size else size
    m = n - 1  # entries k = 1..m read du[.][k-1]
    if m == 0:
        for e in dests:
            out[e] = du[e][:1]
        return out
    if m <= _BY_BUDGET_MAX:
        # Short sequences (most children): one min over all source engines per budget.
        # The diagonal (T = 0) adds du[e][k-1] >= du[e][k], so it never wins and needs
        # no exclusion; engines without a transfer contribute INF.
        xs = [[row[k] if k < len(row) else row[-1] for row in du] for k in range(m)]
        for e in dests:
            own = du[e]
            col = cols[e]
            alt = [min(map(add, x, col)) for x in xs]
            if len(own) > 1:
                tail = own[1:n]
                if len(tail) < m:
                    tail += [own[-1]] * (m - len(tail))
                b = [own[0]]
                b.extend(map(min, tail, alt))
            else:
                c = own[0]
                b = [c]
                b.extend([x if x < c else c for x in alt])
            out[e] = _trim(b) if b[-1] == b[-2] else b
        return out
    # Long sequences: per destination, own's values with each allowed source's shifted
    # list folded in by an elementwise min. From _WINDOW_MIN on, only over the window of
    # budgets where some candidate can beat `own`: every candidate at k is at least
    # env[k] + cmin (env: the least source value at k, cmin: the least entry of any
    # destination's column); float addition rounds monotonically, so where that bound
    # is >= own's value no candidate is smaller and B[k] is own's value.
    srcs = [s for s in range(n_e) if du[s][-1] < INF]
    pads: list[list[float]] = [_INF_ROW] * n_e
    for s in srcs:
        row = du[s]
        pads[s] = row if len(row) >= m else row + [row[-1]] * (m - len(row))  # maybe longer: read up to m
    windowed = m >= _WINDOW_MIN
    if windowed:
        env = pads[srcs[0]] if len(srcs) == 1 else list(map(min, *[pads[s] for s in srcs]))
        # one bound for every destination: the cheapest entry of their columns (the
        # diagonal included, so usually 0 and env itself)
        cmin = min([min(cols[e]) for e in dests], default=INF)
        envc = env if cmin == 0 else [x + cmin for x in env]
    for e in dests:
        own = du[e]
        col = cols[e]
        if not windowed:
            cands = []
            for s in srcs:
                if s != e:
                    c = col[s]
                    if c < INF:
                        cands.append([x + c for x in pads[s]])
            if not cands:
                out[e] = own[:n]
                continue
            tail = own[1:n]
            if len(tail) < m:
                tail += [own[-1]] * (m - len(tail))
            b = [own[0]]
            b.extend(map(min, tail, *cands))
            out[e] = _trim(b) if b[-1] == b[-2] else b
            continue
        if cmin == INF:
            out[e] = own[:n]
            continue
        tail = own[1:n]
        if len(tail) < m:
            tail += [own[-1]] * (m - len(tail))
        beats = list(map(lt, envc, tail))
        if True not in beats:
            out[e] = own[:n]
            continue
        k0 = beats.index(True)
        k1 = m - beats[::-1].index(True)  # window k0 <= k < k1 of tail positions
        seg = tail[k0:k1]
        for s in srcs:
            c = col[s]
            if s != e and c < INF:
                p = pads[s]
                if p[k1 - 1] + c < seg[0]:  # else even its least value cannot win (seg does not increase)
                    # x + c as the plain elementwise min's candidate, so the same sums win
                    seg = [y if (y := x + c) < a else a for a, x in zip(seg, p[k0:k1], strict=True)]
        b = [own[0]]
        b += tail
        b[k0 + 1 : k1 + 1] = seg
        out[e] = _trim(b) if b[-1] == b[-2] else b
    return out


def fast_dp(tree: Tree, budget: int) -> list[list[list[float]]]:
    """`dp[v][e]` for every node and engine as trimmed sequences (see `at`).

    >>> t = tree_from_spec(["a", "b"], [
    ...     {"id": "r", "children": ["x", "y"], "time": {"a": 1, "b": 1}},
    ...     {"id": "x", "time": {"a": 9, "b": 2}}, {"id": "y", "time": {"a": 3, "b": 9}}],
    ...     {"default": {"fixed": 1}})
    >>> fast_dp(t, 2)[t.root]
    [[10.0, 4.0], [10.0, 5.0]]
    """
    n_e = len(tree.engines)
    size = budget + 1
    dp: list[list[list[float]]] = [[] for _ in range(tree.n)]
    for v in children_first(tree):
        tv = tree.time[v]
        dests = [e for e in range(n_e) if tv[e] < INF]
        ch = tree.children[v]
        if not ch:
            dp[v] = [[tv[e]] if tv[e] < INF else _INF_ROW for e in range(n_e)]
            continue
        row: list[list[float]] = [_INF_ROW] * n_e
        if dests:
            acc: list[list[float] | None] = [None] * n_e
            for u in ch:
                bs = lift(dp[u], tree.columns(u, dests), dests, size)
                for e in dests:
                    b = bs[e]
                    a = acc[e]
                    acc[e] = b if a is None else merge_minmax(a, b, size)
            for e in dests:
                a = acc[e]
                assert a is not None
                if a[-1] < INF:
                    c = tv[e]
                    r = [c + x for x in a]
                    # adding c can round two tail values together
                    row[e] = _trim(r) if len(r) > 1 and r[-1] == r[-2] else r
        dp[v] = row
    return dp


def reference_dp(tree: Tree, budget: int) -> list[list[list[float]]]:
    """The seed's pseudocode, line by line, with full arrays `dp[v][e][0..K]`: the
    reference the tests and the benchmark compare `fast_dp` with. Not used by the CLI.

    >>> t = tree_from_spec(["a", "b"], [
    ...     {"id": "r", "children": ["x", "y"], "time": {"a": 1, "b": 1}},
    ...     {"id": "x", "time": {"a": 9, "b": 2}}, {"id": "y", "time": {"a": 3, "b": 9}}],
    ...     {"default": {"fixed": 1}})
    >>> reference_dp(t, 2)[t.root]
    [[10.0, 4.0, 4.0], [10.0, 5.0, 5.0]]
    """
    E = range(len(tree.engines))
    n_e = len(tree.engines)
    K = budget
    dp: list[list[list[float]]] = [[] for _ in range(tree.n)]
    for v in _postorder(tree):  # 1-2
        ch = tree.children[v]
        trans = {u: tree.transfer(u) for u in ch}  # 𝒯(u, e', e) = trans[u][e' * |E| + e]
        dp[v] = [[] for _ in E]
        for e in E:  # 3
            if not ch:  # 4
                dp[v][e] = [tree.time[v][e] for _ in range(K + 1)]  # 5-7
            else:
                B: dict[int, list[float]] = {}
                for u in ch:  # 10
                    B[u] = [INF] * (K + 1)
                    for k in range(K + 1):  # 11
                        best = dp[u][e][k]  # 12
                        if k >= 1:  # 13
                            alt = min((dp[u][e2][k - 1] + trans[u][e2 * n_e + e] for e2 in E if e2 != e), default=INF)  # 14
                            best = min(best, alt)  # 15
                        B[u][k] = best  # 17
                A = [0.0] * (K + 1)  # 21-23
                for u in ch:  # 24
                    A_new = [INF] * (K + 1)  # 25-27
                    for k in range(K + 1):  # 28
                        for i in range(k + 1):  # 29
                            A_new[k] = min(A_new[k], max(A[i], B[u][k - i]))  # 30
                    A = A_new  # 33
                dp[v][e] = [tree.time[v][e] + A[k] for k in range(K + 1)]  # 36-38
    return dp


def _postorder(tree: Tree) -> list[int]:
    out = []
    stack = [(tree.root, False)]
    while stack:
        v, done = stack.pop()
        if done:
            out.append(v)
        else:
            stack.append((v, True))
            stack.extend((u, False) for u in reversed(tree.children[v]))
    return out


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class Placement:
    """The answer: `frontier[k]` is the least latency with at most k cuts, for k up to
    min(K, edges); `assignment` (engine index per node, empty if infeasible) attains
    `latency` with `cuts_used`, the fewest cuts any optimal placement needs."""

    budget: int
    latency: float
    frontier: tuple[float, ...]
    assignment: tuple[int, ...]
    cuts_used: int


def place(tree: Tree, budget: int) -> Placement:
    """Run the DP and rebuild an optimal assignment (argmin, top-down, no recursion).

    Ties: the fewest cuts, then the earliest engine in the file's list at each node.

    >>> t = tree_from_spec(["a", "b"], [
    ...     {"id": "r", "children": ["x", "y"], "time": {"a": 1, "b": 1}},
    ...     {"id": "x", "time": {"a": 9, "b": 2}}, {"id": "y", "time": {"a": 3, "b": 9}}],
    ...     {"default": {"fixed": 1}})
    >>> p = place(t, 2)
    >>> p.latency, p.frontier, [t.engines[e] for e in p.assignment], p.cuts_used
    (4.0, (10.0, 4.0, 4.0), ['a', 'b', 'a'], 1)
    """
    # The DP allocates millions of small acyclic lists; the cyclic GC's scans of them
    # were a fifth of the run time.
    with gc_paused():
        return _place(tree, budget)


def _place(tree: Tree, budget: int) -> Placement:
    dp = fast_dp(tree, budget)
    n_e = len(tree.engines)
    top = dp[tree.root]
    n_front = min(budget, tree.n - 1) + 1
    frontier = tuple(min(at(top[e], k) for e in range(n_e)) for k in range(n_front))
    best = frontier[-1]
    if best == INF:
        return Placement(budget, INF, frontier, (), 0)
    k0 = frontier.index(best)
    e0 = next(e for e in range(n_e) if at(top[e], k0) == best)
    assignment = _rebuild(tree, dp, budget + 1, e0, k0)
    cuts = sum(1 for v in range(tree.n) for u in tree.children[v] if assignment[u] != assignment[v])
    return Placement(budget, best, frontier, tuple(assignment), cuts)


def _rebuild(tree: Tree, dp: list[list[list[float]]], size: int, e0: int, k0: int) -> list[int]:
    n_e = len(tree.engines)
    assign = [-1] * tree.n
    stack = [(tree.root, e0, k0)]
    while stack:
        v, e, k = stack.pop()
        assign[v] = e
        ch = tree.children[v]
        if not ch:
            continue
        cols = [tree.columns(u, (e,))[e] for u in ch]
        if len(ch) == 1:
            # One child takes the whole budget; only B[k] itself is needed, not the sequence.
            du = dp[ch[0]]
            want = at(du[e], k)
            if k >= 1:
                col = cols[0]
                for s in range(n_e):
                    c = at(du[s], k - 1) + col[s]
                    if c < want:
                        want = c
            share = [k]
            wants = [want]
        else:
            # Replay the fold on prefixes up to k: the walk to budget k reads nothing later.
            cut = min(size, k + 1)
            bs = [lift(dp[u], [cols[i] if x == e else [] for x in range(n_e)], (e,), cut)[e] for i, u in enumerate(ch)]
            folds = [bs[0]]
            for b in bs[1:]:
                folds.append(merge_minmax(folds[-1], b, cut))
            share = [0] * len(ch)
            for i in range(len(ch) - 1, 0, -1):
                k, share[i] = split_minmax(folds[i - 1], bs[i], k)
            share[0] = k
            wants = [at(b, j) for b, j in zip(bs, share, strict=True)]
        for i, u in enumerate(ch):
            j = share[i]
            want = wants[i]
            if at(dp[u][e], j) == want:
                stack.append((u, e, j))
                continue
            for s in range(n_e):
                if s != e and j >= 1 and at(dp[u][s], j - 1) + cols[i][s] == want:
                    stack.append((u, s, j - 1))
                    break
            else:  # pragma: no cover - the DP values always have a witness
                raise AssertionError(f"no witness for node {tree.ids[u]} engine {e} budget {j}")
    return assign


def evaluate(tree: Tree, assignment: Sequence[int]) -> list[float]:
    """Latency of every subtree under a full assignment, from scratch: self-time plus
    the slowest child, a child on another engine adding its transfer.

    >>> t = tree_from_spec(["a", "b"], [{"id": "r", "children": ["x"], "time": {"a": 1}},
    ...                                 {"id": "x", "time": {"b": 2}}], {"default": {"fixed": 3}})
    >>> evaluate(t, [0, 1])
    [6.0, 2.0]
    """
    n_e = len(tree.engines)
    lat = [0.0] * tree.n
    for v in children_first(tree):
        e = assignment[v]
        worst = 0.0
        for u in tree.children[v]:
            s = assignment[u]
            x = lat[u] if s == e else lat[u] + tree.transfer(u)[s * n_e + e]
            if x > worst:
                worst = x
        lat[v] = tree.time[v][e] + worst
    return lat


def critical_path(tree: Tree, assignment: Sequence[int], lat: Sequence[float]) -> list[dict[str, Any]]:
    """Root-to-leaf chain of node and transfer steps whose times sum to the latency;
    among equally slow children the first one is followed."""
    n_e = len(tree.engines)
    steps: list[dict[str, Any]] = []
    v = tree.root
    while True:
        e = assignment[v]
        steps.append({"kind": "node", "node": tree.ids[v], "engine": tree.engines[e], "time": num(tree.time[v][e])})
        best_u, best_x, best_c = -1, -1.0, 0.0
        for u in tree.children[v]:
            s = assignment[u]
            c = 0.0 if s == e else tree.transfer(u)[s * n_e + e]
            x = lat[u] if s == e else lat[u] + c
            if x > best_x:
                best_u, best_x, best_c = u, x, c
        if best_u < 0:
            return steps
        s = assignment[best_u]
        if s != e:
            steps.append(
                {"kind": "transfer", "child": tree.ids[best_u], "parent": tree.ids[v], "from_engine": tree.engines[s], "to_engine": tree.engines[e], "cost": num(best_c)}
            )
        v = best_u


def cut_edges(tree: Tree, assignment: Sequence[int]) -> list[dict[str, Any]]:
    """Every edge whose ends run on different engines, in the child's node order."""
    n_e = len(tree.engines)
    parent = [-1] * tree.n
    for v in range(tree.n):
        for u in tree.children[v]:
            parent[u] = v
    out = []
    for u in range(tree.n):
        p = parent[u]
        if p >= 0 and assignment[u] != assignment[p]:
            s, d = assignment[u], assignment[p]
            out.append(
                {"child": tree.ids[u], "parent": tree.ids[p], "from_engine": tree.engines[s], "to_engine": tree.engines[d], "cost": num(tree.transfer(u)[s * n_e + d])}
            )
    return out


def _why_infeasible(tree: Tree, budget: int) -> list[Diagnostic]:
    """Name the cause: a node no engine runs; else a child whose engines cannot reach its
    parent's at any budget; else the least number of cuts a placement needs."""
    n_e = len(tree.engines)
    out: list[Diagnostic] = []
    seen: set[int] = set()
    for v in range(tree.n):
        o = tree.origin[v]
        if all(t == INF for t in tree.time[v]) and o not in seen:
            seen.add(o)
            out.append(Diagnostic("error", "unsupported-node", f"no engine can run node '{tree.ids[v]}': its time is missing or null for every engine", (tree.ids[v],)))
    if out:
        return out
    # cuts[v][e]: the fewest cuts placing v's subtree with v on e (INF: impossible).
    cuts: list[list[float]] = [[] for _ in range(tree.n)]
    origins: list[tuple[int, int]] = []  # (node, child to blame or -1)
    for v in children_first(tree):
        row = [0.0 if t < INF else INF for t in tree.time[v]]
        blame = -1
        for u in tree.children[v]:
            cu = cuts[u]
            tr = tree.transfer(u)
            reach = False
            for e in range(n_e):
                if row[e] == INF:
                    continue
                c = min([cu[e]] + [cu[s] + 1 for s in range(n_e) if s != e and tr[s * n_e + e] < INF])
                row[e] = row[e] + c
                reach = reach or c < INF
            if not reach and blame < 0 and min(cu) < INF:
                blame = u
        if min(row) == INF and all(min(cuts[u]) < INF for u in tree.children[v]):
            origins.append((v, blame))
        cuts[v] = row
    for v, u in sorted(origins):
        runs = [tree.engines[e] for e in range(n_e) if tree.time[v][e] < INF]
        if u >= 0:
            can = [tree.engines[e] for e in range(n_e) if cuts[u][e] < INF]
            msg = (
                f"no placement at any budget: child '{tree.ids[u]}' can only run on {', '.join(can)} and no transfer "
                f"leads from there to an engine that runs its parent '{tree.ids[v]}' ({', '.join(runs)})"
            )
            out.append(Diagnostic("error", "no-transfer", msg, (tree.ids[u], tree.ids[v])))
        else:
            msg = f"no placement at any budget: no engine that runs node '{tree.ids[v]}' ({', '.join(runs)}) can receive all of its children"
            out.append(Diagnostic("error", "no-transfer", msg, (tree.ids[v],)))
    if out:
        return out
    need = int(min(cuts[tree.root]))
    return [
        Diagnostic(
            "error",
            "budget-too-small",
            f"every placement needs at least {need} cut(s) but the budget is {budget} (pass --budget {need})",
            (),
            {"min_budget": need},
        )
    ]


def _plain(obj: Any) -> Any:
    """The echo prints `rows: 12` back as 12, not 12.0 (the model stores floats)."""
    if isinstance(obj, float):
        return num(obj)
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain(v) for v in obj]
    return obj


def tree_artifact(problem: TreeInput, options: TreeOptions) -> tuple[dict[str, Any], str]:
    """The `tree` artifact and a one-line summary. Infeasible trees get status
    `infeasible` and error diagnostics (the CLI exits 4).

    >>> inp = parse_tree({"version": 1, "engines": ["pg", "duck"], "budget": 1,
    ...     "transfer": {"default": {"fixed": 1}}, "nodes": [
    ...     {"id": "agg", "children": ["scan"], "time": {"pg": 9, "duck": 1}},
    ...     {"id": "scan", "time": {"pg": 2, "duck": 5}}]})
    >>> art, summary = tree_artifact(inp, TreeOptions())
    >>> art["tree"]["latency"], art["tree"]["engines"], [f["latency"] for f in art["tree"]["frontier"]]
    (4, {'agg': 'duck', 'scan': 'pg'}, [6, 4])
    """
    budget = options.budget if options.budget is not None else problem.file.budget
    if budget is None:
        raise InputError([Problem(f"{problem.prefix}budget", "no cut budget: set `budget` in the file or pass --budget K")], problem.source)
    tree, diags = build_tree(problem, options.expand_dag)
    res = place(tree, budget)
    diagnostics = [d.to_json() for d in diags]
    section: dict[str, Any] = {
        "name": problem.file.name,
        "root": tree.ids[tree.root],
        "budget": budget,
        "nodes": tree.n,
        "frontier": [{"budget": k, "latency": None if x == INF else num(x)} for k, x in enumerate(res.frontier)],
        "input": _plain(problem.file.model_dump(mode="json", by_alias=True, exclude_none=True)),
    }
    # The echo carries the budget actually used, so the artifact re-reads to this result.
    section["input"]["budget"] = budget
    if res.latency == INF:
        why = _why_infeasible(tree, budget)
        diagnostics += [d.to_json() for d in why]
        section.update(latency=None, cuts_used=None, engines={}, cuts=[], critical_path=[])
        summary = f"{problem.source}: infeasible: {why[0].message}"
        status = "infeasible"
    else:
        a = res.assignment
        lat = evaluate(tree, a)
        if lat[tree.root] != res.latency:  # pragma: no cover - a bug, never an input problem
            raise AssertionError(f"reconstructed latency {lat[tree.root]} != DP minimum {res.latency}")
        section.update(
            latency=num(res.latency),
            cuts_used=res.cuts_used,
            engines={tree.ids[v]: tree.engines[a[v]] for v in range(tree.n)},
            cuts=cut_edges(tree, a),
            critical_path=critical_path(tree, a, lat),
        )
        summary = (
            f"{problem.source}: latency {num(res.latency)} with {res.cuts_used} of at most {budget} cut(s); "
            f"{tree.n} operators on {len(tree.engines)} engines; without cuts: "
            + ("impossible" if res.frontier[0] == INF else str(num(res.frontier[0])))
        )
        status = "ok"
    art = {"format_version": FORMAT_VERSION, "kind": "tree", "status": status, "diagnostics": diagnostics, "tree": section}
    return art, summary
