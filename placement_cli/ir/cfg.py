"""Graph algorithms shared by passes over control-flow graphs (islands, lower): one
definition of reverse postorder and of immediate dominators, on plain adjacency lists
of node indices, so every caller orders by input position."""

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
