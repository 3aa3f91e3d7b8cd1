"""An artifact's bytes as this tool writes them: the plan's span found without parsing
(`plan_span`), and the artifact parsed once around it (`parse_artifact`). The plan an
artifact carries is already normalised, so a stage reading an artifact writes those
bytes again instead of normalising the checked plan afresh (docs/load.md).
"""

from __future__ import annotations

import os
from typing import Any

import orjson

from placement_cli.core.io import gc_paused


def loads(data: bytes) -> Any:
    """orjson's parse, or None when it fails (the models then say why, in their words)."""
    try:
        with gc_paused():
            return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


_PLAN_KEY = b'\n  "plan": '
_NEXT_KEY = b',\n  "prune": '


# Stands for the plan while the rest of an artifact is parsed: a string no file holds.
_SENTINEL = "\x00placement-plan-" + os.urandom(8).hex()
_SENTINEL_JSON = orjson.dumps(_SENTINEL)


def parse_artifact(data: bytes) -> tuple[Any, bytes | None]:
    r"""An artifact's bytes parsed once, with its plan's bytes (`plan_span`), or
    (None, None) when orjson cannot parse them.

    The plan (most of an artifact) is parsed from its span, and the rest with a
    sentinel in its place; equal to parsing the whole, which is the fallback whenever
    the span is not certainly the top-level `plan` (no span, not a mapping, the
    sentinel not at `plan`).

    >>> doc, span = parse_artifact(b'{\n  "kind": "prune",\n  "plan": {\n    "a": 1\n  },\n  "prune": {}\n}\n')
    >>> doc, span
    ({'kind': 'prune', 'plan': {'a': 1}, 'prune': {}}, b'{\n    "a": 1\n  }')
    """
    at = _span_at(data)
    if at is not None:
        start, end = at
        span = data[start:end]  # copied once: kept as the plan's bytes
        view = memoryview(data)
        try:
            with gc_paused():
                plan = orjson.loads(span)
                rest = orjson.loads(b"".join((view[:start], _SENTINEL_JSON, view[end:])))
        except orjson.JSONDecodeError:
            pass
        else:
            if type(plan) is dict and type(rest) is dict and rest.get("plan") == _SENTINEL:
                rest["plan"] = plan
                return rest, span
        finally:
            view.release()
    doc = loads(data)
    return doc, None if doc is None else plan_span(data, doc)


def _span_at(data: bytes) -> tuple[int, int] | None:
    start = data.find(_PLAN_KEY)
    end = data.find(_NEXT_KEY, start)
    if start < 0 or end < 0:
        return None
    start += len(_PLAN_KEY)
    if not (data.startswith(b"{\n", start) and data.endswith(b"\n  }", start, end)):
        return None
    return start, end


def plan_span(data: bytes, doc: Any = None) -> bytes | None:
    r"""The plan's bytes in an artifact this tool wrote (its layout puts every top-level
    key on its own line at indent 2, `plan` directly before `prune`), or None; with the
    whole document `doc` parsed, only when they are its plan (a key written twice is
    read as its last value, which need not be the one in that place).

    The plan an artifact carries is already normalised, so writing these bytes again
    gives what normalising the checked plan would, without the cost (a third of a
    stage's time on large plans). Anything not in that layout is normalised afresh.

    >>> plan_span(b'{\n  "kind": "prune",\n  "plan": {\n    "a": 1\n  },\n  "prune": {}\n}\n')
    b'{\n    "a": 1\n  }'
    >>> plan_span(b'{"plan": {}, "prune": {}}') is None
    True
    """
    at = _span_at(data)
    if at is None:
        return None
    span = data[at[0] : at[1]]
    try:
        plan = orjson.loads(span)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(plan, dict):
        return None
    if doc is not None and not (type(doc) is dict and doc.get("plan") == plan):
        return None
    return span
