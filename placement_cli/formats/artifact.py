"""Artifact bytes and writing them: the layout (one record per line) and all-or-nothing
writes of a set of files.

Layout, chosen for diffs: keys sorted, the top levels indented, and each record of a
list (a block, a component, an island, a removal, a diagnostic) or each entry of a
per-block map (a domain, an assignment) written compactly on one line. A change to one
block is then a one-line diff, and the file is about as small as compact JSON (an
indented block of a large plan spans dozens of lines and doubles the size).
"""

from __future__ import annotations

from itertools import chain
from typing import Any

import orjson

from placement_cli.core.io import dumps

_OPTS = orjson.OPT_SORT_KEYS


class Raw:
    """Bytes of a value as `render` writes it, kept as the list of pieces it was made
    of: `render_parts` passes them on and the writer hands them to the kernel as they
    are (`io.write_output`). Joining them, or wrapping them in an `orjson.Fragment`
    and letting orjson copy them, would copy an artifact's plan (tens of megabytes on
    a large plan) several times over, each into freshly allocated memory.

    >>> render({"a": Raw([b'[1,', b'2]'])}) == b'{\\n  "a": [1,2]\\n}\\n'
    True
    """

    __slots__ = ("parts",)

    def __init__(self, parts: list[bytes]) -> None:
        self.parts = parts


def _default(obj: Any) -> Any:
    if isinstance(obj, (tuple, frozenset)):
        return list(obj)
    if isinstance(obj, Raw):  # inside a value written as a whole (YAML never sees one)
        return orjson.Fragment(b"".join(obj.parts))
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


# Maps with at most this many entries are written entry by entry: the bulk writer's
# two passes of `bytes.replace` over the result cost more than the loop when a value
# is large (an artifact's top level: the plan's and each section's bytes).
_FEW = 16


def _any_expands(v: dict[str, Any], depth: int) -> bool:
    """Whether some value of map `v` is laid out over several lines at `depth` (what
    `_expand` says for each), found with C-level passes over the values where it can:
    a map of 100k domains or assignments took a Python call per entry.

    >>> _any_expands({"a": ["x"], "b": []}, 3), _any_expands({"a": [["x"]]}, 3), _any_expands({"a": [["x"]]}, 4)
    (False, True, False)
    """
    if depth > 3:
        return False  # below the third level only lists of records at the third expand
    if depth < 3:
        return any(_expand(x, depth, False) for x in v.values())
    values = v.values()
    types = set(map(type, values))
    if not any(issubclass(t, list) for t in types):
        return False  # at the third level only a list of records (or of lists) expands
    firsts = set(map(type, [x[0] for x in values if type(x) is list and x]))
    if any(issubclass(t, (dict, list)) for t in firsts):
        return True
    if all(t is list or not issubclass(t, list) for t in types):
        return False
    return any(_expand(x, depth, False) for x in values if type(x) is not list)  # list subclasses


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


# Characters whose absence from every key and string value of a map makes its compact
# JSON splittable by plain byte patterns (`_plain_entries`).
_STRUCTURAL = ('"', "\\", "[", "]", ":", ",", "{", "}")


def _plain_entries(v: dict[Any, Any], pad: bytes) -> bytes | None:
    """`_entries(v, pad)` for the large maps of an artifact's sections, a domain per
    block (lists of target names) or a target per block (names), from one compact
    `orjson.dumps` of the map and two `bytes.replace`: no sequence of markers built
    per entry. Only when every key and string is printable ASCII without a quote,
    backslash, bracket, brace, colon or comma, so that `":[` / `":"` and `],"` / `","`
    occur in the compact bytes only between a key and its value and between entries
    (and sorting by bytes is sorting by code points); else None.

    >>> m = {f"b{i}": ["x", "y"][: i % 3] for i in range(20)}
    >>> _plain_entries(m, b"  ") == _entries(m, b"  ")
    True
    >>> _plain_entries({f"b{i}": "x" for i in range(20)}, b"  ") == _entries({f"b{i}": "x" for i in range(20)}, b"  ")
    True
    >>> _plain_entries({"a": ["x,y"]}, b""), _plain_entries({"a": 1}, b""), _plain_entries({"a": [["x"]]}, b"")
    (None, None, None)
    """
    values = v.values()
    types = set(map(type, values))
    try:
        if types == {list}:
            items = set(chain.from_iterable(values))
            colon, between = b'":[', b'],"'
        elif types == {str}:
            items = set(values)
            colon, between = b'":"', b'","'
        else:
            return None
        if set(map(type, items)) - {str}:
            return None
        text = "".join(v) + "".join(items)  # a key that is not a string: TypeError
    except TypeError:  # an unhashable value in a list
        return None
    if not (text.isascii() and text.isprintable()) or any(c in text for c in _STRUCTURAL):
        return None
    body = orjson.dumps(v, option=_OPTS)[1:-1]
    return body.replace(colon, colon[:2] + b" " + colon[2:]).replace(
        between, between[:2] + b"\n" + pad + between[2:]
    )


def _emit(v: Any, depth: int, in_list: bool, out: list[bytes]) -> None:
    if type(v) is Raw:
        out += v.parts
        return
    if not _expand(v, depth, in_list):
        out.append(orjson.dumps(v, default=_default, option=_OPTS))
        return
    pad = b"  " * (depth + 1)
    sep = b",\n" + pad
    end = b"\n" + b"  " * depth
    if isinstance(v, dict):
        if len(v) > _FEW and depth >= 2:
            got = _plain_entries(v, pad)
            if got is not None:
                out += (b"{\n", pad, got, end, b"}")
                return
        if len(v) > _FEW and not _any_expands(v, depth + 1):
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
    return b"".join(render_parts(art, fmt))


def render_parts(art: dict[str, Any], fmt: str = "json") -> list[bytes]:
    """`render`'s bytes as the pieces they are made of, for `io.write_output`.

    >>> b"".join(render_parts({"a": 1})) == render({"a": 1})
    True
    """
    if fmt == "yaml":
        return [dumps(_plain_raw(art), "yaml")]
    out: list[bytes] = []
    _emit(art, 0, False, out)
    out.append(b"\n")
    return out


def _plain_raw(art: dict[str, Any]) -> dict[str, Any]:
    """Top-level `Raw` values read back as data (YAML is written from data)."""
    return {k: orjson.loads(b"".join(v.parts)) if type(v) is Raw else v for k, v in art.items()}


def fragment(value: Any) -> Raw:
    """A top-level value of an artifact (the plan, a section) as the bytes `render`
    writes for it, to be written again without rendering it again.

    >>> sec = {"domains": {"b": ["x"], "a": ["x", "y"]}, "removed": []}
    >>> render({"prune": fragment(sec)}) == render({"prune": sec})
    True
    """
    out: list[bytes] = []
    _emit(value, 1, False, out)
    return Raw(out)
