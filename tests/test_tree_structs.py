"""A tree file's fast load path (`placement_cli.formats.tree_structs`) agrees with the
strict model (`placement_cli.formats.tree`), byte for byte.

msgspec converts the parsed tree file into `Struct`s without pydantic; whatever it
refuses goes to the model, which gives the messages or accepts after all. So every
input, loaded once as shipped and once with the fast path forced to refuse, must give
the same outcome: acceptance, every error line, the checked input, and the `tree`
artifact's bytes (with the file echoed, `--include-input`, and with a budget and
`--expand-dag`). And what msgspec accepts, the model accepts with the same values.
The example, probed-looking trees with every optional field, random and benchmark
trees, `tree` artifacts that include their input, and their mutations (the fuzz
campaign's `tests/fuzz/gen.py`: fields dropped, renamed, duplicated or replaced by
hostile values: NaN, huge integers, booleans, wrong types), as JSON and YAML.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import msgspec
import orjson
import yaml
from pydantic import ValidationError

from benchmarks.bench_tree import binary_explicit, generate
from placement_cli.core.errors import InputError
from placement_cli.core.io import dumps
from placement_cli.formats import tree_structs
from placement_cli.formats.tree import TreeFile as TreeModel
from placement_cli.ir.tree import read
from placement_cli.ir.tree.options import TreeOptions
from placement_cli.ir.tree.read import load_tree
from placement_cli.pipeline.tree_artifact import tree_artifact
from tests.fuzz.gen import EXAMPLES, mutate, random_tree, serialise

SEED = 20261128
N_MUTANTS = 260


def _probed(r: random.Random) -> dict[str, Any]:
    """A tree as `import sql --probe` and `import --transfer` write one: every optional
    field of every tree model set."""
    doc = random_tree(r)
    engines = doc["engines"]
    doc.update(name="q", estimated=engines[:1], root="n0", budget=r.randint(0, 3))
    for i, nd in enumerate(doc["nodes"]):
        nd.update(op=r.choice(("scan", "join", "agg")), plan_node=i)
        nd["subtree"] = {
            e: {"median": 2.5, "min": 2, "max": 3.25, "runs": r.randint(1, 5)} for e in engines
        }
        if engines and r.random() < 0.3:
            nd["time"][engines[0]] = None  # cannot run there
    doc["transfer"] = {
        "default": {"fixed": 1, "per_row": 0.001, "per_width": 0.5, "per_byte": 1e-6},
        "linear": {engines[0]: {e: {"fixed": 2.5} for e in engines[1:]}},
        "explicit": [
            {"child": nd["id"], "from": engines[0], "to": engines[-1], "cost": 7}
            for nd in doc["nodes"][1:]
            if len(engines) > 1
        ],
        "profile": {"name": "p.json", "sha256": "ab" * 32},
    }
    doc["query"] = {
        "sql": "select 1",
        "substrait": {"relations": [{"root": {"input": {"read": None}}}], "version": {"n": 3}},
        "replanned": engines[-1:],
        "repeat": 3,
        "warmup": 0,
    }
    return doc


def _valid_trees() -> list[dict[str, Any]]:
    r = random.Random(SEED)
    docs = [yaml.safe_load((EXAMPLES / "operator_tree.yaml").read_text())]
    docs += [_probed(r) for _ in range(4)]
    docs += [random_tree(r) for _ in range(20)]
    docs += [generate(60, 3, 1), generate(40, 2, 2, "chain"), binary_explicit(31, 3, 2)]
    return docs


def _base(r: random.Random) -> dict[str, Any]:
    x = r.random()
    if x < 0.2:
        return yaml.safe_load((EXAMPLES / "operator_tree.yaml").read_text())  # type: ignore[no-any-return]
    if x < 0.55:
        return _probed(r)
    return random_tree(r)


def _outcome(path: str) -> tuple[Any, ...]:
    """Everything observable about loading `path` and placing it."""
    try:
        problem = load_tree(path)
    except InputError as exc:
        return ("error", str(exc))
    ex = problem.explicit
    out: list[Any] = [
        repr(tree_structs.dump(problem.file)),  # a budget may be past 64 bits
        repr(tree_structs.dump(problem.file, exclude_defaults=True)),  # execute's
        (problem.prefix, problem.engines, problem.ids, problem.kids, problem.time),
        (problem.root, problem.ref, ex.child.tolist(), ex.src.tolist(), ex.dst.tolist()),
        ex.cost.tolist(),
    ]
    for opts in (
        TreeOptions(include_input=True),
        TreeOptions(include_input=True, budget=2, expand_dag=True),
    ):
        try:
            art, summary = tree_artifact(problem, opts)
        except InputError as exc:
            out.append(("error", str(exc)))
            continue
        try:
            out.append((dumps(art), summary))
        except TypeError as exc:  # an integer past 64 bits that the model took (YAML)
            out.append(("unwritable", str(exc), summary))
    return tuple(out)


def _both(path: str, monkeypatch: Any) -> tuple[Any, Any]:
    fast = _outcome(path)
    with monkeypatch.context() as m:
        m.setattr(read, "convert_tree", lambda _: None)
        slow = _outcome(path)
    return fast, slow


def _model(doc: Any) -> Any:
    try:
        return TreeModel.model_validate(doc)
    except ValidationError:
        return None


def _same(fast: Any, model: Any) -> bool:
    want = msgspec.to_builtins(tree_structs.from_model(model))
    return bool(msgspec.to_builtins(fast) == want)


def _write(tmp: Path, name: str, data: bytes, suffix: str) -> str:
    path = tmp / f"{name}{suffix}"
    path.write_bytes(data)
    return str(path)


def test_valid_trees_take_the_fast_path_with_the_models_values(tmp_path, monkeypatch):
    r = random.Random(SEED + 1)
    loaded = 0
    for i, doc in enumerate(_valid_trees()):
        fast = tree_structs.convert_tree(doc)
        assert fast is not None, (i, str(doc)[:300])
        assert _same(fast, TreeModel.model_validate(doc)), i
        # The models' dump, as the artifact's echo and execute's --tree-out write it.
        model = TreeModel.model_validate(doc)
        for kw in ({"exclude_none": True}, {"exclude_defaults": True}, {}):
            want = model.model_dump(mode="json", by_alias=True, **kw)
            assert orjson.dumps(tree_structs.dump(fast, **kw)) == orjson.dumps(want), (i, kw)
        for fmt in ("json", "yaml"):
            data, suffix = serialise(doc, r, fmt)
            path = _write(tmp_path, f"v{i}", data, suffix or f".{fmt}")
            fast_out, slow_out = _both(path, monkeypatch)
            assert fast_out == slow_out, (i, fmt)
            loaded += fast_out[0] != "error"  # some random trees break a cross-field rule
    assert loaded > 40


def test_mutated_trees_agree_with_the_models(tmp_path, monkeypatch):
    r = random.Random(SEED + 2)
    accepted = refused = loaded = failed = 0
    for i in range(N_MUTANTS):
        doc = mutate(_base(r), r)
        data, suffix = serialise(doc, r)
        fast_out, slow_out = _both(_write(tmp_path, f"m{i}", data, suffix), monkeypatch)
        assert fast_out == slow_out, (i, data[:400])
        if fast_out[0] == "error":
            failed += 1
        else:
            loaded += 1
        # What msgspec accepts, the model accepts with the same values.
        try:
            parsed = orjson.loads(data) if suffix == ".json" else None
        except orjson.JSONDecodeError:
            parsed = None
        if parsed is None:
            continue
        fast = tree_structs.convert_tree(parsed)
        if fast is not None:
            accepted += 1
            model = _model(parsed)
            assert model is not None and _same(fast, model), (i, data[:400])
        else:
            refused += 1
    assert accepted and refused and loaded and failed  # every side was exercised


def test_tree_artifacts_read_back_agree(tmp_path, monkeypatch):
    """A `tree` artifact that includes its input is read from `tree.input` (problems are
    prefixed by it): as written, and with that input mutated."""
    r = random.Random(SEED + 3)
    seen = 0
    for i in range(40):
        doc = _base(r)
        doc.setdefault("budget", 1)
        src = _write(tmp_path, f"t{i}", orjson.dumps(doc), ".json")
        try:
            art, _ = tree_artifact(load_tree(src), TreeOptions(include_input=True))
        except InputError:
            continue
        if i % 2:
            art["tree"]["input"] = mutate(art["tree"]["input"], r)
        try:
            data = dumps(art) if r.random() < 0.7 else dumps(art, "yaml")
        except TypeError:  # the mutation put an integer past 64 bits
            continue
        fast_out, slow_out = _both(_write(tmp_path, f"a{i}", data, ".json"), monkeypatch)
        assert fast_out == slow_out, (i, data[:400])
        seen += 1
    assert seen > 20


def test_hostile_numbers_are_judged_as_the_model_judges_them(tmp_path, monkeypatch):
    """NaN, infinities, integers past 64 bits (a budget orjson reads as a float, a
    count past msgspec's range), booleans for numbers, a hash with a final newline."""
    base = {"version": 1, "engines": ["a", "b"], "nodes": [{"id": "x", "time": {"a": 1}}]}
    cases: list[tuple[str, bytes]] = []
    for field, lit in (
        ("budget", "100000000000000000000"),
        ("budget", "18446744073709551616"),
        ("budget", "true"),
        ("budget", "1.0"),
        ("version", "true"),
        ("version", "1.0"),
    ):
        text = orjson.dumps({**base, field: "ZZ"}).decode().replace('"ZZ"', lit)
        cases.append(("json", text.encode()))
    node_cases = (
        '{"id": "x", "time": {"a": NaN}}',
        '{"id": "x", "time": {"a": 1e999}}',
        '{"id": "x", "rows": true, "time": {"a": 1}}',
        '{"id": "x", "rows": 1' + "0" * 400 + ', "time": {"a": 1}}',
        '{"id": "x", "plan_node": 18446744073709551616, "time": {"a": 1}}',
        '{"id": "x", "plan_node": 9223372036854775808, "time": {"a": 1}}',
        '{"id": "x", "subtree": {"a": {"median": 1, "min": 1, "max": 1, "runs": true}}}',
        '{"id": "x", "subtree": {"a": {"median": 1, "min": 1, "max": 1, "runs": 0}}}',
        '{"id": "x", "plan_node": -1, "time": {"a": -0.0}}',
        '{"id": "", "op": null, "children": [], "time": {"a": null}}',
        '{"id": "x", "subtree": {"a": {"median": 1, "min": 1, "max": 1, "runs": 99999999999999999999999}}}',
    )
    for node in node_cases:
        cases.append(("json", f'{{"version": 1, "engines": ["a"], "nodes": [{node}]}}'.encode()))
        cases.append(("yaml", f"version: 1\nengines: [a]\nnodes: [{node}]\n".encode()))
    sha = '"profile": {"name": "p", "sha256": "' + "a" * 64 + '\\n"}'
    cases.append(
        (
            "json",
            b'{"version": 1, "engines": ["a"], "nodes": [{"id": "x"}], '
            b'"transfer": {' + sha.encode() + b"}}",
        )
    )
    cases.append(
        (
            "json",
            b'{"version": 1, "engines": ["a"], "nodes": [{"id": "x"}], '
            b'"transfer": {' + sha.replace("\\n", "").encode() + b"}}",
        )
    )
    for i, (fmt, data) in enumerate(cases):
        fast_out, slow_out = _both(_write(tmp_path, f"h{i}", data, "." + fmt), monkeypatch)
        assert fast_out == slow_out, (i, data[:300])


def test_a_count_past_64_bits_in_yaml_is_invalid_input_not_a_crash(tmp_path):
    """YAML reads any integer; a count orjson cannot write back (runs, plan_node, the
    probe's repeat and warm-up) is refused where it is read, exit 3 naming the field,
    by both paths (it made `tree --include-input` fail at writing, an internal error)."""
    import subprocess
    import sys

    big = "100000000000000000000000"
    node = "{id: x, time: {a: 1}, subtree: {a: {median: 1, min: 1, max: 1, runs: RUNS}}}"
    for field, text in (
        ("nodes[0].subtree.a.runs", node.replace("RUNS", big)),
        ("nodes[0].plan_node", "{id: x, time: {a: 1}, plan_node: " + big + "}"),
    ):
        src = tmp_path / "t.yaml"
        src.write_text(f"version: 1\nengines: [a]\nbudget: 1\nnodes: [{text}]\n")
        r = subprocess.run(
            [sys.executable, "-m", "placement_cli", "tree", str(src), "--include-input"],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 3, r.stderr
        assert f"{field}: Input should be less than or equal to {2**63 - 1}" in r.stderr
