"""A YAML reader for plans: YAML 1.2 core-schema scalars, no custom tags, bounded
nesting and bounded alias expansion.

PyYAML's loaders follow YAML 1.1, where `012` is 10, `1:30` is 90, `1e3` is a string
and `2024-01-01` a date, and they expand aliases without limit (a "billion laughs"
document of a few hundred bytes becomes 10^9 nodes) and compose nodes recursively.
Here the C parser's event stream is turned into plain Python values in one iterative
loop that:

* resolves plain scalars as the YAML 1.2 core schema does (null, bool, int in decimal,
  `0o` octal or `0x` hex, float including `1e3`, `.inf`, `.nan`; everything else,
  `1:30`, `0b1`, `1_000`, `yes`, `2024-01-01` included, is a string);
* accepts only the standard tags (`!!str`, `!!int`, `!!float`, `!!bool`, `!!null`,
  `!!map`, `!!seq`): `!!python/object` and every other tag is an input error;
* refuses nesting deeper than `Limits.max_depth`, aliases to an anchor that is not
  complete yet (recursive structures), alias expansion beyond `Limits.alias_budget`,
  duplicate mapping keys, non-scalar keys and more than one document.

An alias yields the same Python object as its anchor (as PyYAML does); its expanded
size counts against the budget, so what later stages walk is bounded too.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml import events as ev

from placement_cli.core.limits import Limits

_NULL = frozenset(("", "~", "null", "Null", "NULL"))
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT10 = re.compile(r"[-+]?[0-9]+\Z")
_INT8 = re.compile(r"0o[0-7]+\Z")
_INT16 = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_INF = re.compile(r"[-+]?\.(inf|Inf|INF)\Z")
_NAN = re.compile(r"\.(nan|NaN|NAN)\Z")

_STD = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_STD + t for t in ("str", "int", "float", "bool", "null")}


class YamlProblem(Exception):
    """A refused document: the message names the line and column."""


def _where(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "somewhere"


def _show_tag(tag: str) -> str:
    tag = tag[:60]
    return "!!" + tag[len(_STD) :] if tag.startswith(_STD) else tag


def resolve_plain(text: str) -> Any:
    """A plain (unquoted, untagged) scalar under the YAML 1.2 core schema.

    >>> [resolve_plain(s) for s in ("012", "0o12", "0x1F", "1e3", "1:30", "no", "~", "2024-01-01")]
    [12, 10, 31, 1000.0, '1:30', 'no', None, '2024-01-01']
    """
    if text in _NULL:
        return None
    b = _BOOL.get(text)
    if b is not None:
        return b
    first = text[:1]
    if not (first.isdigit() or first in "-+."):
        return text
    if _INT10.match(text):
        return _int(text, 10)
    if _INT8.match(text):
        return _int(text[2:], 8)
    if _INT16.match(text):
        return _int(text[2:], 16)
    if _FLOAT.match(text):
        return float(text)
    if _INF.match(text):
        return float("-inf") if text[0] == "-" else float("inf")
    if _NAN.match(text):
        return float("nan")
    return text


def _int(text: str, base: int) -> int:
    try:
        return int(text, base)
    except ValueError:  # Python refuses to convert more than 4300 digits
        raise YamlProblem(f"integer with {len(text)} digits is too long") from None


def _tagged(tag: str, text: str, mark: Any) -> Any:
    if tag == _STD + "str":
        return text
    value = resolve_plain(text)
    kind = tag[len(_STD) :]
    ok = {
        "null": value is None,
        "bool": isinstance(value, bool),
        "int": isinstance(value, int) and not isinstance(value, bool),
        "float": isinstance(value, (int, float)) and not isinstance(value, bool),
    }[kind]
    if not ok:
        raise YamlProblem(f"{_where(mark)}: {text[:40]!r} is not a valid !!{kind}")
    return float(value) if kind == "float" else value


def load_yaml(data: bytes, limits: Limits) -> Any:
    """Parse one YAML document into plain dicts, lists and scalars.

    >>> load_yaml(b"a: [1, 1e3, 012, '012', 1:30]", Limits())
    {'a': [1, 1000.0, 12, '012', '1:30']}
    >>> load_yaml(b"a: !!python/object:os.system x", Limits())
    Traceback (most recent call last):
    ...
    placement_cli.core.yaml_core.YamlProblem: line 1, column 4: tag !!python/object:os.system is not allowed (only !!str, !!int, !!float, !!bool, !!null, !!map, !!seq)
    """
    loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = loader_cls(data)
    max_depth = limits.max_depth
    anchors: dict[str, tuple[Any, int, int]] = {}  # name -> (value, expanded size, height)
    open_anchors: set[str] = set()
    # Frames: [container, is_mapping, pending key, anchor, total at start, child height, mark, key marker]
    stack: list[list[Any]] = []
    own = 0  # nodes written in the document
    total = 0  # nodes after expanding aliases
    docs = 0
    result: Any = None
    _no_key = object()

    def add(value: Any, height: int, mark: Any, hashable: bool) -> None:
        nonlocal result
        if not stack:
            result = value
            return
        top = stack[-1]
        if top[5] < height:
            top[5] = height
        if not top[1]:
            top[0].append(value)
        elif top[2] is _no_key:
            if not hashable:
                raise YamlProblem(f"{_where(mark)}: a mapping key must be a scalar")
            if value in top[0]:
                shown = value[:40] if isinstance(value, str) else value
                raise YamlProblem(f"{_where(mark)}: duplicate key {shown!r}")
            top[2] = value
        else:
            top[0][top[2]] = value
            top[2] = _no_key

    try:
        while True:
            event = loader.get_event()
            if isinstance(event, ev.ScalarEvent):
                own += 1
                total += 1
                tag = event.tag
                if tag is None or tag == "!":
                    value = (
                        resolve_plain(event.value)
                        if event.implicit[0] and tag is None
                        else event.value
                    )
                elif tag in _SCALAR_TAGS:
                    value = _tagged(tag, event.value, event.start_mark)
                else:
                    raise YamlProblem(_bad_tag(tag, event.start_mark))
                if event.anchor is not None:
                    anchors[event.anchor] = (value, 1, 0)
                add(value, 0, event.start_mark, True)
            elif isinstance(event, (ev.MappingStartEvent, ev.SequenceStartEvent)):
                mapping = isinstance(event, ev.MappingStartEvent)
                tag = event.tag
                if tag is not None and tag != "!" and tag != _STD + ("map" if mapping else "seq"):
                    raise YamlProblem(_bad_tag(tag, event.start_mark))
                if len(stack) >= max_depth:
                    raise YamlProblem(
                        f"{_where(event.start_mark)}: nested deeper than {max_depth} levels"
                    )
                own += 1
                total += 1
                if event.anchor is not None:
                    open_anchors.add(event.anchor)
                stack.append(
                    [
                        {} if mapping else [],
                        mapping,
                        _no_key,
                        event.anchor,
                        total - 1,
                        0,
                        event.start_mark,
                    ]
                )
            elif isinstance(event, (ev.MappingEndEvent, ev.SequenceEndEvent)):
                container, _, _, anchor, start, child_h, mark = stack.pop()
                height = child_h + 1
                if anchor is not None:
                    open_anchors.discard(anchor)
                    anchors[anchor] = (container, total - start, height)
                add(container, height, mark, False)
            elif isinstance(event, ev.AliasEvent):
                name = event.anchor or ""
                got = anchors.get(name)
                if got is None:
                    why = (
                        "its own node (a recursive structure)"
                        if name in open_anchors
                        else "no anchor defined before it"
                    )
                    raise YamlProblem(
                        f"{_where(event.start_mark)}: alias *{name[:40]} refers to {why}"
                    )
                value, size, height = got
                if len(stack) + height > max_depth:
                    raise YamlProblem(
                        f"{_where(event.start_mark)}: alias *{name[:40]} nests deeper than {max_depth} levels"
                    )
                total += size
                budget = limits.alias_budget(own)
                if total - own > budget:
                    raise YamlProblem(
                        f"{_where(event.start_mark)}: aliases expand to more than {budget} extra nodes (an alias bomb?)"
                    )
                add(value, height, event.start_mark, not isinstance(value, (dict, list)))
            elif isinstance(event, ev.DocumentStartEvent):
                docs += 1
                if docs > 1:
                    raise YamlProblem(
                        f"{_where(event.start_mark)}: expected a single document, found another"
                    )
            elif isinstance(event, ev.StreamEndEvent):
                return result
    finally:
        loader.dispose()


def _bad_tag(tag: str, mark: Any) -> str:
    return (
        f"{_where(mark)}: tag {_show_tag(tag)} is not allowed "
        "(only !!str, !!int, !!float, !!bool, !!null, !!map, !!seq)"
    )
