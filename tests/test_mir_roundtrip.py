"""Round trip body file -> MIR text (benchmarks/mir_print.py) -> `parse_mir` -> `lower`.

What must be equal: the plan of `parse_mir(print_mir(doc))` is the plan of `doc` itself
— blocks in order, statement costs, domains, terminators, transition matrices, premiums,
paths, and the `lower` section (supports, sizes, liveness, edges) — with two allowances,
both forced by the MIR text and nothing else:

- names: MIR locals are `%N` (read back as `_N`; `env` and `vertex` keep their roles) and
  blocks are `bbN`. So (1) the MIR plan must equal, exactly, the plan of `doc` with its
  locals and blocks renamed as the printer renamed them (`rename`), and (2) the name-free
  view of the plan (everything above, blocks and successors by position) must equal the
  original plan's;
- file-level fields: MIR text has no `name`, `size_cap`, `split` or `profile`; the test
  copies them onto the read-back document (the CLI takes them as options).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.bench_lower import generate
from benchmarks.mir_print import Unprintable, print_mir, print_mir_names, rename
from placement_cli.frontends.lower.stage import lower_to_plan
from placement_cli.frontends.mir_text import parse_mir

ROOT = Path(__file__).resolve().parent.parent
# Every example body file the MIR text can express (asserted below, so none is skipped).
EXAMPLES = [
    "filter.body.yaml",
    "loop_read.body.yaml",
    "seed_intersection.body.yaml",
    "seed_per_statement.body.yaml",
    "seed_split.body.yaml",
]
FILE_FIELDS = ("name", "size_cap", "split", "profile")


def read_back(doc: dict[str, Any]) -> dict[str, Any]:
    back = parse_mir(print_mir(doc), "roundtrip.mir")
    back.update({k: doc[k] for k in FILE_FIELDS if k in doc})
    return back


def name_free(plan: dict[str, Any]) -> dict[str, Any]:
    """The plan without local or block names: blocks and successors by position."""
    pos = {b["id"]: i for i, b in enumerate(plan["blocks"])}
    blocks = []
    for b in plan["blocks"]:
        t = b["terminator"]
        blocks.append(
            {
                "params": len(b["params"]),
                "costs": [s["cost"] for s in b["statements"]],
                "domain": b.get("domain"),
                "terminator": (t["kind"], t.get("cost")),
                "successors": [
                    (pos[e["block"]], len(e["args"]), e.get("transitions")) for e in t["successors"]
                ],
                "premium": b.get("premium"),
                "paths": b.get("paths"),
            }
        )
    sec = plan["lower"]
    return {
        "targets": plan["targets"],
        "entry": pos[plan["entry"]],
        "paths": plan.get("paths"),
        "blocks": blocks,
        "supports": list(sec["statements"].values()),
        "terminator_supports": list(sec["terminators"].values()),
        "ineligible": {k: len(v) for k, v in sec["ineligible"].items()},
        "sizes": sorted(map(str, sec["sizes"].values())),
        "live_units": [v["live_units"] for v in sec["blocks"].values()],
        "edges": [(e["index"], len(e["live"]), e["transfer"], e["in_loop"]) for e in sec["edges"]],
        "diagnostics": [d["code"] for d in sec["diagnostics"]],
    }


def check_roundtrip(doc: dict[str, Any]) -> None:
    plan, sec, diags = lower_to_plan(copy.deepcopy(doc), "orig")
    text, names = print_mir_names(doc)
    back = read_back(doc)
    mplan, msec, mdiags = lower_to_plan(back, "roundtrip.mir")
    # (1) exactly the plan of the renamed body file
    rplan, rsec, rdiags = lower_to_plan(rename(doc, names), "renamed")
    assert mplan == rplan, text
    assert (msec, mdiags) == (rsec, rdiags)
    # (2) and, without names, the plan of the body file itself
    assert name_free(mplan) == name_free(plan), text
    assert len(mplan["blocks"]) == len(plan["blocks"])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(20, 300), seed=st.integers(0, 10_000))
def test_generated_bodies_round_trip(n: int, seed: int) -> None:
    check_roundtrip(generate(n, seed))


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_round_trip(name: str) -> None:
    check_roundtrip(yaml.safe_load((ROOT / "examples" / name).read_text()))


def test_every_printable_example_is_listed() -> None:
    printable = []
    for f in sorted((ROOT / "examples").glob("*.yaml")):
        doc = yaml.safe_load(f.read_text())
        if isinstance(doc, dict) and "bodies" in doc:
            try:
                print_mir(doc)
            except Unprintable:
                continue
            printable.append(f.name)
    assert printable == EXAMPLES


def test_names_forced_by_mir_only() -> None:
    doc = generate(40, 3)
    _, names = print_mir_names(doc)
    loc = names.locals["filter"]
    assert (loc["env"], loc["vertex"]) == ("env", "vertex")
    assert all(v.startswith("_") for k, v in loc.items() if k not in ("env", "vertex"))
    assert names.blocks["filter"]["entry"] == "bb0"
    # a body file already in MIR names reads back with the very same names
    again = read_back(doc)
    assert print_mir_names(again)[1].locals["filter"] == {
        k: k for k in again["bodies"][0]["locals"]
    }


def test_a_changed_program_is_caught() -> None:
    """The comparison is not vacuous: a different vertex path changes the plan."""
    doc = generate(60, 5)
    text = print_mir(doc)
    assert "%1.properties.age" in text
    back = parse_mir(text.replace("%1.properties.age", "%1.metadata.archived", 1), "m.mir")
    back["size_cap"] = doc["size_cap"]
    plan = lower_to_plan(doc, "orig")[0]
    assert name_free(lower_to_plan(back, "m.mir")[0]) != name_free(plan)


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (lambda b: b["blocks"][0]["statements"][0].update(text="x"), "statement text"),
        (lambda b: b["blocks"][-1]["terminator"].pop("operand"), "return needs an operand"),
        (lambda b: b["locals"].update(env={"union": ["int"]}), "union of fewer"),
        (lambda b: b.update(entry="s0a"), "entry must be the first block"),
        (lambda b: b["locals"].update(vertex="int"), "vertex would not read back"),
        (
            lambda b: b["blocks"][1]["terminator"]["successors"][0].update(value=-1),
            "switch value",
        ),
    ],
)
def test_unprintable_constructs_raise(patch: Any, message: str) -> None:
    doc = generate(40, 1)
    patch(doc["bodies"][0])
    with pytest.raises(Unprintable, match=message):
        print_mir(doc)
