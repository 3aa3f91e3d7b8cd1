"""`tree` artifacts in the views: the tree file an artifact was made from, found and
read, and `validate`'s check of the artifact against it. `show` draws the operator
tree (`tree_show`), `diff` compares two artifacts (`tree_diff`).

A tree artifact records its result (engines, cuts, critical path, latency, frontier)
and names its input (`input_ref`: file name, path and sha256); it carries the input
itself only when written with `--include-input`. The input is found, in this order: the
file given with `--tree`, the input inside the artifact, the recorded path taken from
the artifact's folder, then from the current directory, the named file next to the
artifact, the named file in the current directory: the first of these that exists and
has the recorded sha256 (a file given with `--tree` must have it too).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from placement_cli.algorithms.tree.decide import decide
from placement_cli.algorithms.tree.latency import MODELS, latency, model_tree, solve
from placement_cli.algorithms.tree.measure import critical_path, cut_edges, evaluate
from placement_cli.core.errors import InputError, Problem
from placement_cli.core.io import num, read_bytes
from placement_cli.ir.tree.build import build_tree
from placement_cli.ir.tree.model import INF, Tree, TreeInput, TreeLimits
from placement_cli.ir.tree.read import load_tree, parse_tree
from placement_cli.views.data import fmt_num
from placement_cli.views.tree_sniff import TreeArtifact


def tree_input(art: TreeArtifact, tree_file: str | None = None) -> TreeInput:
    """The tree the artifact was computed from (see the module doc for where it is
    looked for). Exit 3 naming what to pass when it cannot be found."""
    if tree_file is None and "input" in art.section:
        try:
            return parse_tree(art.doc, art.source)
        except InputError as exc:
            raise exc.with_source(art.source) from None
    path = tree_file_of(art, tree_file)
    assert path is not None
    return load_tree(path)


def tree_file_of(art: TreeArtifact, tree_file: str | None = None) -> str | None:
    """The path of the tree file the artifact was computed from: `tree_file` (which must
    have the recorded sha256), else found by its recorded name and sha256 (module doc);
    None when the artifact includes its input. Exit 3 naming what to pass when it
    cannot be found."""
    ref = art.input_ref
    if tree_file is not None:
        _same_file(art, tree_file, ref.get("sha256"), "tree.input_ref.sha256", "tree file")
        return tree_file
    if "input" in art.section:
        return None
    return _find(
        art, ref, "tree.input", "tree file", "--tree FILE with the tree file it was computed from"
    )


def profile_of(art: TreeArtifact, given: str | None = None) -> str | None:
    """The path of the transfer profile the artifact was placed with
    (`tree.transfer_ref`): `given` (which must have the recorded sha256), else found by
    its recorded name as the tree file is; None when it records none, or when it
    includes its input (the tree as placed, the profile already applied)."""
    ref = art.section.get("transfer_ref")
    if not isinstance(ref, dict) or "input" in art.section:
        return None
    if given is not None:
        _same_file(art, given, ref.get("sha256"), "tree.transfer_ref.sha256", "transfer profile")
        return given
    return _find(
        art,
        ref,
        "tree.transfer_ref",
        "transfer profile",
        "--transfer PROFILE with the profile it was placed with",
    )


def _find(art: TreeArtifact, ref: dict[str, Any], field: str, what: str, hint: str) -> str:
    """The first candidate file of `ref` (`_candidates`) with its recorded sha256."""
    name, sha = ref.get("name"), ref.get("sha256")
    tried: list[str] = []
    found: list[str] = []
    for cand in _candidates(art, ref):
        if cand in tried:
            continue
        tried.append(cand)
        if Path(cand).is_file():
            found.append(cand)
            if not isinstance(sha, str) or not sha or _sha(cand) == sha:
                return cand
    if found:  # none has the recorded hash: say so of the first
        _same_file(
            art,
            found[0],
            sha,
            f"{field}.sha256" if field != "tree.input" else "tree.input_ref.sha256",
            what,
        )
    where = f" (looked for {' and '.join(repr(t) for t in tried)})" if tried else ""
    head = (
        "this tree artifact does not include its input and its tree file"
        if field == "tree.input"
        else f"the {what} this tree artifact was placed with,"
    )
    raise InputError(
        [Problem(field, f"{head} {name!r:.200} was not found{where}: pass {hint}")],
        art.source,
    )


def _candidates(art: TreeArtifact, ref: dict[str, Any]) -> list[str]:
    """Where the tree file may be, in the order looked at (module doc)."""
    near = Path(art.path).parent if art.path != "-" else None
    out = []
    path, name = ref.get("path"), ref.get("name")
    if isinstance(path, str) and path:
        if near is not None:
            out.append(os.path.normpath(near / path))
        out.append(os.path.normpath(path))
    if isinstance(name, str) and name and name == Path(name).name:
        if near is not None:
            out.append(str(near / name))
        out.append(name)
    return out


def _sha(path: str) -> str:
    return hashlib.sha256(read_bytes(path)).hexdigest()


def _same_file(art: TreeArtifact, path: str, sha: Any, field: str, what: str) -> None:
    if isinstance(sha, str) and sha:
        got = _sha(path)
        if got != sha:
            raise InputError(
                [
                    Problem(
                        field,
                        f"{path} is not the {what} this artifact was computed from "
                        f"(its sha256 is {got[:12]}..., the artifact records {sha[:12]}...)",
                    )
                ],
                art.source,
            )


def built_tree(art: TreeArtifact, problem: TreeInput) -> Tree:
    """The tree as placed: shared sub-plans duplicated when the artifact's node count
    says they were (`--expand-dag`)."""
    tree, _ = build_tree(problem, False, TreeLimits())
    n = art.section.get("nodes")
    if isinstance(n, int) and n != tree.n:
        tree, _ = build_tree(problem, True, TreeLimits())
    return tree


def operators(problem: TreeInput, tree: Tree) -> list[str]:
    """Each tree node's `op` (empty when the file gives none)."""
    nodes = problem.file.nodes
    return [nodes[o].op or "" for o in tree.origin]


def _assignment(art: TreeArtifact, tree: Tree) -> list[int] | None:
    engines = art.section.get("engines") or {}
    if not isinstance(engines, dict) or not engines:
        return None
    idx = {e: i for i, e in enumerate(tree.engines)}
    try:
        return [idx[engines[v]] for v in tree.ids]
    except (KeyError, TypeError):
        return None


def check(art: TreeArtifact, tree_file: str | None = None) -> tuple[list[Problem], Tree, list[str]]:
    """Every way the artifact disagrees with its tree file: the recorded placement must
    be a placement of that tree (every operator, on an engine that runs it), its cuts,
    latency and critical path must be what that placement gives, within the budget,
    and the latency and frontier must be the optimum the tree file gives."""
    if art.doc.get("format_version") != 1:
        raise InputError(
            [
                Problem(
                    "format_version",
                    f"unsupported tree artifact version {art.doc.get('format_version')!r:.40}; "
                    "this tool reads 1",
                )
            ],
            art.source,
        )
    profile = art.section.get("transfer_ref")
    if isinstance(profile, dict) and "input" not in art.section:
        # The tree file alone is not what was placed: its transfer models were replaced
        # (drawing it is fine: `show` needs only its operators).
        raise InputError(
            [
                Problem(
                    "tree.transfer_ref",
                    f"this tree artifact was computed with --transfer {profile.get('name')!r:.200}, "
                    "so its tree file alone does not give it: write it with --include-input "
                    "(the tree as placed) to check it",
                )
            ],
            art.source,
        )
    problem = tree_input(art, tree_file)
    tree = built_tree(art, problem)
    model, cores = _model(art.section, art.source)
    dp_tree, dp_model = model_tree(problem, tree, model)
    out = _check(art, tree, dp_tree, dp_model, cores)
    if not out:
        out += _check_decision(art, problem, dp_tree, dp_model, cores)
    return out, tree, operators(problem, tree)


def _check_decision(
    art: TreeArtifact, problem: TreeInput, tree: Tree, model: str, cores: int
) -> list[Problem]:
    """A decision by the model's rule must be the one the tree file gives
    (`algorithms/tree/decide.py`); a verified one (`execute --verify`) is evidence
    that no file gives again: its choice must be a way of this tree."""
    sec = art.section
    recorded = sec.get("decision")
    if recorded is None:
        return []
    if not isinstance(recorded, dict):
        return [Problem("tree.decision", f"expected a mapping, got {_short(recorded)}")]
    if recorded.get("rule") == "verified":
        chosen = recorded.get("chosen")
        ok = isinstance(chosen, dict) and (
            (chosen.get("kind") == "single" and chosen.get("engine") in tree.engines)
            or (
                chosen.get("kind") == "split"
                and isinstance(chosen.get("engines"), dict)
                and set(chosen["engines"]) == set(tree.ids)
                and all(e in tree.engines for e in chosen["engines"].values())
            )
        )
        return [] if ok else [Problem("tree.decision.chosen", "not a way of the tree file")]
    a = _assignment(art, tree)
    if a is None:
        return []
    want = decide(
        problem, tree, a, float(sec.get("latency") or 0), len(cut_edges(tree, a)), model, cores
    )
    if recorded != want:
        return [
            Problem(
                "tree.decision",
                f"recorded {_short(recorded)}, but the tree file gives {_short(want)}",
            )
        ]
    return []


def _model(sec: dict[str, Any], source: str) -> tuple[str, int]:
    """The latency model the artifact was placed by (`latency_model`; absent: the
    seed's critical path)."""
    m = sec.get("latency_model")
    if not isinstance(m, dict):
        return "critical-path", 1
    model, cores = m.get("model"), m.get("cores")
    if model not in MODELS or not isinstance(cores, int) or isinstance(cores, bool) or cores < 1:
        raise InputError(
            [
                Problem(
                    "tree.latency_model",
                    f"expected {{model: {'|'.join(MODELS)}, cores: >= 1}}, got {_short(m)}",
                )
            ],
            source,
        )
    return model, cores


def _check(art: TreeArtifact, tree: Tree, dp_tree: Tree, model: str, cores: int) -> list[Problem]:
    """`check`'s comparisons: the placement against `tree` (engines, cuts, critical
    path), its latency and the optimum under the DP's `model` on `dp_tree`."""
    sec = art.section
    out: list[Problem] = []

    def differs(field: str, recorded: Any, want: Any, why: str) -> None:
        if recorded != want:
            out.append(
                Problem(f"tree.{field}", f"recorded {_short(recorded)}, but {why} {_short(want)}")
            )

    differs("nodes", sec.get("nodes"), tree.n, "the tree file has")
    differs("root", sec.get("root"), tree.ids[tree.root], "the tree file's root is")
    budget = sec.get("budget")
    if not isinstance(budget, int) or budget < 0:
        out.append(Problem("tree.budget", f"expected a whole number >= 0, got {_short(budget)}"))
        return out
    res = solve(dp_tree, min(budget, tree.n - 1), model, cores, float("inf"), TreeLimits())
    frontier = [
        {"budget": k, "latency": None if x == INF else num(x)} for k, x in enumerate(res.frontier)
    ]
    differs("frontier", sec.get("frontier"), frontier, "the tree file gives")
    status = art.doc.get("status")
    want_status = "infeasible" if res.latency == INF else "ok"
    if status == "unsolved":
        return out  # stopped by a limit: nothing recorded to check against
    differs("status", status, want_status, "the tree file gives")
    if status != "ok" or want_status != "ok":
        return out
    a = _assignment(art, tree)
    if a is None:
        engines = sec.get("engines") or {}
        missing = [v for v in tree.ids if v not in engines][:5]
        out.append(
            Problem(
                "tree.engines",
                "not a placement of the tree file's operators"
                + (f": no engine for {', '.join(missing)}" if missing else ": unknown engine"),
            )
        )
        return out
    extra = sorted(set(sec.get("engines") or {}) - set(tree.ids))[:5]
    if extra:
        out.append(Problem("tree.engines", f"operators the tree file has not: {', '.join(extra)}"))
    for v in range(tree.n):
        if tree.time[v][a[v]] == INF:
            out.append(
                Problem(
                    f"tree.engines.{tree.ids[v]}",
                    f"engine '{tree.engines[a[v]]}' cannot run '{tree.ids[v]}' (no time for it)",
                )
            )
    if out:
        return out
    lat = evaluate(tree, a)
    cuts = cut_edges(tree, a)
    differs("cuts", sec.get("cuts"), cuts, "the recorded engines give")
    differs("cuts_used", sec.get("cuts_used"), len(cuts), "the recorded engines give")
    if len(cuts) > budget:
        out.append(Problem("tree.cuts", f"{len(cuts)} cuts, above the budget of {budget}"))
    whole = latency(dp_tree, a, model, cores)
    differs("latency", sec.get("latency"), num(whole), "the recorded engines give")
    differs(
        "critical_path", sec.get("critical_path"), critical_path(tree, a, lat), "the engines give"
    )
    if res.latency != INF and whole > res.latency * (1 + 1e-9):
        out.append(
            Problem(
                "tree.latency",
                f"{fmt_num(whole)} is not the optimum: the tree file allows {fmt_num(res.latency)}",
            )
        )
    return out


def _short(x: Any) -> str:
    s = repr(x)
    return s if len(s) <= 120 else s[:117] + "..."
