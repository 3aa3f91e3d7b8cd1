"""Reading a tree file: its bytes parsed once, a `tree` artifact's input taken out of
it, the document converted into the `Struct`s of `formats.tree_structs` and then checked
(`check`). Every problem at once, each with its field path.

Fast accept, slow diagnose (docs/load.md): msgspec converts the whole parsed document
in one call, checking every type and bound; the explicit transfers, the bulk of a large
file (one entry per edge and engine pair), go on as columns. A document msgspec refuses
goes to the model (`formats.tree.TreeFile`, pydantic imported only then), which gives
today's messages or accepts it after all (its values are then taken, `from_model`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import orjson

from placement_cli import FORMAT_VERSION
from placement_cli.core.errors import InputError, Problem
from placement_cli.core.io import gc_paused, is_json, parse_document, read_bytes, source_name
from placement_cli.core.limits import Limits
from placement_cli.formats.tree_structs import (
    ExplicitTransfer,
    TreeFile,
    convert_explicit,
    convert_tree,
    from_model,
)
from placement_cli.ir.tree.check import FLOAT_MAX, Raw, check_tree
from placement_cli.ir.tree.model import TreeInput, small_pages

_BIG = float(2**64)  # orjson reads a larger integer literal as a float


def load_tree(path: str) -> TreeInput:
    """Read a tree file (JSON/YAML), a `tree` artifact that includes its input, or `-`.

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.yaml"
    >>> _ = p.write_text("version: 1\\nengines: [pg]\\nnodes: [{id: scan, time: {pg: 2}}]\\n")
    >>> t = load_tree(str(p))
    >>> t.ids, t.ref["name"], len(t.ref["sha256"])
    (('scan',), 't.yaml', 64)
    """
    source = source_name(path)
    data = read_bytes(path)
    ref = {
        "name": source if path == "-" else Path(path).name,
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    with gc_paused(), small_pages():
        doc = _parse(path, data)
    try:
        return parse_tree(doc, source, ref)
    except InputError as exc:
        raise exc.with_source(source) from None


def _parse(path: str, data: bytes) -> Any:
    """`parse_document`, with the nesting limit of JSON checked on the bytes (`nesting`)
    rather than by walking the parsed objects (a third of a second at 100k nodes); any
    problem goes back to `parse_document`, which reports it with its own message."""
    if not is_json(path, data):
        return parse_document(path, data)
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return parse_document(path, data)
    if nesting(data) > Limits().max_depth:
        return parse_document(path, data)
    return doc


def nesting(data: bytes) -> int:
    """How deep lists and mappings nest in valid JSON text: the deepest bracket outside
    strings (`io.too_deep` counts the same on the parsed objects).

    A string starts and ends at a quote not escaped (not after an odd run of
    backslashes), so a byte is inside one when an odd number of such quotes precede
    it. `x & 0xD9 == 0x59` picks the four brackets and `Y _ y DEL`, which valid JSON
    has only inside strings; `x & 6` is 2 for an opening bracket, 4 for a closing one.

    >>> nesting(b'{"a": [[1], "]]]\\\\"[{"], "b": {}}'), nesting(b'"[["'), nesting(b"[]")
    (3, 0, 1)
    """
    b = np.frombuffer(data, dtype=np.uint8)
    quotes = np.flatnonzero(b == 34)
    after = quotes[quotes > 0]
    escaped = after[b[after - 1] == 92].tolist()
    if escaped:
        drop = []
        for q in escaped:
            j = q - 1
            while j >= 0 and data[j] == 92:
                j -= 1
            if (q - 1 - j) % 2:
                drop.append(q)
        quotes = np.setdiff1d(quotes, np.array(drop, dtype=quotes.dtype))
    pos = np.flatnonzero((b & 0xD9) == 0x59)
    pos = pos[(np.searchsorted(quotes, pos) & 1) == 0]
    if not len(pos):
        return 0
    step = ((b[pos] & 6) == 2).astype(np.int64) * 2 - 1
    return int(np.cumsum(step).max())


def parse_tree(doc: Any, source: str = "<input>", ref: dict[str, str] | None = None) -> TreeInput:
    """Validate a parsed tree document; every problem is reported at once (exit 3).

    >>> t = parse_tree({"version": 1, "engines": ["pg", "duck"], "nodes": [
    ...     {"id": "agg", "children": ["scan"], "time": {"duck": 1}},
    ...     {"id": "scan", "time": {"pg": 2, "duck": 5}}]})
    >>> t.ids[t.root], t.kids, t.time[0]
    ('agg', ((1,), ()), (inf, 1.0))
    """
    prefix = ""
    if ref is None:
        ref = {"name": source, "sha256": ""}
    if isinstance(doc, dict) and "format_version" in doc:
        doc, prefix, ref = _artifact_input(doc, ref)
    if not isinstance(doc, dict):
        raise InputError(
            [Problem(prefix.rstrip("."), "a tree file is a mapping at the top level")], source
        )
    with gc_paused():
        f = convert_tree(doc)
        if f is None:
            f, raw = _diagnose(doc, source, prefix)
        else:
            raw = _columns(f.transfer.explicit) if f.transfer.explicit else None
            if raw is not None:
                f = msgspec.structs.replace(
                    f, transfer=msgspec.structs.replace(f.transfer, explicit=[])
                )
        return check_tree(f, raw, source, prefix, ref)


def _diagnose(doc: dict[str, Any], source: str, prefix: str) -> tuple[TreeFile, Raw | None]:
    """The slow path: the model reads what msgspec refused. It raises the model's
    problems, or accepts the document after all: then its values, as `Struct`s."""
    # Lazy: pydantic and the tree's models (~140 ms, measured), only for a file the
    # Structs refuse.
    from pydantic import ValidationError

    from placement_cli.core.problems import validation_problems
    from placement_cli.formats.tree import TreeFile as TreeModel

    doc, raw = _split_explicit(doc)
    b = doc.get("budget")
    if type(b) is float and _BIG <= b <= FLOAT_MAX and b.is_integer():
        # A JSON integer past 64 bits reaches us as a float; as a budget it is just
        # "more cuts than edges", so it is read as the integer it spells.
        doc = {**doc, "budget": int(b)}
    try:
        model = TreeModel.model_validate(doc)
    except ValidationError as exc:
        raise InputError(validation_problems(exc, prefix), source) from None
    return from_model(model), raw


def _columns(got: list[ExplicitTransfer]) -> Raw:
    """Accepted explicit transfers as columns."""
    cost = np.fromiter((e.cost for e in got), dtype=np.float64, count=len(got))
    return Raw([e.child for e in got], [e.from_ for e in got], [e.to for e in got], cost)


def _artifact_input(doc: dict[str, Any], ref: dict[str, str]) -> tuple[Any, str, dict[str, str]]:
    if doc.get("format_version") != FORMAT_VERSION:
        raise InputError(
            [
                Problem(
                    "format_version",
                    f"unsupported artifact version {doc.get('format_version')!r:.40}; this tool reads {FORMAT_VERSION}",
                )
            ]
        )
    if doc.get("kind") != "tree":
        raise InputError(
            [Problem("kind", f"not a tree file or tree artifact: kind {doc.get('kind')!r:.40}")]
        )
    sec = doc.get("tree")
    if not isinstance(sec, dict) or "input" not in sec:
        r = sec.get("input_ref") if isinstance(sec, dict) else None
        if isinstance(r, dict) and isinstance(r.get("name"), str):
            raise InputError(
                [
                    Problem(
                        "tree.input",
                        f"this artifact does not include its input (written without --include-input); give the tree file '{r['name']:.200}' instead",
                    )
                ]
            )
        raise InputError([Problem("tree.input", "required field is missing")])
    r = sec.get("input_ref")
    if isinstance(r, dict) and isinstance(r.get("name"), str) and isinstance(r.get("sha256"), str):
        ref = {"name": r["name"], "sha256": r["sha256"]}  # it names the original tree file
        if isinstance(r.get("path"), str):
            ref["path"] = r["path"]  # relative to that artifact: the caller rebases it
    return sec["input"], "tree.input.", ref


def _split_explicit(doc: dict[str, Any]) -> tuple[dict[str, Any], Raw | None]:
    """Take well-formed explicit transfers out of the document before the model sees it
    (as the model's path always has: its messages are about the rest). Returns the
    document to validate and the entries as columns (None: the model checks them)."""
    tr = doc.get("transfer")
    if not isinstance(tr, dict):
        return doc, None
    items = tr.get("explicit")
    if not isinstance(items, list) or not items:
        return doc, None
    got = convert_explicit(items)
    if got is None:
        return doc, None
    return {**doc, "transfer": {**tr, "explicit": []}}, _columns(got)
