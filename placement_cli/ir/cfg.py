"""The graph algorithms every pass shares (scc, islands, solve, lower): one definition of
Tarjan's strongly connected components, reverse postorder and immediate dominators,
on plain adjacency lists of node indices, so every caller orders by input position."""

from __future__ import annotations


def reverse_postorder(root: int, succ: list[list[int]]) -> list[int]:
    """Reverse postorder of the nodes reachable from `root` (iterative DFS, successors
    in the given order).

    >>> reverse_postorder(0, [[1, 2], [3], [3], []])
    [0, 2, 1, 3]
    """
    seen = [False] * len(succ)
    seen[root] = True
    post: list[int] = []
    work = [(root, 0)]
    while work:
        v, i = work[-1]
        if i < len(succ[v]):
            work[-1] = (v, i + 1)
            w = succ[v][i]
            if not seen[w]:
                seen[w] = True
                work.append((w, 0))
        else:
            work.pop()
            post.append(v)
    post.reverse()
    return post


def dominators(root: int, rpo: list[int], pred: list[list[int]], k: int) -> list[int]:
    """Immediate dominators (Cooper, Harvey, Kennedy), -1 where unreachable; idom[root] == root.
    `rpo` is a reverse postorder from `root`, `pred` the predecessor lists, `k` the node count.

    >>> succ = [[1, 2], [3], [3], []]
    >>> pred = [[], [0], [0], [1, 2]]
    >>> dominators(0, reverse_postorder(0, succ), pred, 4)
    [0, 0, 0, 0]
    """
    order = [-1] * k
    for i, v in enumerate(rpo):
        order[v] = i
    idom = [-1] * k
    idom[root] = root
    changed = True
    while changed:
        changed = False
        for v in rpo[1:]:
            new = -1
            for p in pred[v]:
                if idom[p] == -1:
                    continue
                if new == -1:
                    new = p
                    continue
                a, b = p, new
                while a != b:
                    while order[a] > order[b]:
                        a = idom[a]
                    while order[b] > order[a]:
                        b = idom[b]
                new = a
            if idom[v] != new:
                idom[v] = new
                changed = True
    return idom


def tarjan(n: int, succ: list[list[int]]) -> list[list[int]]:
    """Iterative Tarjan: components in reverse topological order, no recursion limit.

    Each frame of the explicit stack holds an iterator over the block's successors,
    so resuming a block is one `for` over what is left (no index tuple rebuilt per
    edge), and a block that is its own component (most of them) is popped without
    the loop.

    >>> tarjan(4, [[1], [0, 2], [], [3]])
    [[2], [1, 0], [3]]
    """
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in range(n):
        if index[root] != -1:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        work = [(root, iter(succ[root]))]
        while work:
            v, it = work[-1]
            for w in it:
                if index[w] == -1:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, iter(succ[w])))
                    break
                if on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
            else:
                work.pop()
                lv = low[v]
                if work:
                    p = work[-1][0]
                    if lv < low[p]:
                        low[p] = lv
                if lv == index[v]:
                    w = stack.pop()
                    on_stack[w] = False
                    if w == v:
                        out.append([v])
                        continue
                    comp = [w]
                    while w != v:
                        w = stack.pop()
                        on_stack[w] = False
                        comp.append(w)
                    out.append(comp)
    return out
