"""Artifacts whose top-level keys are dropped, renamed, duplicated or mistyped (the
`keys` input kind of the campaign), and what a run on one must show besides the rules
every run keeps (`judge.judge`):

* a required key dropped or mistyped, or any key renamed: exit 3, and an error line
  that names the key (its old or its new name);
* a key written twice (JSON): the run gives exactly what the document with the last
  value alone gives (exit code, output bytes, messages), as JSON parsers read it.

`mutate_keys` returns the bytes, the file suffix and an `Expect`; `check` judges a run.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

import yaml

from placement_cli.formats.artifact import render
from placement_cli.pipeline.registry import STAGES, upto

ALWAYS = ("format_version", "kind", "status", "plan", "diagnostics")
# Values of every JSON type, for a key given one of another type.
_VALUES: tuple[Any, ...] = (None, 0, -1, 2.5, True, "", "x", [], [1], {}, {"x": 1})
# A valid configuration record, added at times so that its key is fuzzed too.
CONFIG = {"file": "placement.toml", "settings": {"method": "exact", "time_limit": 2.0}}


@dataclass(frozen=True)
class Expect:
    """What the run must show: `names` (an exit-3 message names one of them; exit 3 is
    then the only exit allowed), or `same_as` (the bytes of the document the input is
    read as: the run must give what that document gives)."""

    how: str
    key: str
    names: tuple[str, ...] = ()
    same_as: bytes | None = None


def _json_type(v: Any) -> str:
    return {bool: "bool", int: "num", float: "num", str: "str", list: "list", dict: "obj"}.get(
        type(v), "null"
    )


def required(art: dict[str, Any]) -> set[str]:
    """The keys an artifact of its kind cannot do without (its sections included)."""
    kind = art.get("kind")
    if kind == "tree":
        return {*ALWAYS[:3], "diagnostics", "tree"}
    return {*ALWAYS, *(upto(kind) if kind in STAGES else ())}


def _renamed(key: str, r: random.Random) -> str:
    """Another name for `key`, as a typo or another spelling would give it."""
    names = (key.upper(), key + "_", "_" + key, key[:-1], key.replace("_", "-"), key + " ")
    return r.choice([n for n in names if n != key])


def _layout(doc: dict[str, Any], mode: str, order: list[str]) -> bytes:
    """`doc` in the tool's own layout (a reader reuses an artifact's plan bytes from
    it), as compact JSON, or as JSON with its keys in `order`."""
    if mode == "render":
        return render(doc)
    if mode == "compact":
        return json.dumps(doc).encode()
    return json.dumps({k: doc[k] for k in order if k in doc}, indent=1).encode()


def _duplicated(body: bytes, key: str, value: Any, last: bool) -> bytes:
    """`body` (a JSON object) with `key` written once more, holding `value`: after every
    other key (`value` is then the one read) or before them (it is not)."""
    extra = json.dumps({key: value})[1:-1].encode()
    if last:
        end = body.rindex(b"}")
        return body[:end].rstrip() + b",\n  " + extra + b"\n}\n"
    start = body.index(b"{") + 1
    return body[:start] + b"\n  " + extra + b"," + body[start:]


def mutate_keys(
    art: dict[str, Any], other: dict[str, Any], r: random.Random
) -> tuple[bytes, str, Expect]:
    """One artifact (`art`; `other`: another one, a source of values of the right
    shape) with one top-level key dropped, renamed, mistyped or duplicated."""
    doc = dict(art)
    tree = doc.get("kind") == "tree"
    if not tree and r.random() < 0.3:
        doc["config"] = CONFIG
    key = r.choice(sorted(doc))
    # A tree artifact's keys are checked by its own reader: only the rules of every run.
    need = set() if tree else required(doc)
    how = r.choice(("dropped", "renamed", "mistyped", "duplicated", "duplicated"))
    mode = r.choice(
        ("compact", "shuffled") if tree else ("render", "render", "compact", "shuffled")
    )
    order = sorted(doc)
    r.shuffle(order)
    if how == "duplicated":
        pick = r.random()
        if pick < 0.4 and key in other:
            value = other[key]
        elif pick < 0.6:
            value = doc[key]
        else:
            value = r.choice(_VALUES)
        last = r.random() < 0.5
        body = _duplicated(_layout(doc, mode, order), key, value, last)
        reference = _layout({**doc, key: value} if last else doc, mode, order)
        return body, ".json", Expect(how, key, same_as=reference)
    if how == "dropped":
        del doc[key]
        names: tuple[str, ...] = (key,) if key in need else ()
    elif how == "renamed":
        new = _renamed(key, r)
        doc[new] = doc.pop(key)
        order = [new if k == key else k for k in order]
        names = () if tree else (new, key)
    else:
        kinds = {_json_type(doc[key])}
        if key not in need:
            kinds.add("null")  # an optional key may be null
        doc[key] = r.choice([v for v in _VALUES if _json_type(v) not in kinds])
        names = () if tree else (key,)
    if r.random() < 0.25:
        text = yaml.safe_dump(doc, sort_keys=r.random() < 0.5, allow_unicode=True).encode()
        return text, r.choice((".yaml", ".yml")), Expect(how, key, names=names)
    return _layout(doc, mode, order), ".json", Expect(how, key, names=names)


def check(expect: Expect, code: int, stderr: bytes) -> list[tuple[str, str]]:
    """The findings of a run on a key-mutated input against what it must show (the
    duplicated kind is judged by the campaign (`campaign.Fuzzer`), which runs the reference)."""
    if not expect.names:
        return []
    err = stderr.decode("utf-8", "replace")
    what = f"{expect.how} {expect.key}"
    if code != 3:
        return [("key-accepted", f"{what}: exit {code}, expected 3")]
    if not any(f": {n}" in err or f"{n!r}" in err for n in expect.names):
        return [("key-unnamed", f"{what}: no line names it")]
    return []
