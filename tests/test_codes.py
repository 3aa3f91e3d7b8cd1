"""The diagnostic codes' registry (`placement_cli/core/codes.py`) against what the tool
raises: a static scan of the source, every example run through the CLI, `placement
codes` itself, and `docs/diagnostics.md`."""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import orjson
from typer.main import get_command

from placement_cli.app.cli import app
from placement_cli.core.code_record import SEVERITIES
from placement_cli.core.codes import CODES, markdown
from tests.conftest import PLAN_EXAMPLES, ROOT, run_cli

PKG = ROOT / "placement_cli"
# Where diagnostics are defined and documented, not raised.
NOT_RAISING = (
    "placement_cli/core/diagnostics.py",
    "placement_cli/core/codes.py",
    "placement_cli/core/rule_codes.py",
    "placement_cli/core/code_record.py",
)

# Codes the scan cannot follow to a literal: `file:function:expression` -> (the codes it
# carries, the file whose string literals they are). A new indirect site fails
# `test_every_code_in_the_source_is_registered` until it is listed here.
INDIRECT: dict[str, tuple[frozenset[str], str]] = {
    # compile_file's warnings carry their code: (code, block, message)
    "placement_cli/frontends/lower/stage.py:lower_body:c": (
        frozenset({"unknown-vertex-path", "unknown-type"}),
        "placement_cli/frontends/lower/compile.py",
    ),
    # check_assignment(...) returns (code, message, blocks), splatted into _no_placement
    "placement_cli/algorithms/fuse.py:fuse:*why": (
        frozenset({"no-assignment"}),
        "placement_cli/algorithms/fuse.py",
    ),
    # the heuristic's `stopped` and the budget's `reason`: the Budget's limits
    "placement_cli/algorithms/solve/driver.py:_solve:stopped": (
        frozenset({"time-limit", "memory-limit"}),
        "placement_cli/algorithms/solve/budget.py",
    ),
    "placement_cli/algorithms/solve/driver.py:_solve:budget.reason": (
        frozenset({"time-limit", "memory-limit"}),
        "placement_cli/algorithms/solve/budget.py",
    ),
    "placement_cli/pipeline/tree_artifact.py:tree_artifact:res.stopped": (
        frozenset({"time-limit", "memory-limit"}),
        "placement_cli/algorithms/tree/dp.py",
    ),
    # lower's rules (lower.excluded records, explain quotes them): op_why, stmt_why and
    # term_why return them
    **{
        f"placement_cli/frontends/lower/rules.py:{site}": (
            frozenset(
                {
                    "no-calls",
                    "no-closures",
                    "no-constants",
                    "no-function-pointers",
                    "equality-unsafe",
                    "serialization-unsafe",
                    "unrepresentable-env-field",
                    "no-env-fields",
                    "whole-argument",
                    "unreadable-argument",
                    "unresolvable-path",
                    "path-not-stored",
                    "unsupported-kind",
                    "effectful",
                    "excluded-operand",
                    "no-return",
                }
            ),
            "placement_cli/frontends/lower/rules.py",
        )
        for site in (
            "exclusions:*why",
            "_param_why:op_why(R, args[k], bits, no_return)",
            "_param_why:'whole-argument' if R.native else 'unreadable-argument'",
        )
    },
    # --diagnostics re-writes a stage's diagnostics and its own records: not raised there
    "placement_cli/app/report.py:diagnostic_records:d['code']": (frozenset(), ""),
    "placement_cli/app/report.py:to_json:self.code": (frozenset(), ""),
    # a warning re-written as an error under --strict: not raised there
    "placement_cli/app/report.py:strict_record:r.code": (frozenset(), ""),
    # the call's own failures (usage, file system, internal, interrupted), by exit code
    "placement_cli/app/report.py:tool_record:TOOL_CODES.get(exit_code, TOOL_CODES[EXIT_INTERNAL])": (
        frozenset({"usage-error", "io-error", "internal-error", "interrupted"}),
        "placement_cli/app/report.py",
    ),
    # every problem of an invalid input (exit 3), a module constant of report.py
    "placement_cli/app/report.py:problem_records:INVALID_INPUT": (
        frozenset({"invalid-input"}),
        "placement_cli/app/report.py",
    ),
}


@dataclass
class _Module:
    path: str
    tree: ast.Module
    parent: dict[ast.AST, ast.AST] = field(default_factory=dict)

    def function(self, node: ast.AST) -> ast.FunctionDef | None:
        while node in self.parent:
            node = self.parent[node]
            if isinstance(node, ast.FunctionDef):
                return node
        return None

    def name_of(self, node: ast.AST) -> str:
        f = self.function(node)
        return f.name if f is not None else "<module>"


@cache
def _modules() -> tuple[_Module, ...]:
    out = []
    for p in sorted(PKG.rglob("*.py")):
        if str(p.relative_to(ROOT)) in NOT_RAISING:
            continue
        m = _Module(str(p.relative_to(ROOT)), ast.parse(p.read_text()))
        for node in ast.walk(m.tree):
            for child in ast.iter_child_nodes(node):
                m.parent[child] = node
        out.append(m)
    return tuple(out)


def _resolve(m: _Module, expr: ast.expr, depth: int = 0) -> tuple[set[str], set[str]]:
    """The string literals `expr` can be (following local assignments and, for a
    parameter, the arguments of the module's calls to its function), and the
    expressions that could not be followed (`file:function:expression`)."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return {expr.value}, set()
    where = f"{m.path}:{m.name_of(expr)}:{ast.unparse(expr)}"
    if not isinstance(expr, ast.Name) or depth > 4:
        return set(), {where}
    func = m.function(expr)
    scope: ast.AST = func if func is not None else m.tree
    values: set[str] = set()
    lost: set[str] = set()
    found = False
    for node in ast.walk(scope):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == expr.id
        ):
            found = True
            v, lo = _resolve(m, node.value, depth + 1)
            values |= v
            lost |= lo
    params = [a.arg for a in func.args.args] if func is not None else []
    if func is not None and expr.id in params:
        found = True
        i = params.index(expr.id)
        for call in ast.walk(m.tree):
            if not (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Name)
                and call.func.id == func.name
            ):
                continue
            star = next((a for a in call.args[: i + 1] if isinstance(a, ast.Starred)), None)
            kw = next((k.value for k in call.keywords if k.arg == expr.id), None)
            if star is not None:
                lost.add(f"{m.path}:{m.name_of(call)}:{ast.unparse(star)}")
            elif i < len(call.args):
                v, lo = _resolve(m, call.args[i], depth + 1)
                values |= v
                lost |= lo
            elif kw is not None:
                v, lo = _resolve(m, kw, depth + 1)
                values |= v
                lost |= lo
    if not found:
        lost.add(where)
    return values, lost


def _raised() -> tuple[dict[str, set[str]], set[str]]:
    """Every code the source raises, with the severities it is raised with (`reason`
    for explain's per-target reasons, dicts without a severity), and what the scan
    could not follow."""
    got: dict[str, set[str]] = defaultdict(set)
    lost_all: set[str] = set()
    for m in _modules():
        for node in ast.walk(m.tree):
            sev: ast.expr | None = None
            code: ast.expr | None = None
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("Diagnostic", "Record")  # Record: app/report.py
            ):
                named = {k.arg: k.value for k in node.keywords}
                sev = node.args[0] if node.args else named.get("severity")
                code = node.args[1] if len(node.args) > 1 else named.get("code")
            elif isinstance(node, ast.Dict):
                keys = {
                    k.value: v
                    for k, v in zip(node.keys, node.values, strict=True)
                    if isinstance(k, ast.Constant)
                }
                if "code" in keys:
                    code, sev = keys["code"], keys.get("severity")
            if code is None:
                continue
            codes, lost = _resolve(m, code)
            for key in lost:
                extra, _ = INDIRECT.get(key, (frozenset({f"<unfollowed {key}>"}), ""))
                codes |= extra
            lost_all |= lost
            if not codes:
                continue  # not a diagnostic (INDIRECT says so)
            sevs, sev_lost = _resolve(m, sev) if sev is not None else ({"reason"}, set())
            assert not sev_lost, sev_lost
            for c in codes:
                got[c] |= sevs
    return dict(got), lost_all


def test_every_code_in_the_source_is_registered_with_its_severities():
    raised, lost = _raised()
    assert lost == set(INDIRECT), "a code the scan cannot follow: list it in INDIRECT"
    unknown = sorted(set(raised) - set(CODES))
    assert not unknown, f"raised but not in placement_cli/core/codes.py: {unknown}"
    for code, sevs in raised.items():
        assert sevs == set(CODES[code].severities), (code, sevs)


def test_every_registered_code_is_raised_somewhere():
    raised, _ = _raised()
    dead = sorted(set(CODES) - set(raised))
    assert not dead, f"registered but raised nowhere: {dead}"


def test_the_indirect_codes_are_literals_of_their_source():
    for key, (codes, source) in INDIRECT.items():
        if not codes:
            continue
        literals = {
            n.value
            for n in ast.walk(ast.parse((ROOT / source).read_text()))
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        }
        assert codes <= literals, (key, codes - literals)


def test_the_scan_follows_a_code_through_a_variable_and_a_parameter():
    """`outcomes.infeasible` picks its code in a variable; islands' `_empty` takes it as a parameter."""
    raised, _ = _raised()
    assert {"infeasible", "pin-infeasible", "no-assignment", "unpriceable-transfer"} <= set(raised)


def test_registry_entries_are_complete():
    for name, c in CODES.items():
        assert c.code == name
        assert c.severities and set(c.severities) <= set(SEVERITIES), name
        assert c.raised_by and c.title and len(c.text) > 80, name
        assert "\n" not in c.title, name
        # An exit code is given exactly for the codes raised as errors.
        assert bool(c.exits) == ("error" in c.severities and name != "assignment-infeasible"), name


def _diagnostic_codes(art: dict) -> list[str]:
    found = [d["code"] for d in art.get("diagnostics", [])]
    found += [d["code"] for d in (art.get("lower") or {}).get("diagnostics", [])]
    return found


def test_every_code_the_examples_raise_is_registered(tmp_path):
    """Every example through the CLI: `run` on the plans and bodies, `tree` on the trees."""
    seen: set[str] = set()
    # One batch (one process) for every plan and body: each input's artifacts are those
    # of its run alone (tests/test_config.py holds a batch to that).
    out = tmp_path / "out"
    names = [str(ex.relative_to(ROOT)) for ex in PLAN_EXAMPLES]
    r = run_cli("run", *names, "--out-dir", str(out), "-j", "1", "--quiet")
    assert r.returncode in (0, 4), r.stderr
    rows = orjson.loads((out / "summary.json").read_bytes())["rows"]
    assert [row["input"] for row in rows] == names, rows
    for row in rows:
        assert row["exit"] in (0, 4), row
        arts = sorted((out / row["name"]).glob("*.json"))
        assert arts, row
        for f in arts:
            seen.update(_diagnostic_codes(orjson.loads(f.read_bytes())))
    for ex in sorted((ROOT / "examples").glob("*tree.yaml")):
        for budget in ("0", "99"):
            r = run_cli("tree", str(ex.relative_to(ROOT)), "--budget", budget, "--quiet")
            assert r.returncode in (0, 4), (ex, r.stderr)
            seen.update(_diagnostic_codes(orjson.loads(r.stdout)))
    r = run_cli("explain", "examples/no_target.yaml", "bb1", "--format", "json", "--quiet")
    assert r.returncode == 0, r.stderr
    for t in orjson.loads(r.stdout)["targets"]:
        seen.update(x["code"] for x in t["reasons"])
    assert {"empty-domain", "infeasible", "no-assignment", "budget-clamped"} <= seen
    assert {"budget-too-small", "unsupported-statement"} <= seen
    assert seen <= set(CODES), sorted(seen - set(CODES))


def test_docs_diagnostics_md_is_generated_from_the_registry():
    """Fails when docs/diagnostics.md is stale: run `make docs`."""
    assert (ROOT / "docs" / "diagnostics.md").read_text() == markdown()


def test_codes_lists_every_code_one_per_line():
    r = run_cli("codes")
    assert r.returncode == 0 and r.stderr == b""
    lines = r.stdout.decode().splitlines()
    assert [ln.split()[0] for ln in lines] == list(CODES)
    for ln, c in zip(lines, CODES.values(), strict=True):
        assert ln.split()[1] == "/".join(c.severities) and ln.endswith(c.title)


def test_codes_code_prints_its_paragraph():
    r = run_cli("codes", "pin-infeasible")
    assert r.returncode == 0 and r.stderr == b""
    text = r.stdout.decode()
    assert text.startswith("pin-infeasible (error; raised by solve): ")
    assert "--pin" in text and "Exit code when it is an error: 4." in text
    assert " ".join(text.split()).count(" ".join(CODES["pin-infeasible"].text.split())) == 1


def test_an_unknown_code_is_a_usage_error_with_the_closest_codes():
    r = run_cli("codes", "pin-infeasable")
    assert r.returncode == 2 and r.stdout == b""
    assert "did you mean 'pin-infeasible'" in r.stderr.decode()
    r = run_cli("codes", "budget")
    assert r.returncode == 2
    assert "'budget-clamped' or 'budget-too-small'" in r.stderr.decode()


def test_codes_json_is_the_registry():
    r = run_cli("codes", "--format", "json")
    assert r.returncode == 0
    assert orjson.loads(r.stdout) == [c.to_json() for c in CODES.values()]
    r = run_cli("codes", "time-limit", "--format", "json")
    assert r.returncode == 0
    got = orjson.loads(r.stdout)
    assert got == CODES["time-limit"].to_json()
    assert got["severities"] == ["error", "warning"] and got["exit_codes"] == [5]


def test_the_code_argument_is_optional():
    sub = get_command(app).commands["codes"]  # type: ignore[attr-defined]
    arg = next(p for p in sub.params if p.name == "code")
    assert not arg.required and arg.default is None


def test_scan_paths_exist():
    for key, (_, source) in INDIRECT.items():
        assert (ROOT / key.split(":")[0]).is_file(), key
        assert not source or Path(ROOT / source).is_file(), key
