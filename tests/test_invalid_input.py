"""Every class of invalid input: exit code 3 (or 2 for usage) and `FILE: PATH: message`."""

from __future__ import annotations

import copy
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from tests.conftest import ROOT, run_cli

GOOD: dict[str, Any] = {
    "version": 1,
    "targets": ["interp", "pg"],
    "transitions": {"interp": {"interp": 0}, "pg": {"pg": 0, "interp": 3}},
    "paths": {"vertex.name": ["pg"]},
    "blocks": [
        {
            "id": "bb0",
            "params": [],
            "paths": ["vertex.name"],
            "statements": [{"text": "x", "cost": {"interp": 8, "pg": 4}}],
            "terminator": {
                "kind": "switch",
                "successors": [{"block": "bb1", "args": ["a"]}, {"block": "bb2"}],
            },
        },
        {
            "id": "bb1",
            "params": ["p"],
            "terminator": {"kind": "goto", "successors": [{"block": "bb2"}]},
        },
        {"id": "bb2", "terminator": {"kind": "return"}},
    ],
}


def _run_plan(
    tmp_path, plan: Any, suffix: str = ".json", stage: str = "validate"
) -> subprocess.CompletedProcess[bytes]:
    f = tmp_path / f"plan{suffix}"
    if suffix == ".json":
        f.write_bytes(orjson.dumps(plan))
    else:
        f.write_text(plan if isinstance(plan, str) else yaml.safe_dump(plan))
    return run_cli(stage, str(f))


def _mutate(fn) -> dict[str, Any]:
    p = copy.deepcopy(GOOD)
    fn(p)
    return p


def test_good_plan_validates(tmp_path):
    r = _run_plan(tmp_path, GOOD)
    assert r.returncode == 0, r.stderr
    assert b"ok: 3 blocks, 3 edges, 2 targets" in r.stderr


CASES = [
    (
        "unknown successor block",
        lambda p: p["blocks"][0]["terminator"]["successors"][1].update(block="bb9"),
        "blocks[0].terminator.successors[1].block: unknown block 'bb9'",
    ),
    (
        "duplicate block id",
        lambda p: p["blocks"][2].update(id="bb1"),
        "blocks[2].id: duplicate block id 'bb1'",
    ),
    (
        "duplicate target",
        lambda p: p.update(targets=["interp", "interp"]),
        "targets[1]: duplicate target 'interp'",
    ),
    (
        "args/params mismatch",
        lambda p: p["blocks"][0]["terminator"]["successors"][0].update(args=[]),
        "blocks[0].terminator.successors[0].args: block 'bb1' takes 1 argument(s), got 0",
    ),
    (
        "non-zero diagonal",
        lambda p: p["transitions"]["pg"].update(pg=2),
        "transitions.pg.pg: a same-target transition costs 0",
    ),
    (
        "goto with two successors",
        lambda p: p["blocks"][1]["terminator"]["successors"].append({"block": "bb2"}),
        "blocks[1].terminator.successors: a 'goto' terminator has exactly 1 successor(s), got 2",
    ),
    (
        "return with a successor",
        lambda p: p["blocks"][2]["terminator"].update(successors=[{"block": "bb0"}]),
        "blocks[2].terminator.successors: a 'return' terminator has exactly 0 successor(s), got 1",
    ),
    (
        "switch without successors",
        lambda p: p["blocks"][0]["terminator"].update(successors=[]),
        "blocks[0].terminator.successors: a 'switch' terminator has at least 1 successor(s), got 0",
    ),
    (
        "negative cost",
        lambda p: p["blocks"][0]["statements"][0]["cost"].update(pg=-1),
        "blocks[0].statements[0].cost.pg: Input should be greater than or equal to 0",
    ),
    (
        "unknown path",
        lambda p: p["blocks"][0].update(paths=["vertex.nope"]),
        "blocks[0].paths[0]: unknown path 'vertex.nope'",
    ),
    (
        "unknown target in statement",
        lambda p: p["blocks"][0]["statements"][0]["cost"].update(gpu=1),
        "blocks[0].statements[0].cost.gpu: unknown target 'gpu'",
    ),
    (
        "unknown target in domain",
        lambda p: p["blocks"][1].update(domain=["gpu"]),
        "blocks[1].domain[0]: unknown target 'gpu'",
    ),
    (
        "unknown target in edge matrix",
        lambda p: p["blocks"][1]["terminator"]["successors"][0].update(
            transitions={"gpu": {"pg": 1}}
        ),
        "blocks[1].terminator.successors[0].transitions.gpu: unknown target 'gpu'",
    ),
    (
        "unknown target in premium",
        lambda p: p["blocks"][1].update(premium={"gpu": 1}),
        "blocks[1].premium.gpu: unknown target 'gpu'",
    ),
    (
        "unknown path origin",
        lambda p: p["paths"].update({"v.x": ["gpu"]}),
        "paths.v.x[0]: unknown target 'gpu'",
    ),
    ("unknown entry", lambda p: p.update(entry="bb7"), "entry: unknown block 'bb7'"),
    (
        "missing terminator",
        lambda p: p["blocks"][2].pop("terminator"),
        "blocks[2].terminator: required field is missing",
    ),
    (
        "unknown field",
        lambda p: p["blocks"][2].update(colour="red"),
        "blocks[2].colour: unknown field",
    ),
    (
        "bad terminator kind",
        lambda p: p["blocks"][2]["terminator"].update(kind="jump"),
        "blocks[2].terminator.kind: Input should be",
    ),
    ("wrong version", lambda p: p.update(version=2), "version: Input should be 1"),
    ("no targets", lambda p: p.update(targets=[]), "targets: List should have at least 1 item"),
    (
        "too many targets",
        lambda p: p.update(targets=[f"t{i}" for i in range(65)]),
        "targets: List should have at most 64 items",
    ),
    ("no blocks", lambda p: p.update(blocks=[]), "blocks: List should have at least 1 item"),
    (
        "cost is a string",
        lambda p: p["blocks"][0]["statements"][0]["cost"].update(pg="4"),
        "blocks[0].statements[0].cost.pg: Input should be a valid number",
    ),
    (
        "cost is a bool",
        lambda p: p["blocks"][0]["statements"][0]["cost"].update(pg=True),
        "blocks[0].statements[0].cost.pg: Input should be a valid number",
    ),
]


@pytest.fixture(scope="module")
def invalid_plans(tmp_path_factory) -> tuple[dict[str, Path], str]:
    """Every case of CASES as its own plan.json, validated by one process (`validate`
    reads each input on its own; a batch's exit is its worst input's): case -> file, and
    what the process wrote on stderr."""
    base = tmp_path_factory.mktemp("invalid")
    files = {}
    for i, (name, mutate, _) in enumerate(CASES):
        (base / str(i)).mkdir()
        files[name] = base / str(i) / "plan.json"
        files[name].write_bytes(orjson.dumps(_mutate(mutate)))
    r = run_cli("validate", "-j", "1", *map(str, files.values()))
    assert r.returncode == 3, r.stderr
    assert b"Traceback" not in r.stderr
    return files, r.stderr.decode()


@pytest.mark.parametrize("name,mutate,expected", CASES, ids=[c[0] for c in CASES])
def test_invalid_plan(invalid_plans, name, mutate, expected):
    files, err = invalid_plans
    mine = [line for line in err.splitlines() if line.startswith(f"{files[name]}: ")]
    want = f"{files[name]}: {expected}"
    assert any(line.startswith(want) for line in mine), (want, mine)
    # An input with a problem is never `ok` (its exit is the batch's 3: the fixture).
    assert not any(line.startswith(f"{files[name]}: ok: ") for line in mine), mine


def test_one_invalid_plan_alone_is_exit_3_and_its_line(tmp_path):
    """The cases above share one process; one of them alone, as a process of its own."""
    name, mutate, expected = CASES[0]
    r = _run_plan(tmp_path, _mutate(mutate))
    assert r.returncode == 3, (name, r.stderr)
    want = f"{tmp_path / 'plan.json'}: {expected}"
    assert any(line.startswith(want) for line in r.stderr.decode().splitlines()), r.stderr
    assert b"Traceback" not in r.stderr


def test_all_problems_reported_at_once(tmp_path):
    def two(p):
        p["blocks"][0]["terminator"]["successors"][1]["block"] = "bb9"
        p["blocks"][2]["id"] = "bb1"

    r = _run_plan(tmp_path, _mutate(two))
    assert r.returncode == 3
    err = r.stderr.decode()
    assert "unknown block 'bb9'" in err and "duplicate block id 'bb1'" in err


def test_invalid_json_syntax(tmp_path):
    f = tmp_path / "p.json"
    f.write_bytes(b'{"version": 1, "targets": [')
    r = run_cli("prune", str(f))
    assert r.returncode == 3
    assert r.stderr.decode().startswith(f"{f}: invalid JSON")


def test_invalid_yaml_syntax(tmp_path):
    r = _run_plan(tmp_path, "version: 1\ntargets: [a, b\n", suffix=".yaml")
    assert r.returncode == 3
    assert "invalid YAML" in r.stderr.decode()


def test_yaml_11_surprises_are_caught(tmp_path):
    # YAML is read with the 1.2 core schema: `no` is the string "no" (as written, not
    # YAML 1.1's False) and `012` the int 12, which the strict model rejects as an id.
    text = "version: 1\ntargets: [interp]\nblocks:\n  - id: no\n    terminator: {kind: return}\n"
    r = _run_plan(tmp_path, text, suffix=".yaml", stage="prune")
    assert r.returncode == 0, r.stderr
    assert orjson.loads(r.stdout)["plan"]["blocks"][0]["id"] == "no"
    r = _run_plan(tmp_path, text.replace("id: no", "id: 012"), suffix=".yaml")
    assert r.returncode == 3
    assert "blocks[0].id: Input should be a valid string (got int 12)" in r.stderr.decode()


@pytest.mark.parametrize("value", [".nan", ".inf"])
def test_non_finite_costs_rejected(tmp_path, value):
    text = (
        "version: 1\ntargets: [interp]\nblocks:\n  - id: bb0\n    cost: {interp: " + value + "}\n"
        "    terminator: {kind: return}\n"
    )
    r = _run_plan(tmp_path, text, suffix=".yaml")
    assert r.returncode == 3
    assert "blocks[0].cost.interp: Input should be a finite number" in r.stderr.decode()


def test_nan_in_json_rejected(tmp_path):
    f = tmp_path / "p.json"
    f.write_bytes(
        b'{"version": 1, "targets": ["a"], "blocks": [{"id": "b", "cost": {"a": NaN}, "terminator": {"kind": "return"}}]}'
    )
    r = run_cli("validate", str(f))
    assert r.returncode == 3
    assert b"blocks[0].cost.a" in r.stderr


def test_top_level_not_a_mapping(tmp_path):
    r = _run_plan(tmp_path, "- 1\n- 2\n", suffix=".yaml")
    assert r.returncode == 3
    assert "a plan file is a mapping" in r.stderr.decode()


def test_artifact_errors_have_plan_prefix(tmp_path):
    art = orjson.loads(run_cli("prune", str(ROOT / "examples/three_targets.yaml")).stdout)
    art["plan"]["blocks"][0]["terminator"]["successors"][0]["block"] = "nowhere"
    f = tmp_path / "a.json"
    f.write_bytes(orjson.dumps(art))
    r = run_cli("scc", str(f))
    assert r.returncode == 3
    assert (
        f"{f}: plan.blocks[0].terminator.successors[0].block: unknown block 'nowhere'"
        in r.stderr.decode()
    )


@pytest.mark.parametrize(
    "patch,expected",
    [
        ({"format_version": 9}, "format_version: unsupported artifact version 9"),
        ({"kind": "bake"}, "kind: not an artifact this tool reads"),
        ({"status": "maybe"}, "status: expected 'ok' or 'infeasible'"),
    ],
)
def test_bad_artifact_envelope(tmp_path, patch, expected):
    art = orjson.loads(run_cli("prune", str(ROOT / "examples/three_targets.yaml")).stdout)
    art.update(patch)
    f = tmp_path / "a.json"
    f.write_bytes(orjson.dumps(art))
    r = run_cli("scc", str(f))
    assert r.returncode == 3
    assert f"{f}: {expected}" in r.stderr.decode()


def test_bad_prune_section_in_artifact(tmp_path):
    art = orjson.loads(run_cli("prune", str(ROOT / "examples/three_targets.yaml")).stdout)
    art["prune"]["domains"]["bb2"] = ["postgres"]  # bb2 cannot run on postgres at all
    f = tmp_path / "a.json"
    f.write_bytes(orjson.dumps(art))
    r = run_cli("scc", str(f))
    assert r.returncode == 3
    assert "prune.domains.bb2: not a subset of the block's domain" in r.stderr.decode()


def test_missing_file_is_usage_error(tmp_path):
    r = run_cli("prune", str(tmp_path / "nope.yaml"))
    assert r.returncode == 2
    assert b"no such file" in r.stderr


def test_unknown_flag_is_usage_error():
    r = run_cli("prune", "--frobnicate", "x")
    assert r.returncode == 2


def test_dash_on_a_terminal_is_usage_error():
    master, slave = pty.openpty()
    try:
        r = subprocess.run(
            [sys.executable, "-m", "placement_cli", "prune", "-"],
            stdin=slave,
            capture_output=True,
            timeout=30,
            cwd=ROOT,
        )
    finally:
        os.close(master)
        os.close(slave)
    assert r.returncode == 2
    assert b"standard input, which is a terminal" in r.stderr


def test_failed_run_leaves_no_output_file(tmp_path):
    out = tmp_path / "out.json"
    out.write_bytes(b"previous\n")
    r = _run_plan(tmp_path, _mutate(lambda p: p.update(entry="zz")), stage="prune")
    assert r.returncode == 3
    r = run_cli("prune", str(tmp_path / "plan.json"), "-o", str(out))
    assert r.returncode == 3
    assert out.read_bytes() == b"previous\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.json")]


def test_closed_pipe_is_not_a_traceback():
    cmd = f"{sys.executable} -m placement_cli prune examples/three_targets.yaml | head -c 10 >/dev/null"
    r = subprocess.run(
        ["bash", "-o", "pipefail", "-c", cmd], capture_output=True, cwd=ROOT, timeout=60
    )
    assert b"Traceback" not in r.stderr
    assert b"BrokenPipe" not in r.stderr


def test_version_and_help():
    r = run_cli("--version")
    assert r.returncode == 0 and r.stdout.startswith(b"placement ")
    r = run_cli("--help")
    assert r.returncode == 0
    out = r.stdout.decode()
    for word in (
        "prune",
        "scc",
        "solve",
        "fuse",
        "islands",
        "run",
        "tree",
        "Exit codes",
        "placement prune plan.yaml | placement scc -",
    ):
        assert word in out


@pytest.mark.parametrize(
    "patch,expected",
    [
        (lambda s: s["assignment"].update(bb2="postgres"), "solve.assignment.bb2"),
        (lambda s: s["assignment"].update(bb9="interpreter"), "solve.assignment.bb9"),
        (lambda s: s["assignment"].pop("bb3"), "solve.assignment.bb3"),
    ],
    ids=["target outside the domain", "unknown block", "missing block"],
)
def test_bad_solve_section_in_artifact(tmp_path, patch, expected):
    art = orjson.loads(run_cli("solve", str(ROOT / "examples/three_targets.yaml")).stdout)
    patch(art["solve"])
    f = tmp_path / "a.json"
    f.write_bytes(orjson.dumps(art))
    r = run_cli("fuse", str(f))
    assert r.returncode == 3, r.stderr
    assert f"{f}: {expected}" in r.stderr.decode()


def test_negative_time_limit_is_usage_error():
    r = run_cli("solve", "examples/three_targets.yaml", "--time-limit", "-1")
    assert r.returncode == 2


# --------------------------------------------------------------------------- hostile input

_TAIL = "targets: [t]\nblocks: [{id: b, terminator: {kind: return}}]\n"


def _yaml_file(tmp_path, text: str, name: str = "p.yaml"):
    f = tmp_path / name
    f.write_text(text)
    return f


def _bomb(levels: int = 9) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("where", ["unused key", "name"])
def test_alias_bomb_refused_at_once(tmp_path, where):
    if where == "name":
        text = _bomb() + "version: 1\nname: *a9\n" + _TAIL
    else:
        text = (
            "version: 1\n"
            + _TAIL
            + "zz:\n"
            + "".join("  " + ln + "\n" for ln in _bomb().splitlines())
        )
    f = _yaml_file(tmp_path, text)
    for cmd in ("validate", "solve"):
        r = run_cli(cmd, str(f))
        assert r.returncode == 3, r.stderr
        assert "aliases expand to more than" in r.stderr.decode()


def test_ordinary_aliases_still_work(tmp_path):
    text = "version: 1\ntargets: [t, u]\nm: &m {t: {t: 0}}\n"
    text = (
        "version: 1\ntargets: [t, u]\nblocks:\n"
        "  - {id: a, terminator: {kind: goto, successors: [{block: b, transitions: &m {t: {t: 0}, u: {u: 0}}}]}}\n"
        "  - {id: b, terminator: {kind: goto, successors: [{block: c, transitions: *m}]}}\n"
        "  - {id: c, terminator: {kind: return}}\n"
    )
    r = run_cli("validate", str(_yaml_file(tmp_path, text)))
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("depth", [150, 990, 5000])
@pytest.mark.parametrize("fmt", ["yaml", "json", "artifact"])
def test_deep_nesting_is_invalid_input(tmp_path, depth, fmt):
    deep = "[" * depth + "]" * depth
    if fmt == "yaml":
        f = _yaml_file(tmp_path, "version: 1\nname: " + deep + "\n" + _TAIL)
    elif fmt == "json":
        f = tmp_path / "p.json"
        f.write_text('{"version": 1, "name": ' + deep + "}")
    else:
        # A valid artifact carrying a deep value where nothing validates it.
        art = orjson.loads(run_cli("prune", str(ROOT / "examples/three_targets.yaml")).stdout)
        art["zz"] = "DEEP"
        f = tmp_path / "a.json"
        f.write_bytes(orjson.dumps(art).replace(b'"DEEP"', deep.encode()))
    for cmd in ("validate", "prune"):
        r = run_cli(cmd, str(f))
        assert r.returncode == 3, r.stderr[-500:]
        assert b"Traceback" not in r.stderr and b"Recursion" not in r.stderr


def test_recursive_alias_refused(tmp_path):
    f = _yaml_file(tmp_path, "version: 1\nname: &a [*a]\n" + _TAIL)
    r = run_cli("validate", str(f))
    assert r.returncode == 3
    assert "alias *a refers to its own node" in r.stderr.decode()


@pytest.mark.parametrize(
    "text,expected",
    [
        (
            "name: !!python/object/apply:os.system ['echo pwned']\n",
            "tag !!python/object/apply:os.system is not allowed",
        ),
        ("name: !!binary aGVsbG8=\n", "tag !!binary is not allowed"),
        ("name: !custom x\n", "tag !custom is not allowed"),
        ("name: a\nname: b\n", "duplicate key 'name'"),
    ],
)
def test_yaml_tags_and_duplicate_keys_refused(tmp_path, text, expected):
    r = run_cli("validate", str(_yaml_file(tmp_path, "version: 1\n" + text + _TAIL)))
    assert r.returncode == 3
    assert expected in r.stderr.decode()
    assert b"pwned" not in r.stdout + r.stderr


def _cost_plan(value: str) -> str:
    return f"version: 1\ntargets: [t]\nblocks: [{{id: b, cost: {{t: {value}}}, terminator: {{kind: return}}}}]\n"


@pytest.mark.parametrize(
    "value,ok",
    [
        ("1e3", True),
        ("0o17", True),
        ("012", True),
        ("1:30", False),
        ("1_000", False),
        (".inf", False),
        ("0x1F", True),
    ],
)
def test_yaml_numbers_read_as_yaml_12_core(tmp_path, value, ok):
    r = run_cli("prune", str(_yaml_file(tmp_path, _cost_plan(value))))
    assert r.returncode == (0 if ok else 3), r.stderr
    if ok:
        want = {"1e3": 1000, "0o17": 15, "012": 12, "0x1F": 31}[value]
        assert orjson.loads(r.stdout)["plan"]["blocks"][0]["cost"] == {"t": want}


def test_yaml_11_sexagesimal_id_is_an_error(tmp_path):
    # `1:30` was the int 90 in YAML 1.1: as a string it is a valid id, as a cost an error.
    r = run_cli("validate", str(_yaml_file(tmp_path, _cost_plan("1:30"))))
    assert "blocks[0].cost.t: Input should be a valid number (got str '1:30')" in r.stderr.decode()


def test_byte_order_mark_accepted_from_file_and_stdin(tmp_path):
    body = b'\xef\xbb\xbf{"version": 1, "targets": ["t"], "blocks": [{"id": "b", "terminator": {"kind": "return"}}]}'
    f = tmp_path / "p.json"
    f.write_bytes(body)
    from_file = run_cli("prune", str(f))
    from_stdin = run_cli("prune", "-", stdin=body)
    assert from_file.returncode == from_stdin.returncode == 0, (from_file.stderr, from_stdin.stderr)
    assert from_file.stdout == from_stdin.stdout


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_endless_input_stops_at_the_size_cap(tmp_path, how):
    env = {"PLACEMENT_MAX_INPUT_BYTES": "1000000"}
    if how == "file":
        r = run_cli("validate", "/dev/zero", env=env)
    else:
        cmd = f"yes | {sys.executable} -m placement_cli validate -"
        full = dict(os.environ, **env)
        r = subprocess.run(["bash", "-c", cmd], capture_output=True, cwd=ROOT, timeout=60, env=full)
    assert r.returncode == 3, r.stderr
    assert "input larger than the limit of 1000000 bytes" in r.stderr.decode()


def test_size_cap_applies_to_regular_files(tmp_path):
    f = tmp_path / "p.json"
    f.write_bytes(orjson.dumps(GOOD))
    assert (
        run_cli(
            "validate", str(f), env={"PLACEMENT_MAX_INPUT_BYTES": str(f.stat().st_size)}
        ).returncode
        == 0
    )
    r = run_cli("validate", str(f), env={"PLACEMENT_MAX_INPUT_BYTES": str(f.stat().st_size - 1)})
    assert r.returncode == 3
    assert r.stderr.decode().startswith(f"{f}: input larger than the limit")


def test_bad_size_cap_is_usage_error(tmp_path):
    r = run_cli(
        "validate",
        str(ROOT / "examples/three_targets.yaml"),
        env={"PLACEMENT_MAX_INPUT_BYTES": "lots"},
    )
    assert r.returncode == 2
    assert b"PLACEMENT_MAX_INPUT_BYTES must be a positive number" in r.stderr


def test_control_characters_in_ids_cannot_split_lines(tmp_path):
    plan = _mutate(
        lambda p: p["blocks"][0]["terminator"]["successors"][1].update(
            block="bb9\nfake.json: ok\x1b[2J"
        )
    )
    plan["blocks"][2]["id"] = "x\u2028y"
    plan["blocks"][1]["terminator"]["successors"][0]["block"] = "x\u2028y"
    plan["paths"]["a\nb"] = []
    r = _run_plan(tmp_path, plan)
    assert r.returncode == 3
    lines = r.stderr.decode().split("\n")[:-1]
    src = str(tmp_path / "plan.json")
    assert lines and all(line.startswith(src + ": ") for line in lines), lines
    assert "unknown block 'bb9\\nfake.json: ok\\x1b[2J'" in r.stderr.decode()
    assert b"\x1b" not in r.stderr and "\u2028".encode() not in r.stderr


def test_messages_never_format_the_whole_value(tmp_path):
    # A 2-million-element list where a string belongs: the message shows a prefix, fast.
    f = tmp_path / "p.json"
    f.write_bytes(
        b'{"version": 1, "name": [' + b"1," * 2_000_000 + b'1], "targets": ["t"], '
        b'"blocks": [{"id": "b", "terminator": {"kind": "return"}}]}'
    )
    r = run_cli("validate", str(f))
    assert r.returncode == 3
    line = r.stderr.decode().strip()
    assert line.startswith(f"{f}: name: Input should be a valid string (got list [1, 1, 1")
    assert len(line) < len(str(f)) + 120


def test_problem_values_are_formatted_only_as_far_as_printed():
    # A structure shared 10^9 times over (what a YAML alias bomb builds): its full repr
    # would take minutes and gigabytes; the message must come at once.
    import signal

    from pydantic import BaseModel, ValidationError

    from placement_cli.pipeline.run import validation_problems

    class M(BaseModel):
        name: str

    bomb: list = ["x"] * 10
    for _ in range(9):
        bomb = [bomb] * 10

    def too_slow(*_):
        raise TimeoutError("the message formatted the whole value")

    old = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(10)
    try:
        with pytest.raises(ValidationError) as info:
            M.model_validate({"name": bomb})
        problems = validation_problems(info.value)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert [p.message for p in problems] == [
        "Input should be a valid string (got list [[[[[[[[[['x', 'x', 'x', 'x', 'x', 'x',…)"
    ]


@pytest.mark.parametrize(
    "cost,edge",
    [("1.0e+308", "0"), ("6.0e+299", "0"), ("1", "1.0e+308")],
    ids=["two huge blocks", "sum just above the limit", "huge transition"],
)
def test_costs_that_could_overflow_are_invalid(tmp_path, cost, edge):
    text = (
        "version: 1\ntargets: [t, u]\nblocks:\n"
        f"  - {{id: a, cost: {{t: {cost}, u: 1}}, terminator: {{kind: goto, successors: [{{block: b, transitions: {{t: {{t: 0, u: {edge}}}, u: {{u: 0}}}}}}]}}}}\n"
        f"  - {{id: b, cost: {{t: {cost}, u: 1}}, terminator: {{kind: return}}}}\n"
    )
    f = _yaml_file(tmp_path, text)
    for cmd in ("validate", "solve"):
        r = run_cli(cmd, str(f))
        assert r.returncode == 3, r.stderr
        assert f"{f}: costs too large: the objective could exceed 1e+300" in r.stderr.decode()


def test_large_costs_below_the_limit_are_fine(tmp_path):
    text = "version: 1\ntargets: [t]\nblocks: [{id: a, cost: {t: 4.0e+299}, terminator: {kind: return}}]\n"
    r = run_cli("solve", str(_yaml_file(tmp_path, text)))
    assert r.returncode == 0, r.stderr
    assert orjson.loads(r.stdout)["solve"]["cost"]["total"] == 4e299


# --------------------------------------------------------------------------- file-system errors (exit 6)

PLAN = str(ROOT / "examples/three_targets.yaml")


def _io_failure(r, path) -> None:
    assert r.returncode == 6, (r.returncode, r.stderr)
    err = r.stderr.decode()
    assert err.startswith(f"placement: {path}: ") and err.count("\n") == 1, err
    assert b"Traceback" not in r.stderr


def test_output_naming_a_directory(tmp_path):
    r = run_cli("prune", PLAN, "-o", str(tmp_path))
    _io_failure(r, tmp_path)
    assert "is a directory" in r.stderr.decode()
    assert list(tmp_path.iterdir()) == []


def test_output_below_a_regular_file(tmp_path):
    (tmp_path / "f").write_bytes(b"")
    r = run_cli("prune", PLAN, "-o", str(tmp_path / "f" / "a.json"))
    _io_failure(r, tmp_path / "f" / "a.json")
    assert "a file is in the way" in r.stderr.decode()


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_output_into_a_read_only_directory(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    try:
        r = run_cli("prune", PLAN, "-o", str(d / "a.json"))
    finally:
        d.chmod(0o700)
    _io_failure(r, d / "a.json")
    assert "Permission denied" in r.stderr.decode()


def test_output_into_a_read_only_file_system(tmp_path):
    # Works as root too: /proc/sys is read-only for everyone who is not a kernel.
    if not os.path.isdir("/proc/sys"):
        pytest.skip("no /proc")
    r = run_cli("prune", PLAN, "-o", "/proc/sys/placement-test.json")
    _io_failure(r, "/proc/sys/placement-test.json")


def test_out_dir_naming_a_file(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"")
    r = run_cli("run", PLAN, "--out-dir", str(f))
    _io_failure(r, f / "prune.json")
    r = run_cli("schema", "--out-dir", str(f))
    assert r.returncode == 6 and str(f) in r.stderr.decode()


def test_unreadable_input(tmp_path):
    path = "/proc/self/mem"  # exists, and reading it at offset 0 fails (EIO), even as root
    if not os.path.exists(path):
        pytest.skip("no /proc")
    for cmd in ("validate", "prune", "tree"):
        _io_failure(run_cli(cmd, path), path)


def test_a_directory_without_inputs_is_a_usage_error(tmp_path):
    """A directory is many inputs (app/batch.py); one with none of them is exit 2."""
    for cmd in ("validate", "prune", "tree"):
        r = (
            run_cli(cmd, str(tmp_path), "--out-dir", str(tmp_path / "out"))
            if cmd != "validate"
            else run_cli(cmd, str(tmp_path))
        )
        assert r.returncode == 2, (cmd, r.stderr)
        assert str(tmp_path) in r.stderr.decode() and b"Traceback" not in r.stderr


def test_writing_to_a_full_stdout(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with open("/dev/full", "wb") as full:
        r = subprocess.run(
            [sys.executable, "-m", "placement_cli", "prune", PLAN],
            stdout=full,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            timeout=60,
        )
    assert r.returncode == 6, r.stderr
    assert r.stderr.decode().startswith("placement: <stdout>: No space left on device")


@pytest.mark.parametrize("value", ["1" + "0" * 20, "1" + "0" * 400])
@pytest.mark.parametrize("suffix", [".json", ".yaml"])
@pytest.mark.parametrize("command", ["fuse", "show", "diff"])
def test_an_artifact_number_the_writer_cannot_write_is_refused_where_read(
    tmp_path, value, suffix, command
):
    # Found by the fuzz campaign: `solve.gap` as a 400-digit integer crashed every reader of
    # the artifact (pydantic's finiteness check overflows), and as 10**20 the next stage's
    # writer (orjson writes at most 64 bits). Both are now exit 3 at the field.
    good = tmp_path / "solve.json"
    assert (
        run_cli("solve", str(ROOT / "examples/three_targets.yaml"), "-o", str(good)).returncode == 0
    )
    text = good.read_text()
    doc = orjson.loads(text)
    doc["solve"]["gap"] = "GAP"
    if suffix == ".json":
        data = orjson.dumps(doc).decode().replace('"GAP"', value)
    else:
        data = yaml.safe_dump(doc).replace("gap: GAP", f"gap: {value}")
    bad = tmp_path / f"bad{suffix}"
    bad.write_text(data)
    args = {
        "fuse": ["fuse", str(bad), "-o", str(tmp_path / "out.json")],
        "show": ["show", str(bad), "-o", str(tmp_path / "out.txt")],
        "diff": ["diff", str(bad), str(good)],
    }[command]
    r = run_cli(*args)
    assert r.returncode == 3, r.stderr
    assert r.stderr.decode().endswith(
        f"{bad}: solve.gap: integer too large (at most 64 bits; "
        "write a larger value as a float, e.g. 1e20)\n"
    )
    assert not (tmp_path / "out.json").exists() and not (tmp_path / "out.txt").exists()
