"""The seed's critical-path DP (appendix A1) written line by line: the independent
reference the tests and the benchmark compare `placement_cli.algorithms.tree.fast_dp`
with. It lives with the tests because the CLI never runs it."""

from __future__ import annotations

import math

from placement_cli.ir.tree.model import Tree

INF = math.inf


def reference_dp(tree: Tree, budget: int) -> list[list[list[float]]]:
    """The seed's pseudocode, line by line, with full arrays `dp[v][e][0..K]`: the
    reference the tests and the benchmark compare `fast_dp` with. Not used by the CLI.

    >>> from placement_cli.ir.tree.build import tree_from_spec
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
                            alt = min(
                                (dp[u][e2][k - 1] + trans[u][e2 * n_e + e] for e2 in E if e2 != e),
                                default=INF,
                            )  # 14
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
