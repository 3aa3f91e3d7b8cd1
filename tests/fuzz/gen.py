"""Seeded input generators for the fuzz campaign: each returns (bytes, suffix).

Every generator takes a `random.Random` and so is reproducible from (seed, kind,
index). Values that JSON/YAML writers cannot produce (deep nesting, integers of
hundreds of digits, `NaN` tokens) are written as placeholder strings and substituted
in the text afterwards.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PLAN_EXAMPLES = ("three_targets", "nested_loops", "loop_alternating", "no_target")
BODY_EXAMPLES = ("filter", "loop_read", "seed_intersection", "seed_per_statement", "seed_split")

# Placeholders substituted after serialising (plain scalars in YAML, strings in JSON).
_SUBST = {
    "ZZBIGINTZZ": lambda r: "1" + "0" * r.choice((20, 310, 400, 5000)),
    "ZZNANZZ": lambda r: r.choice(
        ("NaN", "Infinity", "-Infinity", ".nan", ".inf", "1e999", "-1e999")
    ),
}


def _deep(r: random.Random) -> str:
    d = r.choice((60, 101, 300, 1100, 20000))
    if r.random() < 0.5:
        return "[" * d + "]" * d
    return '{"a": ' * d + "1" + "}" * d


def _substitute(text: str, r: random.Random) -> str:
    for token in ("ZZDEEPZZ", "ZZBIGINTZZ", "ZZNANZZ"):
        while token in text:
            if token == "ZZDEEPZZ":
                val = _deep(r)
            else:
                val = _SUBST[token](r)
            for form in (f'"{token}"', f"'{token}'", token):
                if form in text:
                    text = text.replace(form, val, 1)
                    break
    return text


def serialise(doc: Any, r: random.Random, fmt: str | None = None) -> tuple[bytes, str]:
    fmt = fmt or r.choice(("json", "json", "yaml"))
    if fmt == "json":
        text = json.dumps(doc, ensure_ascii=r.random() < 0.5, allow_nan=True)
        suffix = r.choice((".json", ".json", ""))
    else:
        text = yaml.safe_dump(
            doc,
            allow_unicode=True,
            sort_keys=False,
            default_flow_style=r.choice((None, True, False)),
        )
        suffix = r.choice((".yaml", ".yml", ""))
    return _substitute(text, r).encode("utf-8", "surrogatepass"), suffix


# --------------------------------------------------------------------------- plans


def random_plan(r: random.Random, max_blocks: int = 10) -> dict[str, Any]:
    nt = r.randint(1, 4)
    targets = [f"t{i}" for i in range(nt)]
    n = r.randint(1, max_blocks)
    ids = [f"bb{i}" for i in range(n)]
    params = [r.choice(([], [], ["p"])) for _ in range(n)]

    def matrix() -> dict[str, dict[str, float]]:
        m: dict[str, dict[str, float]] = {}
        for s in targets:
            row = {
                d: (0 if s == d else r.choice((0, 1, 2.5, 10)))
                for d in targets
                if s == d or r.random() < 0.6
            }
            if row:
                m[s] = row
        return m

    blocks = []
    for i in range(n):
        kind = (
            r.choice(("goto", "switch", "return", "goto", "switch"))
            if i < n - 1
            else r.choice(("return", "goto", "unreachable"))
        )
        k = {"goto": 1, "switch": r.randint(1, 3), "return": 0, "unreachable": 0}[kind]
        succ = []
        for _ in range(k):
            j = r.randrange(n)
            e: dict[str, Any] = {"block": ids[j]}
            if params[j]:
                e["args"] = ["%x"]
            if r.random() < 0.3:
                e["transitions"] = matrix()
            succ.append(e)
        b: dict[str, Any] = {"id": ids[i], "terminator": {"kind": kind, "successors": succ}}
        if params[i]:
            b["params"] = params[i]
        dom = [t for t in targets if r.random() < 0.75]
        if r.random() < 0.7:
            b["statements"] = [
                {"text": "x", "cost": {t: r.choice((0, 1, 3, 7.5, 100)) for t in dom}}
            ]
        else:
            b["cost"] = {t: r.choice((0, 1, 3, 7.5, 100)) for t in targets}
            if r.random() < 0.5:
                b["domain"] = dom
        if r.random() < 0.1:
            b["premium"] = {targets[0]: 2}
        blocks.append(b)
    plan: dict[str, Any] = {"version": 1, "targets": targets, "blocks": blocks}
    if r.random() < 0.7:
        plan["transitions"] = matrix()
    if r.random() < 0.2:
        plan["name"] = "fuzz"
    return plan


def example_plan(r: random.Random) -> dict[str, Any]:
    name = r.choice(PLAN_EXAMPLES)
    with open(EXAMPLES / f"{name}.yaml", "rb") as fh:
        return yaml.safe_load(fh)  # type: ignore[no-any-return]


def base_plan(r: random.Random) -> dict[str, Any]:
    return example_plan(r) if r.random() < 0.4 else random_plan(r)


# --------------------------------------------------------------------------- bodies


def base_body(r: random.Random) -> dict[str, Any]:
    """One of the example MIR bodies (the front end's input; `mutate` and the raw-text
    cases take it apart from there)."""
    name = r.choice(BODY_EXAMPLES)
    with open(EXAMPLES / f"{name}.body.yaml", "rb") as fh:
        return yaml.safe_load(fh)  # type: ignore[no-any-return]


# --------------------------------------------------------------------------- trees


def random_tree(r: random.Random) -> dict[str, Any]:
    ne = r.randint(1, 4)
    engines = [f"e{i}" for i in range(ne)]
    n = r.randint(1, 12)
    nodes = []
    for i in range(n):
        nodes.append(
            {
                "id": f"n{i}",
                "time": {e: r.choice((0, 1, 2.5, 40)) for e in engines if r.random() < 0.8},
                "rows": r.choice((1, 100, 1e6)),
                "row_width": 8,
            }
        )
    # A random tree: each node i > 0 gets a parent among 0..i-1.
    kids_of: dict[int, list[str]] = {i: [] for i in range(n)}
    for i in range(1, n):
        kids_of[r.randrange(i)].append(f"n{i}")
    for i in range(n):
        if kids_of[i]:
            nodes[i]["children"] = kids_of[i]
    tree: dict[str, Any] = {"version": 1, "engines": engines, "nodes": nodes}
    if r.random() < 0.7:
        tree["budget"] = r.randint(0, 4)
    tr: dict[str, Any] = {}
    if r.random() < 0.7:
        tr["default"] = {"fixed": r.choice((0, 1, 5)), "per_row": 0.001}
    if r.random() < 0.3:
        tr["linear"] = {engines[0]: {engines[-1]: {"fixed": 2}}}
    if r.random() < 0.3 and n > 1:
        tr["explicit"] = [{"child": "n1", "from": engines[0], "to": engines[-1], "cost": 3}]
    if tr:
        tree["transfer"] = tr
    return tree


def base_tree(r: random.Random) -> dict[str, Any]:
    if r.random() < 0.3:
        with open(EXAMPLES / "operator_tree.yaml", "rb") as fh:
            return yaml.safe_load(fh)  # type: ignore[no-any-return]
    return random_tree(r)


# --------------------------------------------------------------------------- mutation

HOSTILE: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    1,
    1.5,
    -0.0,
    1e308,
    -1e308,
    1.7976931348623157e308,
    5e-324,
    2**53 + 1,
    2**63,
    2**64,
    "ZZBIGINTZZ",
    "ZZNANZZ",
    "ZZDEEPZZ",
    "",
    " ",
    "x",
    "bb0",
    "t0",
    "e0",
    "interpreter",
    "\n",
    "a\nb",
    "\x1b[31mred",
    "\u2028",
    "\u202e",
    "\x00",
    "ü🙂",
    "\ud800",
    "9" * 50,
    "x" * 10000,
    [],
    {},
    [None],
    [[]],
    {"": None},
    {"a": {"b": {"c": []}}},
    list(range(2000)),
    "1:30",
    "012",
    "no",
    "ok",
    "infeasible",
    "unsolved",
    "auto",
    "goto",
    "return",
)


def _slots(doc: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) in a document, iteratively."""
    out: list[tuple[Any, Any]] = []
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                out.append((node, k))
                if isinstance(v, (dict, list)):
                    stack.append(v)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                out.append((node, i))
                if isinstance(v, (dict, list)):
                    stack.append(v)
    return out


def _strings(doc: Any) -> list[str]:
    return [c[k] for c, k in _slots(doc) if isinstance(c[k], str)][:200]


def mutate(doc: Any, r: random.Random, rounds: int | None = None) -> Any:
    doc = copy.deepcopy(doc)
    for _ in range(rounds or r.choice((1, 1, 2, 3, 5))):
        slots = _slots(doc)
        if not slots:
            return r.choice(HOSTILE)
        c, k = r.choice(slots)
        op = r.random()
        if op < 0.2:
            del c[k]
        elif op < 0.55:
            c[k] = copy.deepcopy(r.choice(HOSTILE))
        elif op < 0.65 and isinstance(c, list):
            c.insert(r.randint(0, len(c)), copy.deepcopy(c[k]))  # duplicates (ids!)
        elif op < 0.75 and isinstance(c, dict):
            v = c.pop(k)
            c[r.choice((str(k) + "x", str(k).upper(), "", "\n", "ü"))] = v
        elif op < 0.85:
            names = _strings(doc)
            if names:
                c[k] = r.choice(names)
        elif op < 0.92:
            v = c[k]
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                c[k] = r.choice((-v, v * 1e300, str(v), [v], v + 0.5, float("nan"), float("inf")))
            else:
                c[k] = r.choice((0, 1.0, "ZZNANZZ"))
        else:
            c[k] = {"wrapped": c[k]} if r.random() < 0.5 else [c[k]]
    return doc


# --------------------------------------------------------------------------- raw text cases

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
    slots = _slots(doc)
    c, k = r.choice(slots)
    c[k] = "ZZDEEPZZ"
    if r.random() < 0.3:
        doc["zz"] = "ZZDEEPZZ"
    return serialise(doc, r)


def numbers(r: random.Random, base: dict[str, Any]) -> tuple[bytes, str]:
    doc = copy.deepcopy(base)
    nums = [
        (c, k)
        for c, k in _slots(doc)
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
    names = set(_strings(doc))
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
    for c, k in _slots(doc):
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
