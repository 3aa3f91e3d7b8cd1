"""Where a node of a YAML or JSON input starts: the line and column of a field path
(`blocks[3].terminator.successors[0].block`) or of the block with a given id, for
diagnostics that machines read (`--diagnostics json|github|sarif`).

Looked up only when something is reported: the file is read again and composed by
PyYAML (JSON is YAML flow syntax), so the fast load path keeps no positions. A file
that cannot be read or composed, standard input, or a path that does not lead to a node
gives None: the diagnostic is then reported without a position.

>>> import tempfile, pathlib
>>> f = pathlib.Path(tempfile.mkdtemp()) / "p.yaml"
>>> _ = f.write_text("version: 1\\nblocks:\\n  - id: a\\n  - id: b\\n    terminator: {kind: goto}\\n")
>>> locate(str(f), "blocks[1].terminator.kind"), block_position(str(f), "b")
((5, 24), (4, 5))
"""

from __future__ import annotations

import re
from typing import Any

from placement_cli.core.io import STDIN

# Compiled where used (`re.findall` keeps it): a start-up compiles no pattern.
_TOKEN = r"\[(\d+)\]|([^.\[\]]+)"
_MAX_BYTES = 64 << 20  # a larger file is not composed again for a position


def _compose(path: str) -> Any:
    if path == STDIN or not path:
        return None
    try:
        # Lazy: PyYAML (~14 ms, measured), only when a diagnostic needs a position.
        import yaml

        with open(path, "rb") as fh:
            data = fh.read(_MAX_BYTES + 1)
        if len(data) > _MAX_BYTES:
            return None
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return yaml.compose(data, Loader=loader)
    except Exception:  # noqa: BLE001 - no position is an answer, never a failure
        return None


def _at(node: Any) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _child(node: Any, token: str | int) -> Any:
    if isinstance(token, int):
        value = getattr(node, "value", None)
        if node.id == "sequence" and isinstance(value, list) and 0 <= token < len(value):
            return value[token]
        return None
    if node.id != "mapping":
        return None
    for key, value in node.value:
        if getattr(key, "value", None) == token:
            return value
    return None


def locate(path: str, field_path: str) -> tuple[int, int] | None:
    """The 1-based (line, column) where the node at `field_path` starts in file `path`;
    for a path that goes further than the file, the deepest node it reaches."""
    node = _compose(path)
    if node is None:
        return None
    tokens: list[str | int] = [int(i) if i else name for i, name in re.findall(_TOKEN, field_path)]
    i = 0
    while i < len(tokens):
        nxt = _child(node, tokens[i])
        j = i + 1
        # A key with dots in it (`assignment.bb1.1`): join the following names.
        while nxt is None and j < len(tokens) and isinstance(tokens[i], str):
            if not isinstance(tokens[j], str):
                break
            tokens[i] = f"{tokens[i]}.{tokens[j]}"
            del tokens[j]
            nxt = _child(node, tokens[i])
        if nxt is None:
            break
        node = nxt
        i += 1
    return _at(node)


def block_position(path: str, block_id: str) -> tuple[int, int] | None:
    """Where the block `block_id` starts: the item of the plan's `blocks`, or of a body
    file's `bodies[*].blocks`, whose `id` it is."""
    root = _compose(path)
    if root is None or root.id != "mapping":
        return None
    lists = []
    blocks = _child(root, "blocks")
    if blocks is not None:
        lists.append(blocks)
    plan = _child(root, "plan")  # an artifact carries its plan
    if plan is not None and _child(plan, "blocks") is not None:
        lists.append(_child(plan, "blocks"))
    bodies = _child(root, "bodies")
    if bodies is not None and bodies.id == "sequence":
        lists += [b for body in bodies.value if (b := _child(body, "blocks")) is not None]
    for seq in lists:
        if seq.id != "sequence":
            continue
        for item in seq.value:
            ident = _child(item, "id")
            if ident is not None and getattr(ident, "value", None) == block_id:
                return _at(item)
    return None
