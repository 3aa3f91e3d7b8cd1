"""What the fast checks (`placement_cli.formats.structs`, `placement_cli.formats.sectioncheck`)
and the models share: `Reject`, the fast path's "ask the models", and `writable`, what the
artifact writer can write back (the one custom validator of the artifact's models,
`sections.py`, which the fast checks apply too). Plain Python, no pydantic (docs/load.md).
"""

from __future__ import annotations

from typing import Any

# Integers orjson writes as integers.
INT_MIN, INT_MAX = -(2**63), 2**64 - 1


class Reject(Exception):
    """The document is not certainly accepted: ask the models (the message is where the
    fast check stopped, for debugging only)."""


def writable(value: Any) -> Any:
    """Check that a free-form value (carried as it is into the next artifact) can be
    written again: integers within 64 bits, finite floats, at any depth.

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
