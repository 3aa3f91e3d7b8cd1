"""The artifact writer's bulk paths (one orjson call per list or map of records) give
exactly the bytes of the plain per-record writer, kept here as the reference."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from placement_cli.formats.artifact import render
from placement_cli.pipeline.registry import STAGES
from tests.budget import examples

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
        parts = [
            pad + _ref_dumps(k) + b": " + _ref_emit(x, depth + 1, False)
            for k, x in sorted(v.items())
        ]
        return b"{\n" + b",\n".join(parts) + end + b"}"
    parts = [pad + _ref_emit(x, depth + 1, True) for x in v]
    return b"[\n" + b",\n".join(parts) + end + b"]"


def reference(art: dict[str, Any]) -> bytes:
    return _ref_emit(art, 0, False) + b"\n"


_text = st.text(
    alphabet=st.sampled_from(["a", "b", ",", "\n", ":", '"', "\\", "é", " ", "{", "["]), max_size=6
)
_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False, allow_infinity=False),
    _text,
)
_tree = st.recursive(
    _scalar,
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(_text, kids, max_size=4)),
    max_leaves=30,
)


@settings(max_examples=examples(300), deadline=None)
@given(st.dictionaries(_text, _tree, max_size=5))
def test_render_matches_the_per_record_reference(art: dict[str, Any]) -> None:
    assert render(art) == reference(art)


def test_render_of_records_with_newlines_and_commas_in_strings() -> None:
    art = {
        "s": {
            "domains": {"b,\n,": ["x\n:,y"], "a": [",\n,"]},
            "removed": [{"k": ",\n:,"}, {"k": "\n"}],
        }
    }
    got = render(art)
    assert got == reference(art)
    assert orjson.loads(got) == art


def test_every_golden_artifact_renders_as_the_reference() -> None:
    from pathlib import Path

    root = Path(__file__).parent / "goldens"
    stages = STAGES
    arts = [p for p in sorted(root.rglob("*.json")) if p.stem in stages]
    assert arts, "no golden artifacts found"
    for p in arts:
        data = p.read_bytes()
        doc = orjson.loads(data)
        assert reference(doc) == data, p  # the reference is the layout of the goldens
        assert render(doc) == data, p


# Maps with more entries than `artifact._FEW` take the bulk writer (one orjson call and
# two `bytes.replace` passes); smaller ones are written entry by entry.
_big_map = st.dictionaries(_text, _tree, min_size=17, max_size=30)


@settings(max_examples=examples(150), deadline=None)
@given(
    st.dictionaries(
        _text, st.one_of(_tree, _big_map, st.dictionaries(_text, _big_map, max_size=2)), max_size=4
    )
)
def test_large_maps_take_the_bulk_writer_and_match_the_reference(art: dict[str, Any]) -> None:
    assert render(art) == reference(art)


def test_the_bulk_writer_sees_a_list_of_records_deep_in_a_large_map() -> None:
    many = {f"k{i}": ["x"] for i in range(40)}
    for value in ([{"r": 1}], [["n"]], [], "s", {"d": [1]}):
        art = {"sec": {"m": {**many, "z": value}}}
        assert render(art) == reference(art), value


def test_raw_pieces_render_as_the_value_they_stand_for() -> None:
    from placement_cli.formats.artifact import fragment, render_parts

    sec = {
        "domains": {f"b{i}": ["x", "y"][: i % 3] for i in range(50)},
        "removed": [{"k": 1}],
        "n": 3,
    }
    art = {"plan": {"blocks": [{"id": "a"}]}, "sec": sec, "status": "ok"}
    raw = {**art, "sec": fragment(sec)}
    assert render(raw) == render(art) == reference(art)
    assert b"".join(render_parts(raw)) == render(art)
    # As YAML, a top-level Raw value is written as its data.
    assert render(raw, "yaml") == render(art, "yaml")


def test_write_output_writes_pieces_to_a_file_and_to_stdout(tmp_path: Any) -> None:
    import subprocess
    import sys

    from placement_cli.core.io import write_output

    parts = [b"a" * 100_000, b"", b"b"] * 700  # more pieces than one writev takes
    whole = b"".join(parts)
    write_output(parts, str(tmp_path / "o.json"))
    assert (tmp_path / "o.json").read_bytes() == whole
    code = (
        "import sys; from placement_cli.core.io import write_output; sys.stdout.buffer.write(b'<');"
        "write_output([b'x' * 70000] * 40 + [b'y'], None)"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout
    assert got == b"<" + b"x" * 70000 * 40 + b"y"


# Large maps of names or of lists of names (domains, assignments) take a faster bulk
# path when no key or string holds a structural character; otherwise the general one.
_name = st.text(
    alphabet=st.sampled_from(["a", "b", "Z", "0", "_", " ", "é", ",", ":", '"', "]", "\n", "~"]),
    max_size=4,
)
_plain_name = st.text(
    alphabet=st.sampled_from(["a", "b", "Z", "0", "_", " ", ".", "~"]), max_size=4
)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.sampled_from([_name, _plain_name]).flatmap(
        lambda names: st.one_of(
            st.dictionaries(names, st.lists(names, max_size=3), min_size=17, max_size=40),
            st.dictionaries(names, names, min_size=17, max_size=40),
            st.dictionaries(
                names,
                st.one_of(names, st.lists(names, max_size=2), st.integers(0, 3)),
                min_size=17,
                max_size=40,
            ),
        )
    ),
    st.booleans(),
)
def test_large_maps_of_names_match_the_reference(m: dict[str, Any], deeper: bool) -> None:
    art = {"sec": {"sub": {"m": m}} if deeper else {"m": m}}
    assert render(art) == reference(art)
    assert render({"top": m}) == reference({"top": m})


def test_large_maps_of_names_take_the_plain_path() -> None:
    from placement_cli.formats.artifact import _plain_entries

    doms = {f"bb{i}": ["interpreter", "postgres"][: i % 3] for i in range(40)}
    names = {f"bb{i}": "postgres" for i in range(40)}
    for m in (doms, names):
        assert _plain_entries(m, b"    ") is not None
        art = {"prune": {"domains": m}}
        assert render(art) == reference(art)
    assert _plain_entries({**names, "a,b": "x"}, b"") is None
    assert _plain_entries({**names, "a": "x\ty"}, b"") is None
