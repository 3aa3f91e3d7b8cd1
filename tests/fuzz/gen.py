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
    nodes: list[dict[str, Any]] = []
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


def slots_of(doc: Any) -> list[tuple[Any, Any]]:
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


def strings_of(doc: Any) -> list[str]:
    return [c[k] for c, k in slots_of(doc) if isinstance(c[k], str)][:200]


def mutate(doc: Any, r: random.Random, rounds: int | None = None) -> Any:
    doc = copy.deepcopy(doc)
    for _ in range(rounds or r.choice((1, 1, 2, 3, 5))):
        slots = slots_of(doc)
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
            names = strings_of(doc)
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
