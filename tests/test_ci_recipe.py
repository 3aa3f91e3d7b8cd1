"""The README's CI job, run as written: its `placement` steps are read from the README
(the one copy of the recipe, so the two cannot drift) and run with bash on a folder of
the examples, against golden artifacts copied from `tests/goldens/`; every output is
checked: annotations that name a file and a line, goldens equal byte for byte, one
SARIF log valid against the official 2.1.0 schema."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from placement_cli.pipeline.registry import STAGES
from tests.conftest import EXAMPLES, ROOT
from tests.sarif_check import invocation, results, sarif_log, uri_of

# The examples the job places: the batch's folder name -> the golden folder's.
PLACED = {
    "three_targets.yaml": "three_targets",
    "nested_loops.yaml": "nested_loops",
    "loop_alternating.yaml": "loop_alternating",
    "filter.body.yaml": "filter.body",
}
BAD = "version: 1\ntargets: [a]\nblocks:\n  - id: x\n    terminator: {kind: goto, successors: [{block: nope}]}\n"


def recipe() -> dict[str, Any]:
    """The workflow of the README's "A CI job" section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### A CI job", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block, "the CI job section has no yaml block"
    doc = yaml.safe_load(block.group(1))
    assert isinstance(doc, dict)
    return doc


def placement_steps() -> list[dict[str, Any]]:
    (job,) = recipe()["jobs"].values()
    return [s for s in job["steps"] if "run" in s and "placement " in s["run"]]


def _stem(name: str) -> str:
    return name.split(".")[0]


def _project(tmp_path: Path) -> Path:
    """A project as the recipe expects it: queries/ and the golden artifacts."""
    (tmp_path / "queries").mkdir()
    for name, golden in PLACED.items():
        shutil.copy(EXAMPLES / name, tmp_path / "queries" / name)
        (tmp_path / "golden" / _stem(name)).mkdir(parents=True)
        for stage in STAGES:
            src = ROOT / "tests" / "goldens" / golden / f"{stage}.json"
            shutil.copy(src, tmp_path / "golden" / _stem(name) / f"{stage}.json")
    return tmp_path


def _run_steps(cwd: Path) -> list[subprocess.CompletedProcess[str]]:
    """Every `placement` step, in order, as the runner would (bash -e, the tool on PATH,
    the next step run whatever the last one's exit: `if: !cancelled()`)."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    out = []
    for i, step in enumerate(placement_steps()):
        if i:
            assert "cancelled()" in step.get("if", ""), step
        out.append(
            subprocess.run(
                ["bash", "-e", "-c", step["run"]],
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
        )
    return out


def test_the_recipe_has_every_part():
    steps = placement_steps()
    runs = " ".join(s["run"] for s in steps)
    assert "placement run queries/ --out-dir out" in runs
    assert "--diagnostics github" in runs and "placement diff -q" in runs
    assert "--diagnostics sarif --diagnostics-file placement.sarif" in runs
    (job,) = recipe()["jobs"].values()
    upload = [s for s in job["steps"] if "upload-sarif" in s.get("uses", "")]
    assert upload and upload[0]["with"]["sarif_file"] == "placement.sarif"


def test_a_clean_project_passes_every_step(tmp_path):
    proj = _project(tmp_path)
    annotate, compare, sarif = _run_steps(proj)
    assert annotate.returncode == 0, annotate.stderr
    assert annotate.stderr == ""  # no finding: no annotation, and nothing else on stderr
    assert compare.returncode == 0, compare.stdout + compare.stderr
    assert sarif.returncode == 0, sarif.stderr
    # The goldens, byte for byte.
    for name in PLACED:
        for stage in STAGES:
            got = (proj / "out" / _stem(name) / f"{stage}.json").read_bytes()
            assert got == (proj / "golden" / _stem(name) / f"{stage}.json").read_bytes(), (
                name,
                stage,
            )
    log = sarif_log((proj / "placement.sarif").read_bytes())
    assert results(log) == [] and invocation(log)["exitCode"] == 0


def test_findings_are_annotated_and_scanned_and_a_changed_golden_fails(tmp_path):
    proj = _project(tmp_path)
    (proj / "queries" / "broken.yaml").write_text(BAD)
    seed = yaml.safe_load((EXAMPLES / "seed_split.body.yaml").read_text())
    del seed["size_cap"]  # no size cap: an unpriceable-premium warning, an error under --strict
    (proj / "queries" / "uncapped.body.yaml").write_text(yaml.safe_dump(seed))
    golden = proj / "golden" / "three_targets" / "solve.json"
    golden.write_bytes(golden.read_bytes().replace(b'"optimal": true', b'"optimal": false', 1))

    annotate, compare, sarif = _run_steps(proj)
    assert annotate.returncode == 3
    lines = annotate.stderr.splitlines()
    assert lines and all(line.startswith("::error file=queries/") for line in lines), lines
    by_file = {re.search(r"file=([^,]+),line=(\d+)", line).group(1): line for line in lines}  # type: ignore[union-attr]
    assert set(by_file) == {"queries/broken.yaml", "queries/uncapped.body.yaml"}
    assert ",line=5," in by_file["queries/broken.yaml"]
    assert "title=unpriceable-premium" in by_file["queries/uncapped.body.yaml"]

    assert compare.returncode == 1
    assert "::error file=golden/three_targets/solve.json::" in compare.stdout

    assert sarif.returncode == 3 and sarif.stderr == ""  # --quiet: no human line
    log = sarif_log((proj / "placement.sarif").read_bytes())
    found = {(uri_of(r), r["ruleId"], r["level"]) for r in results(log)}
    assert found == {
        ("queries/broken.yaml", "invalid-input", "error"),
        ("queries/uncapped.body.yaml", "unpriceable-premium", "error"),
    }
    for r in results(log):
        assert r["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1
    assert invocation(log)["exitCode"] == 3
