"""The artifact writer's bulk paths (one orjson call per list or map of records) give
exactly the bytes of the plain per-record writer, kept here as the reference."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from placement_cli.artifact import render

_OPTS = orjson.OPT_SORT_KEYS


def _ref_dumps(v: Any) -> bytes:
    return orjson.dumps(v, default=lambda o: list(o), option=_OPTS)


def _ref_expand(v: Any, depth: int, in_list: bool) -> bool:
    if not isinstance(v, (dict, list)) or not v:
        return False
    if in_list and depth >= 2:
        return False
    if depth < 3:
        return True
    return depth == 3 and isinstance(v, list) and isinstance(v[0], (dict, list))


def _ref_emit(v: Any, depth: int, in_list: bool) -> bytes:
    """The layout written out literally: every record dumped on its own."""
    if not _ref_expand(v, depth, in_list):
        return _ref_dumps(v)
    pad = b"  " * (depth + 1)
    end = b"\n" + b"  " * depth
    if isinstance(v, dict):
        parts = [pad + _ref_dumps(k) + b": " + _ref_emit(x, depth + 1, False) for k, x in sorted(v.items())]
        return b"{\n" + b",\n".join(parts) + end + b"}"
    parts = [pad + _ref_emit(x, depth + 1, True) for x in v]
    return b"[\n" + b",\n".join(parts) + end + b"]"


def reference(art: dict[str, Any]) -> bytes:
    return _ref_emit(art, 0, False) + b"\n"


_text = st.text(alphabet=st.sampled_from(["a", "b", ",", "\n", ":", '"', "\\", "é", " ", "{", "["]), max_size=6)
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False), _text)
_tree = st.recursive(
    _scalar,
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(_text, kids, max_size=4)),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_text, _tree, max_size=5))
def test_render_matches_the_per_record_reference(art: dict[str, Any]) -> None:
    assert render(art) == reference(art)


def test_render_of_records_with_newlines_and_commas_in_strings() -> None:
    art = {"s": {"domains": {"b,\n,": ["x\n:,y"], "a": [",\n,"]}, "removed": [{"k": ",\n:,"}, {"k": "\n"}]}}
    got = render(art)
    assert got == reference(art)
    assert orjson.loads(got) == art


def test_every_golden_artifact_renders_as_the_reference() -> None:
    from pathlib import Path

    root = Path(__file__).parent / "goldens"
    stages = ("prune", "scc", "solve", "fuse", "islands")
    arts = [p for p in sorted(root.rglob("*.json")) if p.stem in stages]
    assert arts, "no golden artifacts found"
    for p in arts:
        data = p.read_bytes()
        doc = orjson.loads(data)
        assert reference(doc) == data, p  # the reference is the layout of the goldens
        assert render(doc) == data, p
