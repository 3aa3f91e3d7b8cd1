"""`placement tree --transfer PROFILE`: the tree file read with a transfer profile applied
(`frontends/calibrate/transfer.py`), and the artifact told which profile it was."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from placement_cli.core.diagnostics import Diagnostic
from placement_cli.core.errors import InputError, Problem
from placement_cli.core.io import STDIN, parse_document, source_name
from placement_cli.frontends.calibrate.transfer import apply_profile, read_profile
from placement_cli.ir.tree.model import TreeInput
from placement_cli.ir.tree.read import parse_tree
from placement_cli.pipeline.kinds import foreign, read_input


def load_applied(
    path: str, profile_path: str
) -> tuple[TreeInput, dict[str, str], list[Diagnostic]]:
    """The tree at `path` with the profile applied before it is checked; the profile's
    `{name, sha256}`, and what applying it found (`transfer-profile-unused`,
    `transfer-uncovered`)."""
    profile, pref = read_profile(profile_path)
    source = source_name(path)
    data = read_input(path)
    doc = parse_document(path, data)
    ref = {
        "name": source if path == STDIN else Path(path).name,
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    applied = apply_profile(doc, profile, pref)
    try:
        problem = parse_tree(applied.doc, source, ref)
    except InputError as exc:
        line = foreign("tree", data)
        if line is not None:
            raise InputError([Problem("", line)], source) from None
        raise exc.with_source(source) from None
    return problem, pref, applied.diagnostics


def record(art: dict[str, Any], pref: dict[str, str], diags: list[Diagnostic]) -> None:
    """The profile's name and sha256 in the artifact (`tree.transfer_ref`; its name only,
    never a path: the same bytes wherever the project is), and its findings."""
    art["tree"]["transfer_ref"] = dict(pref)
    art["diagnostics"] = [d.to_json() for d in diags] + art["diagnostics"]
