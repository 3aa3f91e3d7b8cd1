"""Seeded edge-case inputs for the fuzz campaign, each returning (bytes, suffix): YAML
that expands or aliases (`yaml_edge`), nesting past the readers' depth
(`deep_nesting`), numbers at and past every bound (`numbers`), ids that collide or
read as other types (`ids`) and raw byte damage (`raw_bytes`). The documents they start
from, the mutations and the serialiser are in `tests/fuzz/gen.py`.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from tests.fuzz.gen import serialise, slots_of, strings_of

_PLAN_TAIL = (
    "targets: [t0, t1]\nblocks:\n  - {id: bb0, cost: {t0: 1, t1: 2}, terminator: {kind: return}}\n"
)
_TREE_TAIL = "engines: [e0]\nnodes: [{id: n0, time: {e0: 1}}]\n"
_BODY_TAIL = "bodies:\n  - name: f\n    blocks:\n      - {id: bb0, terminator: {kind: return}}\n"


def yaml_edge(r: random.Random, tree: bool = False, body: bool = False) -> tuple[bytes, str]:
    tail = _TREE_TAIL if tree else _BODY_TAIL if body else _PLAN_TAIL
    levels = r.randint(3, 12)
    width = r.choice((2, 5, 10, 20))
    bomb = ["a0: &a0 [" + ", ".join(["x"] * width) + "]"]
    for i in range(1, levels):
        bomb.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    cases = [
        lambda: "\n".join(bomb) + f"\nversion: 1\nname: *a{levels - 1}\n" + tail,
        lambda: "version: 1\n" + tail + "zz:\n" + "".join("  " + b + "\n" for b in bomb),
        lambda: "version: 1\nname: &a [*a]\n" + tail,
        lambda: "version: 1\nname: *undefined\n" + tail,
        lambda: (
            "version: 1\nbase: &b {kind: return}\n" + tail + "  - {id: bb1, terminator: {<<: *b}}\n"
        ),
        lambda: "version: 1\nname: !!python/object/apply:os.system ['echo FUZZ-PWNED']\n" + tail,
        lambda: "version: 1\nname: !!python/name:os.system\n" + tail,
        lambda: (
            "version: 1\nname: "
            + r.choice(
                (
                    "!!binary aGk=",
                    "!!timestamp 2001-12-14",
                    "!!set {a}",
                    "!!omap [a: 1]",
                    "!custom x",
                    "!!int x",
                    "!!float abc",
                    "!!str 1",
                    "!!null ''",
                )
            )
            + "\n"
            + tail
        ),
        lambda: (
            "version: "
            + r.choice(
                ("1", "01", "0o1", "0x1", "1.0", "true", "+1", "1:00", "!!str 1", "'1'", "1e0", "~")
            )
            + "\n"
            + tail
        ),
        lambda: (
            "version: 1\ntargets: [t0]\nblocks:\n  - {id: "
            + r.choice(
                (
                    "012",
                    "1:30",
                    "no",
                    "yes",
                    "0x1F",
                    "1e3",
                    "~",
                    "2024-01-01",
                    "'012'",
                    ".nan",
                    "-.inf",
                    "1_000",
                    "0b11",
                )
            )
            + ", cost: {t0: "
            + r.choice(
                ("012", "1:30", "1e3", "1_000", "0x10", ".inf", ".nan", "1e999", "0o7", "-0", "+1")
            )
            + "}, terminator: {kind: return}}\n"
        ),
        lambda: "version: 1\n" + tail + "---\nversion: 1\n" + tail,
        lambda: "\ufeff" + "version: 1\n" + tail,
        lambda: (
            "version: 1\nname: "
            + "[" * r.choice((101, 999, 1001, 5000))
            + "]" * r.choice((0, 101, 999, 1001, 5000))
            + "\n"
            + tail
        ),
        lambda: (
            "version: 1\nzz: "
            + "{a: " * r.choice((50, 101, 500))
            + "1"
            + "}" * r.choice((50, 101, 500))
            + "\n"
            + tail
        ),
        lambda: (
            "version: 1\n"
            + tail
            + "zz: ["
            + ", ".join(str(i) for i in range(r.choice((1000, 100000, 400000))))
            + "]\n"
        ),
        lambda: "version: 1\n" + tail + "zz: '" + "x" * r.choice((10**4, 10**6, 5 * 10**6)) + "'\n",
        lambda: "version: 1\n\t" + tail,
        lambda: (
            "version: 1\n"
            + tail.replace(
                "bb0", r.choice(("bb\\n0", '"bb\\n0"', '"\\e[2J"', '"\\u2028"', '""', '" "', "ü🙂"))
            )
        ),
        lambda: "? [a, b]\n: 1\nversion: 1\n" + tail,
        lambda: "version: 1\nversion: 1\n" + tail,
        lambda: "%YAML 1.1\n---\nversion: 1\n" + tail,
        lambda: (
            "%TAG ! tag:yaml.org,2002:python/object:\n---\nversion: 1\nname: !os.system x\n" + tail
        ),
        lambda: "",
        lambda: "~\n",
        lambda: "- 1\n- 2\n",
        lambda: "'just a string'\n",
    ]
    text = r.choice(cases)()
    return text.encode("utf-8", "surrogatepass"), r.choice((".yaml", ".yml", ""))


def deep_nesting(r: random.Random, base: dict[str, Any]) -> tuple[bytes, str]:
    doc = copy.deepcopy(base)
    slots = slots_of(doc)
    c, k = r.choice(slots)
    c[k] = "ZZDEEPZZ"
    if r.random() < 0.3:
        doc["zz"] = "ZZDEEPZZ"
    return serialise(doc, r)


def numbers(r: random.Random, base: dict[str, Any]) -> tuple[bytes, str]:
    doc = copy.deepcopy(base)
    nums = [
        (c, k)
        for c, k in slots_of(doc)
        if isinstance(c[k], (int, float)) and not isinstance(c[k], bool)
    ]
    pool = (
        1e308,
        1.7976931348623157e308,
        1e300,
        5e299,
        1e154,
        -0.0,
        5e-324,
        2**53 + 1,
        2**63 - 1,
        2**64,
        "ZZBIGINTZZ",
        "ZZNANZZ",
        float("nan"),
        float("inf"),
        -1,
        -1e-300,
        1e-320,
        0.1,
        3.0,
    )
    for c, k in r.sample(nums, min(len(nums), r.randint(1, 6))) if nums else []:
        c[k] = r.choice(pool)
    if r.random() < 0.3:
        for c, k in nums:
            c[k] = r.choice((1e308, 1e300, 4e299))
    return serialise(doc, r)


def ids(r: random.Random, base: dict[str, Any]) -> tuple[bytes, str]:
    doc = copy.deepcopy(base)
    names = set(strings_of(doc))
    pool = (
        "",
        " ",
        "\t",
        "\n",
        "a\nfake.json: ok",
        "\x1b[2J",
        "\u2028",
        "\u202e",
        "ü🙂",
        "é",
        "e\u0301",
        "\x00",
        "x" * 5000,
        "bb0",
        "n0",
        "t0",
        "e0",
        "'",
        '"',
        "\\",
        "a.b",
        "a[0]",
        "-",
        "~",
        "null",
        "012",
    )
    mapping = {n: r.choice(pool) for n in names if r.random() < 0.5}
    for c, k in slots_of(doc):
        if isinstance(c, dict) and k not in c:
            continue  # renamed below
        v = c[k]
        if isinstance(v, str) and v in mapping:
            c[k] = mapping[v]
        if isinstance(c, dict) and isinstance(k, str) and k in mapping and r.random() < 0.5:
            c[mapping[k]] = c.pop(k)
    return serialise(doc, r, fmt=r.choice(("json", "yaml")))


def raw_bytes(r: random.Random, data: bytes) -> tuple[bytes, str]:
    op = r.random()
    if op < 0.35:
        out = data[: r.randrange(max(1, len(data)))]
    elif op < 0.55:
        b = bytearray(data)
        for _ in range(r.randint(1, 8)):
            if b:
                b[r.randrange(len(b))] = r.randrange(256)
        out = bytes(b)
    elif op < 0.7:
        out = bytes(r.randrange(256) for _ in range(r.choice((0, 1, 10, 1000, 100000))))
    elif op < 0.8:
        out = data.decode("utf-8", "replace").encode(
            r.choice(("utf-16", "utf-32", "latin-1")), "replace"
        )
    elif op < 0.9:
        out = b"\xef\xbb\xbf" + data if r.random() < 0.5 else data + b"\x00" * r.randint(1, 10)
    else:
        i = r.randrange(max(1, len(data)))
        out = (
            data[:i]
            + r.choice((b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b"\r", b"\x1b", b"}", b"]"))
            + data[i:]
        )
    return out, r.choice((".json", ".yaml", ""))
