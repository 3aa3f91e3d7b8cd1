"""Ctrl-C during a long `execute`: exit 130, said in one line, and no file written, the
report's, the result's or a temporary one beside them (every output is written
whole at the end, through a temporary file renamed into place)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_engines_queries import PROFILE


def _left_in(folder: Path) -> list[int]:
    """Processes still working in `folder` (a measuring process of `--forks` would be)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and os.readlink(entry / "cwd") == str(folder):
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


@pytest.mark.parametrize("forks", [[], ["--forks", "2"]], ids=["one-process", "forks"])
def test_ctrl_c_during_execute_exits_130_and_writes_nothing(
    tpch_db: Path, tpch_sql: dict[int, str], tmp_path: Path, forks: list[str]
) -> None:
    (tmp_path / "q.sql").write_text(tpch_sql[9])
    (tmp_path / "profile.json").write_text(json.dumps(PROFILE))
    r = subprocess.run(
        [sys.executable, "-m", "placement_cli", "import", "sql", "q.sql", "--probe", "--db", str(tpch_db), "--engines", "duckdb,datafusion", "--repeat", "1", "--transfer", "profile.json", "-q", "-o", "t.json"],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    before = set(os.listdir(tmp_path))
    # Every one-cut placement, 20 timed runs each: far longer than the 3 s given.
    p = subprocess.Popen(
        [sys.executable, "-m", "placement_cli", "execute", "t.json", "--db", str(tpch_db), "--all", "--repeat", "20", "-q", "-o", "r.json", "--result", "rows.parquet", "--times-out", "times.csv", *forks],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    time.sleep(3.0)
    assert p.poll() is None, "it ended before the interrupt: make the run longer"
    start = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    waited = time.monotonic() - start
    assert p.returncode == 130, (p.returncode, err)
    assert "interrupted" in err and "Traceback" not in err
    assert set(os.listdir(tmp_path)) == before  # no report, no result, no temporary file
    assert waited < 30, f"took {waited:.1f} s to stop"
    # With --forks the measuring process it had started is stopped too, not left running.
    assert _left_in(tmp_path) == []
