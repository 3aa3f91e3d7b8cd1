"""What the generated fast checks (`placement_cli.formats.generated`) share, and the
rules of "certainly accepted" that no model states: the numbers orjson and the models
read alike, how deep a free-form value may nest, and the serialisation a repeated part
is recognised by. Plain Python, no pydantic (docs/load.md).

>>> free_map({"a": [1, {"b": 2}]}, "provenance")
>>> free_map({1: 2}, "provenance")
Traceback (most recent call last):
...
placement_cli.formats.checking.Reject: provenance
"""

from __future__ import annotations

from typing import Any

from orjson import JSONEncodeError, dumps

# Integers orjson reads and writes as integers (wider ones it reads as floats, where the
# models, reading bytes themselves, would see an integer): anything outside is left to
# the models.
INT_MIN, INT_MAX = -(2**63), 2**64 - 1
# An integral float this large may be an integer orjson read as a float.
BIG_FLOAT = float(2**64)
# Integers converted to a float exactly (the models' conversion gives the same value).
EXACT_INT = 2**53
# Free-form values nesting deeper than this (below their field) are left to the models:
# pydantic's JSON parser refuses documents nested about 200 deep, orjson only past 1024.
MAX_FREE_DEPTH = 64


class Reject(Exception):
    """The document is not certainly accepted: ask the models (the message is the path
    where the fast check stopped, for debugging only)."""


def free_value(v: Any, where: str, depth: int = 0) -> None:
    """A free-form value (`Any`): nested no deeper than `MAX_FREE_DEPTH` below `depth`."""
    if type(v) is not dict and type(v) is not list:
        return
    stack: list[tuple[Any, int]] = [(v, depth + 1)]
    while stack:
        node, d = stack.pop()
        if d > MAX_FREE_DEPTH:
            raise Reject(where)
        for x in node.values() if type(node) is dict else node:
            if type(x) is dict or type(x) is list:
                stack.append((x, d + 1))


def free_map(v: Any, where: str) -> None:
    """`dict[str, Any]`: string keys, values nested no deeper than `MAX_FREE_DEPTH`."""
    if type(v) is not dict:
        raise Reject(where)
    for k in v:
        if type(k) is not str:
            raise Reject(where)
    free_value(v, where, 0)


def serialised(v: Any) -> bytes | None:
    """The key a repeated part is recognised by: its orjson bytes, or None when orjson
    cannot write it. Equal bytes mean equal keys, values and value types (plans come
    from orjson or `yaml_core`: exact built-in types), except `null`, which orjson also
    writes for NaN and infinities: a part whose bytes hold `null` is accepted by its
    key only if its checks refuse NaN and infinities wherever they allow None.

    >>> serialised([{"cost": {"a": 1}}]), serialised({1: 2})
    (b'[{"cost":{"a":1}}]', None)
    """
    try:
        return dumps(v)
    except (TypeError, JSONEncodeError):
        return None


def writable(value: Any) -> Any:
    """Check that a free-form value (carried as it is into the next artifact) can be
    written again: integers within 64 bits, finite floats, at any depth. (The one
    custom validator of the models, `sections.py`; the fast checks call it too.)

    >>> writable({"a": [1, 2.5, "x"]})
    {'a': [1, 2.5, 'x']}
    >>> writable({"a": [2**70]})
    Traceback (most recent call last):
    ...
    ValueError: an integer outside the 64-bit range
    """
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, bool) or v is None or isinstance(v, str):
            continue
        if isinstance(v, int):
            if not INT_MIN <= v <= INT_MAX:
                raise ValueError("an integer outside the 64-bit range")
        elif isinstance(v, float):
            if v != v or v in (float("inf"), float("-inf")):
                raise ValueError("a non-finite number")
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
    return value
