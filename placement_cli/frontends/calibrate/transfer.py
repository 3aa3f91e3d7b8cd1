"""A transfer profile applied to a tree file: `placement tree --transfer PROFILE`.

The profile's model for each direction between two of the tree's engines replaces the
file's `transfer.linear` entry for that pair; explicit per-edge entries still win (the
DP prefers them over any model) and `default` still covers the pairs nobody gives.
This works on the parsed document, before the tree is checked, so every rule of the
tree format applies to the result as it would to a file written that way.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from placement_cli.core.diagnostics import Diagnostic
from placement_cli.core.errors import InputError, Problem
from placement_cli.core.io import parse_document, read_bytes, source_name
from placement_cli.core.problems import validation_problems
from placement_cli.formats.transfer_profile import TransferProfile


@dataclass(frozen=True)
class Applied:
    """The tree document with the profile applied, and what applying it found."""

    doc: Any
    diagnostics: list[Diagnostic]


def read_profile(path: str) -> tuple[TransferProfile, dict[str, str]]:
    """The profile file (JSON/YAML) and its `{name, sha256}` (of its bytes)."""
    source = source_name(path)
    data = read_bytes(path)
    doc = parse_document(path, data)
    if isinstance(doc, dict) and doc.get("kind") != "transfer-profile":
        what = doc.get("kind", "no `kind`")
        raise InputError(
            [Problem("kind", f"not a transfer profile ({what!r:.40}); `calibrate fit` writes one")],
            source,
        )
    try:
        profile = TransferProfile.model_validate(doc)
    except ValidationError as exc:
        raise InputError(validation_problems(exc), source) from None
    ref = {"name": Path(path).name, "sha256": hashlib.sha256(data).hexdigest()}
    return profile, ref


def apply_profile(doc: Any, profile: TransferProfile, ref: dict[str, str] | None = None) -> Applied:
    """`doc` (a parsed tree file, or a tree artifact holding its input) with the
    profile's directions as its `transfer.linear` models, and with `ref` (the profile's
    `{name, sha256}`) as its `transfer.profile`, so a file never names a profile other
    than the one its models came from; `doc` is not changed.

    A direction naming an engine the tree does not have is ignored (info). A pair of
    the tree's engines some edge could be cut across (the child can run on the first,
    its parent on the second) that has no model after this, and no `default`, is a
    warning: the DP cannot cut there, and with unused directions in the profile it is
    most likely a spelling of the engine names. A document that is not a mapping is
    returned as it is, for the tree reader to report.

    >>> p = TransferProfile.model_validate({"version": 1, "kind": "transfer-profile",
    ...     "directions": [{"src": "pg", "dst": "duck", "model": {"fixed": 4.0}}]})
    >>> a = apply_profile({"version": 1, "engines": ["pg", "duck"], "nodes": []}, p)
    >>> a.doc["transfer"]["linear"], a.diagnostics
    ({'pg': {'duck': {'fixed': 4.0, 'per_row': 0.0, 'per_width': 0.0, 'per_byte': 0.0}}}, [])
    """
    if not isinstance(doc, dict):
        return Applied(doc, [])
    if "format_version" in doc:
        sec = doc.get("tree")
        if isinstance(sec, dict) and isinstance(sec.get("input"), dict):
            inner = apply_profile(sec["input"], profile, ref)
            return Applied({**doc, "tree": {**sec, "input": inner.doc}}, inner.diagnostics)
        return Applied(doc, [])
    engines = [e for e in doc.get("engines") or [] if isinstance(e, str)]
    have = set(engines)
    transfer = doc.get("transfer")
    transfer = dict(transfer) if isinstance(transfer, dict) else {}
    raw = transfer.get("linear")
    linear: dict[str, Any] = {
        k: dict(v) if isinstance(v, dict) else v
        for k, v in (raw.items() if isinstance(raw, dict) else ())
    }
    diags: list[Diagnostic] = []
    unused: list[str] = []
    for d in profile.directions:
        if d.src in have and d.dst in have:
            row = linear.get(d.src)
            if not isinstance(row, dict):
                row = linear[d.src] = {}
            row[d.dst] = d.model.model_dump()
        else:
            unused.append(f"{d.src}->{d.dst}")
    if unused:
        diags.append(
            Diagnostic(
                "info",
                "transfer-profile-unused",
                f"the transfer profile's direction(s) {', '.join(unused)} name an engine this "
                f"tree does not have (its engines: {', '.join(engines)}); ignored",
            )
        )
    transfer["linear"] = linear
    if ref is not None:
        transfer["profile"] = dict(ref)
    out = {**doc, "transfer": transfer}
    if transfer.get("default") is None:
        missing = [
            f"{a}->{b}"
            for a, b in _cuttable(doc, engines)
            if not isinstance(linear.get(a), dict) or b not in linear[a]
        ]
        if missing:
            hint = (
                f"; the profile's unused direction(s) {', '.join(unused)} may name the same "
                "engines differently"
                if unused
                else ""
            )
            diags.append(
                Diagnostic(
                    "warning",
                    "transfer-uncovered",
                    f"no transfer model for {', '.join(missing)} in the tree file or the "
                    f"transfer profile, and no default: no cut is allowed that way{hint}",
                )
            )
    return Applied(out, diags)


def _cuttable(doc: dict[str, Any], engines: list[str]) -> list[tuple[str, str]]:
    """The ordered pairs of different engines some edge could be cut across, in
    engine order: a child that can run on the first under a parent that can run on
    the second. Malformed nodes are skipped (the tree reader reports them)."""
    runs: dict[str, set[str]] = {}
    nodes = [n for n in doc.get("nodes") or [] if isinstance(n, dict)]
    for n in nodes:
        t = n.get("time")
        if isinstance(n.get("id"), str) and isinstance(t, dict):
            runs[n["id"]] = {e for e, v in t.items() if v is not None}
    pairs: set[tuple[str, str]] = set()
    for n in nodes:
        nid = n.get("id")
        up = runs.get(nid, set()) if isinstance(nid, str) else set()
        for c in n.get("children") or []:
            for a in runs.get(c, set()) if isinstance(c, str) else ():
                pairs.update((a, b) for b in up if b != a)
    rank = {e: i for i, e in enumerate(engines)}
    return sorted(
        (p for p in pairs if p[0] in rank and p[1] in rank), key=lambda p: (rank[p[0]], rank[p[1]])
    )
