"""Artifact bytes and writing them: the layout (one record per line) and all-or-nothing
writes of a set of files.

Layout, chosen for diffs: keys sorted, the top levels indented, and each record of a
list (a block, a component, an island, a removal, a diagnostic) or each entry of a
per-block map (a domain, an assignment) written compactly on one line. A change to one
block is then a one-line diff, and the file is about as small as compact JSON (an
indented block of a large plan spans dozens of lines and doubles the size).
"""

from __future__ import annotations

from typing import Any

import orjson

_OPTS = orjson.OPT_SORT_KEYS


def _default(obj: Any) -> Any:
    if isinstance(obj, (tuple, frozenset)):
        return list(obj)
    raise TypeError(f"cannot serialise {type(obj).__name__}")


def _expand(v: Any, depth: int, in_list: bool) -> bool:
    if not isinstance(v, (dict, list)) or not v:
        return False
    if in_list and depth >= 2:
        return False  # a record of a list: one line
    if depth < 3:
        return True
    # A list of records one level deeper (islands.graph.nodes, schedule.levels).
    return depth == 3 and isinstance(v, list) and isinstance(v[0], (dict, list))


# Markers for the bulk writers below. Compact orjson output never holds a raw newline
# byte (a newline inside a string is written as the two characters `\\n`), so a
# fragment holding one marks a record boundary unambiguously.
_NL = orjson.Fragment(b"\n")
_KV = orjson.Fragment(b"\n:")


def _lines(v: list[Any], pad: bytes) -> bytes:
    """The records of a list, one per line, joined by `,\n<pad>`: one orjson call for
    the whole list instead of one per record (records and their markers interleaved)."""
    seq: list[Any] = [_NL] * (2 * len(v) - 1)
    seq[::2] = v
    return orjson.dumps(seq, default=_default, option=_OPTS)[1:-1].replace(b",\n,", b",\n" + pad)


def _entries(v: dict[str, Any], pad: bytes) -> bytes:
    """The `"key": value` entries of a map in key order, one per line, as `_lines`."""
    keys = sorted(v)
    k = len(keys)
    seq: list[Any] = [_NL] * (4 * k - 1)
    seq[::4] = keys
    seq[1::4] = [_KV] * k
    seq[2::4] = [v[key] for key in keys]
    body = orjson.dumps(seq, default=_default, option=_OPTS)[1:-1]
    return body.replace(b",\n:,", b": ").replace(b",\n,", b",\n" + pad)


def _emit(v: Any, depth: int, in_list: bool, out: list[bytes]) -> None:
    if not _expand(v, depth, in_list):
        out.append(orjson.dumps(v, default=_default, option=_OPTS))
        return
    pad = b"  " * (depth + 1)
    sep = b",\n" + pad
    end = b"\n" + b"  " * depth
    if isinstance(v, dict):
        if not any(_expand(x, depth + 1, False) for x in v.values()):
            # Every value one line: one C-level dumps for the whole map.
            out += (b"{\n", pad, _entries(v, pad), end, b"}")
            return
        out.append(b"{\n")
        for i, (k, x) in enumerate(sorted(v.items())):
            out.append((sep if i else pad) + _dumps(k) + b": ")
            _emit(x, depth + 1, False, out)
        out += (end, b"}")
    else:
        # Records of a list below the top are always one line each: no need to look.
        if depth >= 1 or not any(_expand(x, depth + 1, True) for x in v):
            out += (b"[\n", pad, _lines(v, pad), end, b"]")
            return
        out.append(b"[\n")
        for i, x in enumerate(v):
            out.append(sep if i else pad)
            _emit(x, depth + 1, True, out)
        out += (end, b"]")


def _dumps(v: Any) -> bytes:
    return orjson.dumps(v, default=_default, option=_OPTS)


def render(art: dict[str, Any], fmt: str = "json") -> bytes:
    """An artifact's bytes: JSON in the layout above, or YAML.

    >>> print(render({"b": [{"x": 1}, {"y": [2]}], "a": {"k": {"z": 1, "w": [2]}}}).decode(), end="")
    {
      "a": {
        "k": {
          "w": [2],
          "z": 1
        }
      },
      "b": [
        {"x":1},
        {"y":[2]}
      ]
    }
    """
    if fmt == "yaml":
        from placement_cli.io import dumps

        return dumps(art, "yaml")
    out: list[bytes] = []
    _emit(art, 0, False, out)
    out.append(b"\n")
    return b"".join(out)


def plan_fragment(g: Any) -> orjson.Fragment:
    """The normalised plan of graph `g` as the bytes `render` writes for an artifact's
    `plan` (built once per graph and kept: `run` writes the same plan into five artifacts).

    >>> from placement_cli.model import Plan
    >>> from placement_cli.graph import build_graph
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a"],
    ...     "blocks": [{"id": "x", "terminator": {"kind": "return"}}]}))
    >>> render({"plan": plan_fragment(g)}) == render({"plan": g.normalized})
    True
    """
    got = g._memo.get("plan_bytes")
    if got is None:
        got = g._memo["plan_bytes"] = fragment(g.normalized)
    return got


def fragment(value: Any) -> orjson.Fragment:
    """A top-level value of an artifact (the plan, a section) as the bytes `render`
    writes for it, to be written again without rendering it again.

    >>> sec = {"domains": {"b": ["x"], "a": ["x", "y"]}, "removed": []}
    >>> render({"prune": fragment(sec)}) == render({"prune": sec})
    True
    """
    out: list[bytes] = []
    _emit(value, 1, False, out)
    return orjson.Fragment(b"".join(out))

