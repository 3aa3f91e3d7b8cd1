"""The success path of a stage, `validate`, `run` and `tree` never imports pydantic (a
fifth of a second per process): plans, tree files and artifacts are accepted by msgspec
Structs (`placement_cli.formats.structs`, `tree_structs`, `sectioncheck`), and
the models are imported only to diagnose a refused input, for schemas and for library
callers (`docs/load.md`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples" / "loop_alternating.yaml"
TREE = ROOT / "examples" / "operator_tree.yaml"


def _imports(*args: str) -> tuple[int, str]:
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "placement_cli", *args],
        capture_output=True,
        cwd=ROOT,
        timeout=120,
    )
    return r.returncode, r.stderr.decode()


def test_no_pydantic_on_the_success_path(tmp_path):
    solve, fuse = tmp_path / "solve.json", tmp_path / "fuse.yaml"
    runs = [
        ("solve", str(EX), "-o", str(solve)),
        ("fuse", str(solve), "-o", str(fuse), "--format", "yaml"),
        ("islands", str(fuse), "-o", str(tmp_path / "islands.json")),
        ("validate", str(tmp_path / "islands.json")),
        ("run", str(solve), "--out-dir", str(tmp_path / "out")),
        ("tree", str(TREE), "-o", str(tmp_path / "tree.json"), "--include-input"),
        ("tree", str(tmp_path / "tree.json"), "-o", str(tmp_path / "again.json")),
    ]
    for args in runs:
        code, err = _imports(*args)
        assert code == 0, (args, err[-500:])
        assert "import time:" in err  # importtime did report
        assert " pydantic" not in err, args


def test_a_refused_input_is_diagnosed_by_the_models(tmp_path):
    # The same run, with one wrong type: now the models are imported and give the message.
    bad = tmp_path / "bad.json"
    bad.write_bytes(
        b'{"version": 1, "targets": ["a"], "blocks": [{"id": 7, "terminator": {"kind": "return"}}]}'
    )
    code, err = _imports("solve", str(bad))
    assert code == 3
    assert " pydantic" in err
    assert (
        err.rstrip().splitlines()[-1]
        == f"{bad}: blocks[0].id: Input should be a valid string (got int 7)"
    )
