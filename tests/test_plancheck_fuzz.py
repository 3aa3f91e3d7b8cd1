"""The fast load path agrees with the strict models, byte for byte.

msgspec (`placement_cli.formats.structs`) accepts a plan, and `sectioncheck` an artifact,
without pydantic, and the graph is built from what they accept; anything it does not certainly accept goes
to the pydantic models, which give the messages. So the two paths must agree on every
input: whatever the fast check accepts, the models accept too, with the same graph,
the same normalised plan bytes, the same section data, the same stage checks and the
same artifact bytes; and on everything else the outcome (every error line) is the one
the models alone give. Random plans, the examples, and their mutations (the fuzz
campaign's generators, `tests/fuzz/gen.py`), written as JSON and YAML, as plans and as
artifacts of every stage.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest
from pydantic import ValidationError

from placement_cli.core.errors import InputError
from placement_cli.core.io import dumps
from placement_cli.formats.artifact import render
from placement_cli.formats.checking import Reject
from placement_cli.formats.plan import Plan
from placement_cli.formats.structs import convert_plan
from placement_cli.ir.graph import build_graph
from placement_cli.ir.normalize import normalize
from placement_cli.pipeline import loading
from placement_cli.pipeline.loading import check_artifact, check_section
from placement_cli.pipeline.registry import STAGES, artifact_model, section_models
from placement_cli.pipeline.run import Run, load
from tests.fuzz.gen import base_plan, mutate, random_plan, serialise

SEED = 20261126
N_PLANS = 300
N_ARTIFACTS = 160
SORT = orjson.OPT_SORT_KEYS


def check_plan(doc: Any) -> None:
    """msgspec's acceptance of a parsed plan (`Reject` when it leaves it to the models)."""
    if convert_plan(doc) is None:
        raise Reject("plan")


def _graph_signature(g: Any) -> tuple[Any, ...]:
    return (
        g.name,
        g.targets,
        g.block_ids,
        g.entry,
        g.domain,
        g.cost,
        g.edge_src,
        g.edge_dst,
        g.edge_pos,
        tuple(m.cost for m in g.edge_mat),
        g.succ,
        g.pred,
        g.live,
        g.block_paths,
        g.path_names,
        g.path_origin,
        g.default_matrix.cost,
        orjson.dumps(normalize(g)),
    )


def _outcome(path: str, stages: bool) -> tuple[Any, ...]:
    """Everything observable about loading `path` (and, with `stages`, running every
    stage the input carries a section of, and writing the last one's artifact)."""
    try:
        loaded = load(path)
    except InputError as exc:
        return ("error", str(exc))
    # Key order of the data is the file's on the fast path, the models' declaration order
    # on the other; nothing written or compared depends on it (artifacts sort keys).
    out: tuple[Any, ...] = (
        "ok",
        _graph_signature(loaded.graph),
        orjson.dumps(loaded.data, option=SORT),
        orjson.dumps(loaded.diagnostics, option=SORT),
        loaded.status,
        orjson.dumps(loaded.extra, option=SORT),
        loaded.raw_plan,
    )
    if not stages:
        return out
    run = Run(loaded)
    carried = [s for s in STAGES if s in loaded.data]
    try:
        for stage in carried:
            run.run(stage)
        kind = carried[-1] if carried else "prune"
        art = render(run.artifact(kind, raw_plan=True), "json")
    except InputError as exc:
        return (*out, "error", str(exc))
    return (*out, art)


def _slow(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Force the models' path; the returned counter says how often the fast check was
    asked (and refused), so a test can tell the slow path really ran."""
    asked = [0]

    def refuse(doc: Any, *args: Any, **kwargs: Any) -> None:
        asked[0] += 1
        raise Reject("forced")

    # The fast path's two entries: a plan's checked build, an artifact's type check.
    monkeypatch.setattr(loading, "checked_graph", refuse)
    monkeypatch.setattr(loading, "check_artifact", refuse)
    return asked


def _both(path: str, monkeypatch: pytest.MonkeyPatch, stages: bool = False) -> tuple[Any, Any]:
    fast = _outcome(path, stages)
    with monkeypatch.context() as m:
        asked = _slow(m)
        slow = _outcome(path, stages)
    # A loaded input went through a fast check first: if the forced refusal was never
    # asked, the patch missed the load path and `slow` was the fast path again.
    if fast[0] == "ok":
        assert asked[0] > 0, "the slow path was not taken"
    return fast, slow


def _models_accept(validate: Any, value: Any = None) -> bool:
    try:
        validate() if value is None else validate(value)
    except ValidationError:
        return False
    return True


def _fast_accepts(check: Any, doc: Any) -> bool:
    try:
        check(doc)
    except Reject:
        return False
    return True


def _checked_build_accepts(doc: Any) -> bool:
    """Whether `build_graph(doc, check=True)` accepts the types (its plan may still have
    problems of meaning)."""
    try:
        build_graph(doc, check=True)
    except Reject:
        return False
    except InputError:
        pass
    return True


def test_valid_plans_take_the_fast_path_and_build_the_same_graph(tmp_path, monkeypatch):
    r = random.Random(SEED)
    for i in range(N_PLANS // 3):
        doc = base_plan(r)
        assert _fast_accepts(check_plan, doc), doc  # the fast path is taken
        data, suffix = serialise(doc, r, r.choice(("json", "yaml")))
        path = tmp_path / f"p{i}{suffix or '.json'}"
        path.write_bytes(data)
        fast, slow = _both(str(path), monkeypatch)
        assert fast == slow, (i, data[:300])


def test_mutated_plans_agree_with_the_models(tmp_path, monkeypatch):
    r = random.Random(SEED + 1)
    accepted = refused = 0
    for i in range(N_PLANS):
        doc = mutate(base_plan(r), r)
        data, suffix = serialise(doc, r)
        path = tmp_path / f"m{i}{suffix}"
        path.write_bytes(data)
        fast, slow = _both(str(path), monkeypatch)
        assert fast == slow, (i, data[:400])
        # Acceptance itself, in Python mode: the fast check never accepts what the
        # models refuse.
        try:
            parsed = orjson.loads(data) if path.suffix == ".json" else None
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            # What msgspec accepts while building (the load path), from the parsed
            # document or the bytes, the models accept too.
            if _checked_build_accepts(parsed) or _checked_build_accepts(data):
                assert _models_accept(Plan.model_validate, parsed), (i, data[:400])
                assert _models_accept(Plan.model_validate_json, data), (i, data[:400])
            if _fast_accepts(check_plan, parsed):
                accepted += 1
                assert _models_accept(Plan.model_validate, parsed), (i, data[:400])
                assert _models_accept(Plan.model_validate_json, data), (i, data[:400])
            else:
                refused += 1
    assert accepted and refused  # both sides of the check were exercised


def _artifact_doc(r: random.Random, kind: str) -> dict[str, Any]:
    loaded = loading.Loaded("<fuzz>", loading._plan_from_doc(random_plan(r, 8)))
    run = Run(loaded)
    return orjson.loads(render(run.artifact(kind), "json"))  # type: ignore[no-any-return]


def test_artifacts_agree_with_the_models(tmp_path, monkeypatch):
    r = random.Random(SEED + 2)
    fast_taken = spans = 0
    for i in range(N_ARTIFACTS):
        kind = STAGES[i % len(STAGES)]
        try:
            doc = _artifact_doc(r, kind)
        except InputError:
            continue  # a random plan with a semantic problem: no artifact to mutate
        if i % 4 == 0:
            fast_taken += 1
            assert _fast_accepts(check_artifact, doc)
            assert all(
                _fast_accepts(lambda d, s=s: check_section(s, d), doc[s])
                for s in STAGES
                if s in doc
            )
        else:
            doc = mutate(doc, r)
        data, suffix = serialise(doc, r)
        if i % 2:
            # The layout this tool writes, so the plan's span is found and parsed apart
            # (`artifact_bytes.parse_artifact`), tampered or not.
            try:
                data, suffix = dumps(doc), ".json"
            except TypeError:
                pass
        path = tmp_path / f"a{i}{suffix}"
        path.write_bytes(data)
        fast, slow = _both(str(path), monkeypatch, stages=True)
        assert fast == slow, (i, kind, data[:600])
        spans += fast[0] == "ok" and fast[6] is not None
        if isinstance(doc, dict) and _fast_accepts(check_artifact, doc):
            assert _models_accept(artifact_model().model_validate, doc), (i, kind)
        if isinstance(doc, dict) and _fast_accepts(lambda d: check_artifact(d, plan=False), doc):
            if _checked_build_accepts(doc["plan"]):
                assert _models_accept(artifact_model().model_validate, doc), (i, kind)
    assert fast_taken and spans


def test_sections_accept_only_what_their_models_accept():
    """Section by section, with mutations of valid sections (also what library callers
    hand to `Loaded(sections=...)`)."""
    r = random.Random(SEED + 3)
    seen = {s: [0, 0] for s in STAGES}
    for _ in range(120):
        try:
            doc = _artifact_doc(r, "islands")
        except InputError:
            continue
        for stage in STAGES:
            sec = doc[stage] if r.random() < 0.3 else mutate(doc[stage], r)
            fast = _fast_accepts(lambda d, s=stage: check_section(s, d), sec)
            seen[stage][fast] += 1
            if fast:
                assert _models_accept(section_models()[stage].model_validate, sec), (stage, sec)
                # and the data is what the models give back
                model = section_models()[stage].model_validate(sec)
                assert model.model_dump(by_alias=True, exclude_unset=True) == sec
    assert all(a and b for a, b in seen.values()), seen


@pytest.mark.parametrize(
    "value,accepted",
    [
        (1, True),
        (2.5, True),
        (0, True),
        (-0.0, True),
        (True, False),
        (-1, False),
        (float("nan"), False),
        (float("inf"), False),
        (2**53 + 1, True),
        ("1", False),
        (None, False),
        (1e300, True),
    ],
)
def test_cost_edge_cases(value, accepted):
    doc = {
        "version": 1,
        "targets": ["a"],
        "blocks": [{"id": "x", "cost": {"a": value}, "terminator": {"kind": "return"}}],
    }
    assert _fast_accepts(check_plan, doc) is accepted
    if accepted:
        # the same value as the models hold (an integer read as the equal float)
        got = convert_plan(doc).blocks[0].cost  # type: ignore[union-attr]
        assert got == Plan.model_validate(doc).blocks[0].cost


def test_deep_free_form_values_go_to_the_models(tmp_path, monkeypatch):
    # pydantic's JSON parser refuses nesting about 200 deep; orjson reads it.
    for depth in (30, 150, 250):
        prov = "[" * depth + "]" * depth
        data = (
            '{"version": 1, "targets": ["a"], "provenance": {"x": ' + prov + "}, "
            '"blocks": [{"id": "x", "terminator": {"kind": "return"}}]}'
        ).encode()
        path = tmp_path / f"d{depth}.json"
        path.write_bytes(data)
        fast, slow = _both(str(path), monkeypatch)
        assert fast == slow, depth
    assert fast[0] == "error"  # the deepest is refused, as the models refuse it


def test_scc_section_match_is_equality():
    """`stages.scc.matches` (the check's shortcut) says equal exactly when the read
    section equals the recomputed one, on valid and tampered sections."""
    from placement_cli.algorithms.scc import scc
    from placement_cli.pipeline.stages.scc import matches, section

    r = random.Random(SEED + 4)
    same = differ = 0
    for _ in range(300):
        try:
            g = loading._plan_from_doc(random_plan(r, 10))
        except InputError:
            continue
        res = scc(g)
        expected = section(res, g)
        roll = r.random()
        sec = expected if roll < 0.3 else mutate(expected, r)
        if roll > 0.8:
            # Only the optional field of the other kind added (the type check allows it).
            sec = orjson.loads(orjson.dumps(expected))
            comp = r.choice(sec["components"])
            comp["header" if comp["kind"] == "trivial" else "self_loop"] = r.choice(
                (None, False, "a")
            )
        if not _fast_accepts(lambda d: check_section("scc", d), sec):
            continue  # types are checked before a stage sees a section
        got = matches(sec, res, g)
        assert got == (sec == expected), sec
        same += got
        differ += not got
    assert same and differ


# Pairs of values for one statement cost in two otherwise equal copies: the first is
# read (and remembered when accepted) before the second, which is refused by the models,
# a problem of meaning, or accepted alike. None and NaN (or infinity) both serialise as
# `null`; 1, 1.0 and True do not.
_TWINS = [
    (None, float("nan")),
    (None, float("inf")),
    (None, -float("inf")),
    (1, True),
    (1, 1.0),
    (1.0, 1),
    (0, False),
    (1, 2**53 + 1),
    (1, "1"),
    (1, -1),
    (1, [1]),
    (None, None),
    (1, 1),
]


def _copies(doc: dict[str, Any], donor: dict[str, Any], r: random.Random) -> list[dict[str, Any]]:
    """Add 2 to 6 blocks to `doc`, each with a copy of `donor`'s statements and of the
    last block's terminator (so its matrices), and return them."""
    blocks = doc["blocks"]
    last, first = blocks[-1], blocks[0]
    copies = []
    for j in range(r.randint(2, 6)):
        copy = orjson.loads(orjson.dumps(donor))
        copy["id"] = f"rep{j}"
        copy.pop("params", None)
        copy["terminator"] = orjson.loads(orjson.dumps(last["terminator"]))
        succs = copy["terminator"].get("successors")
        for e in succs if isinstance(succs, list) else ():
            if not isinstance(e, dict):
                continue
            e.pop("args", None)
            e["block"] = last.get("id") if not last.get("params") else first.get("id")
            if isinstance(first.get("params"), list) and e["block"] == first.get("id"):
                e["args"] = ["x"] * len(first["params"])
        copies.append(copy)
    blocks.extend(copies)
    return copies


def test_repeated_statement_lists_and_matrices_are_checked_where_they_differ(tmp_path, monkeypatch):
    """The fast check and the graph builder read a repeated statement list, matrix or
    statement cost once (by its serialisation); a copy that differs only where the bytes
    hide it (None and NaN are both `null`) must still be refused, reported at its own
    place, or accepted, exactly as the models decide."""
    r = random.Random(SEED + 5)
    ok = refused = problems = 0
    for i in range(80):
        doc = random_plan(r, 6)
        blocks = doc["blocks"]
        if not any(b.get("statements") for b in blocks):
            blocks[0]["statements"] = [{"cost": {doc["targets"][0]: 1}}]
        donor = next(b for b in blocks if b.get("statements"))
        copies = _copies(doc, donor, r)
        # Two copies twisted at the same place, the first read before the second.
        first, second = sorted(r.sample(range(len(copies)), 2))
        at = r.randrange(len(donor["statements"]))
        twist = r.choice(_TWINS + ["unknown-target", "text"])
        # Where: a statement, or what else costs (the terminator's cost may be null).
        # Or a whole field (None in one copy, NaN in the other: the same bytes as a block
        # without that field, whose costs the builder remembers under one key).
        place = r.choice(
            ("statement", "statement", "terminator", "cost", "premium", "domain", "field")
        )
        field = r.choice(("terminator", "cost", "premium", "domain"))
        t0 = doc["targets"][0]
        for which, copy in ((0, copies[first]), (1, copies[second])):
            st = copy["statements"][at]
            if place == "field" and type(twist) is tuple:
                (copy["terminator"] if field == "terminator" else copy)[
                    field if field != "terminator" else "cost"
                ] = twist[which]
            elif place == "domain" and type(twist) is tuple:
                copy["domain"] = [(t0, twist[which])[type(twist[which]) is not str and which]]
            elif place != "statement" and type(twist) is tuple:
                owner = copy["terminator"] if place == "terminator" else copy
                owner[place] = {t0: twist[which]}
            elif twist == "unknown-target":
                st["cost"]["nowhere"] = 1
            elif twist == "text":
                st["text"] = ("t", 1)[which]
            elif st["cost"]:
                st["cost"][next(iter(st["cost"]))] = twist[which]
        fmt = "yaml" if r.random() < 0.6 else "json"  # YAML carries NaN and infinities
        data, suffix = serialise(doc, r, fmt)
        path = tmp_path / f"r{i}{suffix or ('.yaml' if fmt == 'yaml' else '.json')}"
        path.write_bytes(data)
        fast, slow = _both(str(path), monkeypatch)
        assert fast == slow, (i, twist, data[:600])
        if fast[0] == "ok":
            ok += 1
        elif "unknown target" in fast[1] or "overflows" in fast[1]:
            problems += 1
        else:
            refused += 1
    assert ok and refused and problems


def _respell(costs: Any, salt: int) -> int:
    """Write some integer costs as the equal floats (which of them: the bits of `salt`),
    so that equal values serialise differently. Returns the salt, shifted past them."""
    if isinstance(costs, dict):
        for t, c in costs.items():
            if type(c) is int and salt & 1:
                costs[t] = float(c)
            salt >>= 1
    return salt


def test_graph_is_the_same_when_no_statement_list_repeats():
    """The graph builder's reading of repeated statement lists, statement costs and
    matrices once is invisible: the same plan with every statement given its own text
    and its costs and every matrix their own spelling (`1` or `1.0`: almost nothing repeats, so nothing is remembered) builds
    the same graph, or reports the same problems."""
    r = random.Random(SEED + 6)
    compared = failed = 0
    for _ in range(150):
        doc = mutate(base_plan(r), r, 1) if r.random() < 0.5 else random_plan(r, 8)
        blocks = doc.get("blocks") if isinstance(doc, dict) else None
        if isinstance(blocks, list) and blocks and all(isinstance(b, dict) for b in blocks):
            donors = [
                b for b in blocks if isinstance(b.get("statements"), list) and b["statements"]
            ]
            if donors and isinstance(blocks[-1].get("terminator"), dict):
                donor = r.choice(donors)
                if r.random() < 0.3 and isinstance(donor["statements"][0], dict):
                    donor["statements"][0]["cost"] = {"nowhere": 1}  # a problem in every copy
                targets = doc.get("targets")
                if (
                    r.random() < 0.5
                    and isinstance(targets, list)
                    and targets
                    and isinstance(targets[0], str)
                ):
                    # What else costs, repeated with the statements: fine, or a problem in every copy.
                    t = targets[0]
                    field, value = r.choice(
                        [
                            ("domain", [t]),
                            ("domain", [t, "nowhere"]),
                            ("domain", [t, t]),
                            ("cost", {t: 2}),
                            ("cost", {"nowhere": 1}),
                            ("premium", {t: 1.5}),
                            ("premium", {"nowhere": 2}),
                            ("cost", {t: 1e308}),
                            ("premium", {t: 1e308}),
                        ]
                    )
                    donor[field] = value
                _copies(doc, donor, r)
        try:
            check_plan(doc)
        except Reject:
            continue
        unique = orjson.loads(orjson.dumps(doc))
        salt = 0
        for i, b in enumerate(unique["blocks"]):
            for j, st in enumerate(b.get("statements") or ()):
                st["text"] = f"{i}.{j}"
                salt += 1
                _respell(st["cost"], salt)
            for e in b["terminator"].get("successors") or ():
                tr = e.get("transitions")
                if isinstance(tr, dict):
                    salt += 1
                    for row in tr.values():
                        salt = _respell(row, salt)
        outcomes = []
        for d in (doc, unique):
            try:
                outcomes.append(("ok", _graph_signature(build_graph(d))[:-1]))
            except InputError as exc:
                outcomes.append(("error", str(exc)))
        assert outcomes[0] == outcomes[1]
        compared += 1
        failed += outcomes[0][0] == "error"
    assert compared and failed


def test_every_literal_and_optional_field_is_checked():
    """Each literal field refuses another string, each optional typed field another type,
    exactly as the models do (checked inline by `sectioncheck`, so named one by one)."""
    r = random.Random(SEED + 7)
    doc = None
    while doc is None:
        try:
            doc = _artifact_doc(r, "islands")
        except InputError:
            pass
    twists = [
        ("scc", lambda s: s["components"][0].__setitem__("kind", "other")),
        ("scc", lambda s: s["components"][0].__setitem__("self_loop", "yes")),
        ("scc", lambda s: s["components"][0].__setitem__("header", 1)),
        ("scc", lambda s: s["components"][0].__setitem__("reachable", 1)),
        ("solve", lambda s: s.__setitem__("status", "done")),
        ("solve", lambda s: s.__setitem__("method", 1)),
        ("solve", lambda s: s.__setitem__("gap", "0")),
        ("islands", lambda s: s["graph"]["nodes"][0].__setitem__("kind", "other")),
        ("islands", lambda s: s["graph"]["nodes"][0].__setitem__("provides", "p")),
        ("islands", lambda s: s["graph"].__setitem__("entry", 1)),
        (
            "fuse",
            lambda s: (
                s["blocks"][0].__setitem__("target", 1)
                if s["blocks"]
                else s.__setitem__("merged", -1)
            ),
        ),
    ]
    for stage, twist in twists:
        sec = orjson.loads(orjson.dumps(doc[stage]))
        assert _fast_accepts(lambda d, s=stage: check_section(s, d), sec)
        twist(sec)
        assert not _fast_accepts(lambda d, s=stage: check_section(s, d), sec), stage
        assert not _models_accept(section_models()[stage].model_validate, sec), stage
    diag = {"severity": "fatal", "code": "c", "message": "m", "blocks": [], "stage": "solve"}
    art = {**doc, "diagnostics": [diag]}
    assert not _fast_accepts(check_artifact, art)
    assert not _models_accept(artifact_model().model_validate, art)


@pytest.mark.parametrize("place", ["terminator", "statement", "matrix"])
@pytest.mark.parametrize("second", [".nan", ".inf", "-.inf", "null", "true", "1.0"])
def test_a_null_twin_is_checked_again(tmp_path, monkeypatch, place, second):
    """Two blocks equal but for one value, the first `null` and the second a value
    orjson would also write as `null` (or one it would not): the second is judged on its
    own, as the models judge it."""

    def block(i: int, value: str) -> str:
        stmt = f"{{cost: {{a: {value if place == 'statement' else 1}}}}}"
        tcost = f", cost: {{a: {value}}}" if place == "terminator" else ""
        matrix = f", transitions: {{a: {{a: 0, b: {value}}}}}" if place == "matrix" else ""
        return (
            f"  - {{id: b{i}, statements: [{stmt}], terminator: {{kind: goto{tcost}, "
            f"successors: [{{block: b{i + 1}{matrix}}}]}}}}\n"
        )

    first = "null" if place != "matrix" else "1"  # a matrix's costs are never null
    text = "version: 1\ntargets: [a, b]\nblocks:\n" + block(0, first) + block(1, second)
    text += "  - {id: b2, terminator: {kind: return}}\n"
    path = tmp_path / "twin.yaml"
    path.write_text(text)
    fast, slow = _both(str(path), monkeypatch)
    assert fast == slow, text
