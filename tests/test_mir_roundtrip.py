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


def rules_in_body_terms(sec: dict[str, Any]) -> None:
    """`lower.excluded` of MIR input speaks MIR (`%N`, statements as MIR text): compare
    the rules, the definitions and the edges, without the names (in place)."""
    for blk in sec.get("excluded", {}).values():
        blk.pop("text", None)
        if "params" in blk:
            blk["params"] = list(blk["params"].values())
        for rows in (
            *blk.get("statements", {}).values(),
            blk.get("terminator", {}),
            *blk.get("params", []),
        ):
            for t, rec in list(rows.items()):
                rows[t] = {k: v for k, v in rec.items() if k != "via"}


def check_roundtrip(doc: dict[str, Any]) -> None:
    plan, sec, diags = lower_to_plan(copy.deepcopy(doc), "orig")
    text, names = print_mir_names(doc)
    back = read_back(doc)
    mplan, msec, mdiags = lower_to_plan(back, "roundtrip.mir")
    # (1) exactly the plan of the renamed body file
    rplan, rsec, rdiags = lower_to_plan(rename(doc, names), "renamed")
    rules_in_body_terms(msec)
    rules_in_body_terms(rsec)
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


# -- the reader's line tokens read exactly as the token-by-token scanner -------------------

MIR_DATA = sorted((ROOT / "tests" / "data" / "mir").glob("*.mir")) + [
    ROOT / "examples" / "web_filter.mir"
]


def read_plain(text: str) -> Any:
    """`parse_mir` without line tokens: the dict, or the error's text."""
    from placement_cli.frontends.mir_text import MirSyntaxError
    from placement_cli.frontends.mir_text.convert import to_body_file
    from placement_cli.frontends.mir_text.lexer import Cursor, tokenize
    from placement_cli.frontends.mir_text.parser import parse_bodies

    try:
        return to_body_file(parse_bodies(Cursor(tokenize(text, "m.mir"), "m.mir")), "m.mir")
    except MirSyntaxError as exc:
        return str(exc)


def read_lines(text: str) -> Any:
    from placement_cli.frontends.mir_text import MirSyntaxError

    try:
        return parse_mir(text, "m.mir")
    except MirSyntaxError as exc:
        return str(exc)


def test_line_tokens_are_taken() -> None:
    """The fast path is used (else the equivalence below would be vacuous)."""
    from placement_cli.frontends.mir_text.lexer import tokenize

    kinds = {t.kind for t in tokenize(print_mir(generate(100, 2)), lines=True)}
    assert {"LET", "STMT", "TERM", "HEAD"} <= kinds


@pytest.mark.parametrize("path", MIR_DATA, ids=lambda p: p.name)
def test_line_tokens_read_as_tokens_data(path: Path) -> None:
    text = path.read_text()
    assert read_lines(text) == read_plain(text)


def test_line_tokens_read_as_tokens_generated() -> None:
    text = print_mir(generate(400, 9))
    assert read_lines(text) == read_plain(text)


# Pieces of statement and terminator lines, many of them near the edges of the line
# patterns: a `%` that is an operator or a place, `-` as a sign or an operator, comments,
# projections, numbers too long, words that are almost keywords.
PIECES = [
    "%2",
    "%3",
    "%1",
    "%0",
    "%0.1",
    "%0.01",
    "%2.x",
    "%2.0.y",
    "%9",
    "%2.",
    "%3x",
    "%007",
    " ",
    " ",
    " ",
    "\t",
    "=",
    "==",
    "!=",
    "<=",
    "<",
    "-",
    "--",
    "+",
    "*",
    "/",
    "%",
    "%%",
    "&&",
    "&",
    "||",
    "|",
    "^",
    "!",
    "~",
    "(",
    ")",
    ",",
    "3",
    "-3",
    "- 3",
    "1.5",
    "1e3",
    "9" * 41,
    "true",
    "false",
    "null",
    "truex",
    "apply",
    "input",
    "LOAD",
    "EXISTS",
    "x",
    "a::b",
    "//c",
    "// postgres",
    '"s"',
    "[",
    "]",
    ":",
    "->",
    "bb1",
    "bb2",
    "bb1()",
    "bb2(%2)",
    "bb1(-1, true)",
    "otherwise",
    "0",
    "{",
    "}",
    "let",
    "é",
]
LINE = st.lists(st.sampled_from(PIECES), max_size=9).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    stmts=st.lists(
        st.tuples(st.sampled_from(["%2 = ", "%3 = ", "%9 = ", "%2=", ""]), LINE), max_size=3
    ),
    lets=st.lists(LINE, max_size=2),
    head=st.sampled_from(
        ["bb0(): {", "bb0(%3): {", "bb0(%3, %4): {", "bb0(){", "bb0(): {//x", "bb0(%2.x): {"]
    ),
    term=st.sampled_from(["return ", "goto -> ", "switchInt(%2) -> [", "switchInt(", ""]).flatmap(
        lambda k: LINE.map(lambda rest: k + rest)
    ),
)
def test_line_tokens_read_as_tokens_fuzz(
    stmts: list[tuple[str, str]], lets: list[str], head: str, term: str
) -> None:
    body = "\n".join(
        [
            "fn {f}(%0: (Integer, (Integer) -> Integer), %1: Entity) -> ? {",
            "    let %2: Integer",
            "    let %3: (a: Integer, b: List<Integer>)",
            *[f"    let %4: {t}" for t in lets],
            "",
            f"    {head}",
            *[f"        {lhs}{rv}" for lhs, rv in stmts],
            f"        {term}",
            "    }",
            "",
            "    bb1(): {",
            "        return %2",
            "    }",
            "",
            "    bb2(%4): {",
            "        return %4",
            "    }",
            "}",
        ]
    )
    assert read_lines(body) == read_plain(body), body


@pytest.mark.parametrize(
    "line",
    [
        "%2 = %3 %4",  # two places: an error, not a remainder
        "%2 = %3 %%4",
        "%2 = %3 % 4",
        "%2 = %3 -5",
        "%2 = %3 - -5",
        "%2 = -5 - %3",
        "%2 = - 5",
        "%2 = -%3",
        "%2 = %3 //x",
        "%2 = %3 /// x",
        "%2 = (%3)",
        "%2 = (%3,)",
        "%2 = (true: %3)",
        "%2 = apply %0.1.0 %0.1.1 %3",
        "%2 = apply %0.1 -3 true",
        "%2 = input LOAD x",
        "%2 = input EXISTS a::b",
        "%2 = %0.01",
        "%2 = %3.x",  # %3 is a struct: no field x is no error of the reader
        "%2 = %9",  # not declared
        "%02 = %3",
        "%2 = " + "9" * 41,
        "%2 = truex",
        "%2 = %3 -> 4",
    ],
)
def test_line_tokens_read_as_tokens_edges(line: str) -> None:
    body = (
        "fn {f}(%0: (Integer, (Integer) -> Integer), %1: Entity) -> ? {\n"
        "    let %2: Integer\n    let %3: (a: Integer, b: List<Integer>)\n\n"
        f"    bb0(): {{\n        {line}\n        return %2\n    }}\n}}\n"
    )
    assert read_lines(body) == read_plain(body)
