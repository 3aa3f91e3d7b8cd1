"""Adding a stage is its module and one registry entry: the command line, the artifact's
kinds and sections, the reading models, `schemas/`, the summaries and the golden files'
list all follow from the registry (`tests/added_stage.py` adds `audit` after `islands`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent


def _placement(*args: str) -> subprocess.CompletedProcess[str]:
    """The command line with the `audit` stage registered."""
    return subprocess.run(
        [sys.executable, "-m", "tests.added_stage", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_added_stage_reaches_commands_artifacts_schemas_and_summaries(tmp_path: Path) -> None:
    r = _placement("--help")
    assert r.returncode == 0 and "audit" in r.stdout

    out = tmp_path / "out"
    r = _placement("run", "examples/three_targets.yaml", "--out-dir", str(out))
    assert r.returncode == 0, r.stderr
    assert "  audit    7 blocks in 3 islands" in r.stderr.splitlines()
    art = orjson.loads((out / "audit.json").read_bytes())
    assert art["kind"] == "audit"
    assert art["audit"] == {"blocks": 7, "islands": 3}
    assert all(s in art for s in ("prune", "scc", "solve", "fuse", "islands"))

    # Read back: the section is checked against the plan, by the fast path and the models.
    r = _placement("validate", str(out / "audit.json"))
    assert r.returncode == 0, r.stderr
    assert "sections checked: prune, scc, solve, fuse, islands, audit" in r.stderr
    for value, message in ((8, "audit.blocks: is 8, but the plan gives 7"), ("7", "audit.blocks:")):
        bad = dict(art, audit={"blocks": value, "islands": 3})
        (tmp_path / "bad.json").write_bytes(orjson.dumps(bad))
        r = _placement("validate", str(tmp_path / "bad.json"))
        assert r.returncode == 3 and message in r.stderr, r.stderr
    # An islands artifact carries no audit section; an audit artifact must.
    r = _placement("validate", str(out / "islands.json"))
    assert r.returncode == 0, r.stderr
    del art["audit"]
    (tmp_path / "short.json").write_bytes(orjson.dumps(art))
    r = _placement("validate", str(tmp_path / "short.json"))
    assert r.returncode == 3 and "audit: required section is missing" in r.stderr, r.stderr

    r = _placement("schema", "--out-dir", str(tmp_path / "schemas"))
    assert r.returncode == 0, r.stderr
    schema = orjson.loads((tmp_path / "schemas" / "audit.artifact.schema.json").read_bytes())
    assert "audit" in schema["required"]
    assert schema["properties"]["kind"]["const"] == "audit"
    islands = orjson.loads((tmp_path / "schemas" / "islands.artifact.schema.json").read_bytes())
    assert "audit" not in islands["required"]


def test_added_stage_reaches_the_golden_files_list() -> None:
    code = (
        "import tests.added_stage as a; from placement_cli.pipeline import registry;"
        "registry.register(a.INFO); import tests.goldens as g; print(' '.join(g.STAGES))"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert r.stdout.split() == ["prune", "scc", "solve", "fuse", "islands", "audit"], r.stderr
