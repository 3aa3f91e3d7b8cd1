"""The pipe: artifacts read once and checked, piping equal to running the last stage,
tampered sections exit 3 with their path, all-or-nothing writes, statuses."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from typer.testing import CliRunner

from placement_cli.app.cli import app
from placement_cli.formats.artifact import render
from placement_cli.pipeline.run import STAGES, Run, load
from tests.budget import examples
from tests.conftest import PLAN_EXAMPLES, ROOT, run_cli
from tests.strategies import plans

EX = ROOT / "examples/three_targets.yaml"


def _artifact(path: Path, stage: str) -> bytes:
    run = Run(load(str(path)))
    run.run(stage)
    return render(run.artifact(stage))


def _piped(plan: Path, tmp: Path) -> dict[str, bytes]:
    """Each stage reading the previous stage's artifact file, as a shell pipe does."""
    out: dict[str, bytes] = {}
    src = plan
    for stage in STAGES:
        data = _artifact(src, stage)
        out[stage] = data
        src = tmp / f"{stage}.json"
        src.write_bytes(data)
    return out


@pytest.mark.parametrize("example", PLAN_EXAMPLES, ids=lambda p: p.stem)
def test_piping_gives_the_bytes_of_running_the_last_stage(example, tmp_path):
    piped = _piped(example, tmp_path)
    for stage in STAGES:
        assert piped[stage] == _artifact(example, stage), stage


def test_shell_pipe_of_processes_equals_direct_run():
    cmd = "set -o pipefail; " + " | ".join(
        [f"{{py}} -m placement_cli prune {EX}"]
        + [f"{{py}} -m placement_cli {s} -" for s in STAGES[1:]]
    )
    import subprocess
    import sys

    r = subprocess.run(
        ["bash", "-c", cmd.format(py=sys.executable)], capture_output=True, cwd=ROOT, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == run_cli("islands", str(EX)).stdout


@settings(max_examples=examples(60))
@given(plans(max_blocks=6, max_targets=3))
def test_piping_random_plans(plan):
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "plan.json"
        p.write_bytes(orjson.dumps(plan))
        try:
            direct = {s: _artifact(p, s) for s in STAGES}
        except Exception as exc:  # an invalid random plan: the pipe must fail the same way
            assert type(exc).__name__ == "InputError"
            return
        piped = _piped(p, Path(tmp))
        assert piped == direct
        # The normalised plan normalises to itself.
        again = Path(tmp) / "again.json"
        again.write_bytes(orjson.dumps(orjson.loads(direct["prune"])["plan"]))
        assert (
            orjson.loads(_artifact(again, "prune"))["plan"] == orjson.loads(direct["prune"])["plan"]
        )


def _tampered(
    tmp_path: Path, kind: str, edit: Callable[[dict[str, Any]], None], example: Path = EX
) -> tuple[int, str]:
    art = orjson.loads(_artifact(example, kind))
    edit(art)
    f = tmp_path / "t.json"
    f.write_bytes(orjson.dumps(art))
    runner = CliRunner()
    r = runner.invoke(app, ["islands", str(f), "--quiet"])
    return r.exit_code, r.stderr


def _comp_with(art: dict[str, Any], block: str) -> int:
    return next(i for i, c in enumerate(art["scc"]["components"]) if block in c["blocks"])


def _swap_first_two_components(art: dict[str, Any]) -> None:
    comps = art["scc"]["components"]
    comps[0], comps[1] = comps[1], comps[0]


def _move_to_other_target(art: dict[str, Any]) -> None:
    blocks = art["fuse"]["blocks"]
    fb = next(b for b in blocks if len(b["members"]) > 1)
    other = next(b for b in blocks if b["target"] != fb["target"])
    other["members"].append(fb["members"].pop())


def _disconnect_island(art: dict[str, Any]) -> None:
    # i1 runs bb2, bb4, bb6 on the interpreter; bb2 and bb6 are joined only through bb4.
    isl = art["islands"]["islands"][1]
    assert isl["blocks"] == ["bb2", "bb4", "bb6"]
    isl["blocks"] = ["bb2", "bb6"]


TAMPERS: list[tuple[str, str, Callable[[dict[str, Any]], None], str]] = [
    (
        "unknown block in a component",
        "scc",
        lambda a: a["scc"]["components"][0]["blocks"].append("bb99"),
        "scc.components[0].blocks[1]: unknown block 'bb99'",
    ),
    (
        "non-partition",
        "scc",
        lambda a: a["scc"]["components"][1]["blocks"].append(
            a["scc"]["components"][0]["blocks"][0]
        ),
        "not a partition",
    ),
    (
        "block missing from every component",
        "scc",
        lambda a: a["scc"]["components"].pop(),
        "scc.components: not a partition",
    ),
    ("cyclic condensation order", "scc", _swap_first_two_components, "not in topological order"),
    (
        "infeasible assignment",
        "solve",
        lambda a: a["solve"]["assignment"].update(bb2="postgres"),
        "solve.assignment.bb2",
    ),
    (
        "forbidden transition",
        "solve",
        lambda a: a["solve"]["assignment"].update(bb0="interpreter", bb1="postgres"),
        "solve.assignment.bb",
    ),
    (
        "mis-costed assignment",
        "solve",
        lambda a: a["solve"]["cost"].update(total=1),
        "solve.cost.total: is 1, but the assignment costs",
    ),
    (
        "lower bound above cost",
        "solve",
        lambda a: a["solve"].update(lower_bound=10**6),
        "solve.lower_bound",
    ),
    (
        "cost fields of the wrong type",
        "solve",
        lambda a: a["solve"].update(cost={"blocks": "x", "edges": None, "total": -1}),
        "solve.cost.blocks",
    ),
    (
        "lower_bound a string",
        "solve",
        lambda a: a["solve"].update(lower_bound="x"),
        "solve.lower_bound",
    ),
    ("fused blocks across targets", "fuse", _move_to_other_target, "fusion never crosses targets"),
    ("fuse merged count", "fuse", lambda a: a["fuse"].update(merged=999), "fuse.merged"),
    ("fuse.blocks null", "fuse", lambda a: a["fuse"].update(blocks=None), "fuse.blocks"),
    (
        "island not connected",
        "islands",
        _disconnect_island,
        "islands.islands[1].blocks: not connected",
    ),
    (
        "islands.islands [null]",
        "islands",
        lambda a: a["islands"].update(islands=[None]),
        "islands.islands[0]",
    ),
    ("diagnostic a string", "prune", lambda a: a["diagnostics"].append("oops"), "diagnostics[0]"),
    (
        "diagnostic missing fields",
        "prune",
        lambda a: a["diagnostics"].append({"severity": "error"}),
        "diagnostics[0].code",
    ),
    ("prune.removed null", "prune", lambda a: a["prune"].update(removed=None), "prune.removed"),
    (
        "prune removal not removed",
        "prune",
        lambda a: a["prune"]["removed"].append(
            dict(a["prune"]["removed"][0], block="bb0", target="postgres")
        ),
        "prune.removed[1]",
    ),
    ("scc a number", "scc", lambda a: a.update(scc=5), "scc: "),
    (
        "format_version true",
        "prune",
        lambda a: a.update(format_version=True),
        "format_version: unsupported artifact version True",
    ),
    (
        "format_version 1.0",
        "prune",
        lambda a: a.update(format_version=1.0),
        "format_version: unsupported artifact version 1.0",
    ),
    (
        "format_version 1 (old)",
        "prune",
        lambda a: a.update(format_version=1),
        "format_version: unsupported artifact version 1",
    ),
    (
        "status disagrees",
        "solve",
        lambda a: a.update(status="infeasible"),
        "status: is 'infeasible', but the sections say 'ok'",
    ),
    (
        "status unknown",
        "prune",
        lambda a: a.update(status="maybe"),
        "status: expected 'ok' or 'infeasible'",
    ),
    ("section missing", "solve", lambda a: a.pop("scc"), "scc: required section is missing"),
    (
        "unknown matrix name",
        "prune",
        lambda a: a["plan"]["blocks"][0]["terminator"]["successors"][0].update(transitions="nope"),
        "unknown matrix 'nope'",
    ),
]


@pytest.mark.parametrize("name,kind,edit,expected", TAMPERS, ids=[t[0] for t in TAMPERS])
def test_tampered_section_is_exit_3_with_its_path(tmp_path, name, kind, edit, expected):
    code, err = _tampered(tmp_path, kind, edit)
    assert code == 3, err
    assert f"{tmp_path / 't.json'}: " in err
    assert expected in err, err


def test_validate_checks_every_section(tmp_path):
    art = orjson.loads(_artifact(EX, "islands"))
    art["fuse"]["merged"] = 999
    f = tmp_path / "a.json"
    f.write_bytes(orjson.dumps(art))
    r = run_cli("validate", str(f))
    assert r.returncode == 3
    assert b"fuse.merged" in r.stderr
    ok = tmp_path / "ok.json"
    ok.write_bytes(_artifact(EX, "islands"))
    r = run_cli("validate", str(ok))
    assert r.returncode == 0, r.stderr


def test_each_warning_printed_once_across_a_pipe():
    import subprocess
    import sys

    ex = ROOT / "examples/no_target.yaml"
    cmd = " | ".join(
        [f"{{py}} -m placement_cli prune {ex}"]
        + [f"{{py}} -m placement_cli {s} -" for s in STAGES[1:]]
    )
    r = subprocess.run(
        ["bash", "-c", cmd.format(py=sys.executable) + " >/dev/null"],
        capture_output=True,
        cwd=ROOT,
        timeout=120,
    )
    assert r.stderr.decode().count("empty-domain") == 1, r.stderr


def test_run_writes_all_or_nothing(tmp_path, monkeypatch):
    import placement_cli.core.io as artifact

    out = tmp_path / "out"
    real = artifact.os.replace
    calls = []

    def flaky(src: str, dst: Any) -> None:
        calls.append(dst)
        if len(calls) == 3:
            raise PermissionError(13, "Permission denied", str(dst))
        real(src, dst)

    monkeypatch.setattr(artifact.os, "replace", flaky)
    r = CliRunner().invoke(app, ["run", str(EX), "--out-dir", str(out), "--quiet"])
    assert r.exit_code == 6, r.output
    assert "Permission denied" in r.stderr
    assert list(out.iterdir()) == []  # no artifact and no temporary file left


def test_unwritable_output_is_exit_6(tmp_path):
    d = tmp_path / "dir"
    d.mkdir()
    r = run_cli("prune", str(EX), "-o", str(d))
    assert r.returncode == 6, r.stderr
    assert r.stderr.startswith(b"placement: ")


def test_unsolved_status_propagates(monkeypatch, tmp_path):
    """A solve stopped by its limit without an answer: exit 5 and `unsolved` through
    fuse and islands (the solver side sets the status; the pipe must carry it)."""
    import placement_cli.pipeline.stages.solve as stage

    real = stage.solve

    def stopped(*a: Any, **k: Any) -> Any:
        import msgspec

        from placement_cli.core.diagnostics import Diagnostic

        res = real(*a, **k)
        return msgspec.structs.replace(
            res,
            status="unsolved",
            cost=None,
            optimal=False,
            diagnostics=(Diagnostic("error", "time-limit", "stopped"),),
        )

    monkeypatch.setattr(stage, "solve", stopped)
    out = tmp_path / "o"
    r = CliRunner().invoke(app, ["run", str(EX), "--out-dir", str(out), "--quiet"])
    assert r.exit_code == 5, r.output
    for s in ("solve", "fuse", "islands"):
        art = orjson.loads((out / f"{s}.json").read_bytes())
        assert art["status"] == "unsolved", s
    # The unsolved artifact reads back: the next stage says unsolved too.
    r = CliRunner().invoke(app, ["islands", str(out / "solve.json"), "--quiet"])
    assert r.exit_code == 5, r.stderr


def test_help_lists_one_stage_per_line_and_tree_reads_a_tree_file():
    r = run_cli("--help")
    lines = r.stdout.decode().splitlines()
    for s in STAGES:
        assert sum(line.strip().startswith(f"{s} ") for line in lines) == 1, s
    r = run_cli("tree", "--help")
    assert b"Tree file" in r.stdout and b"Plan file or artifact" not in r.stdout


def test_timings_on_stderr():
    r = run_cli("solve", str(EX), "--timings")
    assert r.returncode == 0
    err = r.stderr.decode()
    for phase in ("load", "prune", "scc", "solve", "write"):
        assert f"time: {phase}" in err, err


def test_body_files_go_through_the_lower_front_end(monkeypatch, tmp_path):
    """A mapping with `bodies` is lowered by `placement_cli.frontends.lower.stage.lower_to_plan` (another
    module; faked here) and the pipeline continues with its plan and section."""
    import sys
    import types

    from placement_cli.core.diagnostics import Diagnostic

    seen = []

    def lower_to_plan(
        doc: dict[str, Any], source: str, options: Any = None
    ) -> tuple[dict[str, Any], dict[str, Any], list[Diagnostic]]:
        seen.append((doc, source))
        plan = {
            "version": 1,
            "targets": ["a"],
            "blocks": [{"id": "x", "terminator": {"kind": "return"}}],
        }
        return (
            plan,
            {"bodies": len(doc["bodies"])},
            [Diagnostic("warning", "lowered", "lowered it")],
        )

    fake = types.ModuleType("placement_cli.frontends.lower.stage")
    fake.lower_to_plan = lower_to_plan  # type: ignore[attr-defined]
    fake.LowerOptions = dict  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "placement_cli.frontends.lower.stage", fake)
    f = tmp_path / "body.json"
    f.write_bytes(orjson.dumps({"bodies": [{}, {}]}))
    r = CliRunner().invoke(app, ["solve", str(f)])
    assert r.exit_code == 0, r.output
    assert seen and seen[0][1] == str(f)
    art = orjson.loads(r.stdout)
    assert art["lower"] == {"bodies": 2}
    assert art["solve"]["assignment"] == {"x": "a"}
    assert [d["code"] for d in art["diagnostics"]] == ["lowered"]
    assert "warning: lowered: lowered it" in r.stderr
    # The artifact reads back, lower section and all, and the warning is not repeated.
    g = tmp_path / "solve.json"
    g.write_bytes(r.stdout_bytes)
    r = CliRunner().invoke(app, ["islands", str(g)])
    assert r.exit_code == 0, r.output
    assert orjson.loads(r.stdout)["lower"] == {"bodies": 2}
    assert "lowered" not in r.stderr


def test_progress_only_on_a_terminal(tmp_path):
    """The spinner naming each phase is drawn on a terminal's stderr, never into a pipe."""
    import os
    import pty
    import subprocess
    import sys

    out = tmp_path / "s.json"
    cmd = [
        sys.executable,
        "-m",
        "placement_cli",
        "solve",
        "examples/three_targets.yaml",
        "-o",
        str(out),
    ]
    piped = subprocess.run(cmd, capture_output=True, cwd=ROOT, timeout=120)
    assert piped.returncode == 0 and piped.stderr == b"", piped.stderr
    master, slave = pty.openpty()
    try:
        r = subprocess.run(cmd, stderr=slave, stdout=subprocess.DEVNULL, cwd=ROOT, timeout=120)
        os.close(slave)
        seen = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(master)
    assert r.returncode == 0
    assert b"\x1b[?25l" in seen and b"write" in seen, (
        seen
    )  # the spinner hid the cursor, named the phase
    assert b"solve: 7 blocks" in seen


@pytest.mark.parametrize("where", ["stats", "extra", "diagnostic"])
def test_carried_values_that_cannot_be_written_again_are_exit_3(tmp_path, where):
    """Free-form parts of an artifact (solve stats, extra fields, diagnostics' extras) are
    carried into the next artifact: an integer past 64 bits there (YAML allows it) used
    to pass reading and crash the writer (exit 1, found by the fuzz campaign)."""
    import yaml

    art = orjson.loads(_artifact(EX, "solve"))
    huge = 10**40
    if where == "stats":
        art["solve"]["stats"]["exact"] = {"treewidth": huge}
    elif where == "extra":
        art["solve"]["note"] = [huge]
    else:
        art["diagnostics"].append(
            {
                "severity": "info",
                "code": "x",
                "message": "m",
                "blocks": [],
                "stage": "solve",
                "n": huge,
            }
        )
    f = tmp_path / "t.yaml"
    f.write_text(yaml.safe_dump(art))
    r = CliRunner().invoke(app, ["islands", str(f), "--quiet"])
    assert r.exit_code == 3, r.stderr
    assert "an integer outside the 64-bit range" in r.stderr, r.stderr
