"""No two modules import each other, not even for type annotations only: import-linter
leaves `if TYPE_CHECKING:` imports out of its contracts (they do not run), but a cycle
there is still two modules a reader has to understand together."""

from __future__ import annotations

import grimp


def _cycles() -> list[list[str]]:
    g = grimp.build_graph("placement_cli", exclude_type_checking_imports=False)
    mods = sorted(g.modules)
    adj = {m: sorted(g.find_modules_directly_imported_by(m)) for m in mods}
    # Tarjan's strongly connected components, iteratively; a component of two or more
    # modules is a cycle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in mods:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
                on.add(v)
            if i < len(adj[v]):
                work.append((v, i + 1))
                w = adj[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return found


def test_no_import_cycles_even_through_type_only_imports() -> None:
    assert _cycles() == []
