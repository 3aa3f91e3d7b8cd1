"""`execute --verify N --placed-out FINAL` on real engines (TPC-H Q3 at SF 0.1, DuckDB and
DataFusion): the candidates are every single-engine way (the plan whole and the query as
written, on each engine) and the model's N best splits; every one is timed in the same
number of interleaved rounds; the decision follows the documented rule on the report's
own runs; FINAL is a tree artifact that `validate`, `show` and a later `execute` read,
and that later `execute` runs the adopted way. Timings are not asserted (a shared
machine); what is asserted is that the decision is the rule applied to what was
measured."""

from __future__ import annotations

import itertools
import json
import math
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.test_engines_queries import PROFILE


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "placement_cli", *args], capture_output=True, text=True, cwd=cwd
    )


@pytest.fixture(scope="module")
def verified(tpch_db: Path, tpch_sql: dict[int, str], tmp_path_factory: Any) -> Path:
    work = tmp_path_factory.mktemp("verify")
    (work / "q3.sql").write_text(tpch_sql[3])
    (work / "profile.json").write_text(json.dumps(PROFILE))
    (work / "out").mkdir()
    steps = (
        ["import", "sql", "q3.sql", "--probe", "--db", str(tpch_db), "--engines", "duckdb,datafusion", "--repeat", "1", "--transfer", "profile.json", "-q", "-o", "t.json"],
        ["tree", "t.json", "--budget", "1", "-q", "-o", "placed.json"],
        ["execute", "placed.json", "--db", str(tpch_db), "--verify", "2", "--repeat", "5", "--placed-out", "out/final.json", "-q", "-o", "r.json"],
    )  # fmt: skip
    for args in steps:
        r = _cli(*args, cwd=work)
        assert r.returncode == 0, (args[0], r.stderr)
    return work


def _adopts(split: list[float], single: list[float]) -> bool:
    """The documented rule, restated: every paired round won, or a one-sided sign test
    (the sequences of n fair flips with `wins` heads or more, counted by binomial
    coefficients) below 0.05; and the median 5% lower."""
    n = min(len(split), len(single))
    wins = sum(1 for a, b in zip(split, single, strict=False) if a < b)
    p = sum(math.comb(n, k) for k in range(wins, n + 1)) / 2**n
    gain = 1 - statistics.median(split) / statistics.median(single)
    return (wins == n or p < 0.05) and gain >= 0.05


def _beats(fast: list[float], other: list[float]) -> bool:
    """`fast` faster in enough paired rounds: a one-sided sign test below 0.05."""
    n = min(len(fast), len(other))
    wins = sum(1 for a, b in zip(fast, other, strict=False) if a < b)
    return sum(1 for s in itertools.product((0, 1), repeat=n) if sum(s) >= wins) / 2**n < 0.05


def _in_question(runs: list[list[float]]) -> list[int]:
    """The ways worth another round, restated: the fastest single-engine way (of the
    first four), each other whose median is within 10% of its or that it has not beaten
    in enough paired rounds for a one-sided sign test below 0.05, and the best split
    while faster than it but not adopted; none when one is left."""
    med = statistics.median
    ok = [i for i, r in enumerate(runs) if r]
    single = [i for i in ok if i < 4]
    fast = min(single, key=lambda i: med(runs[i]))
    near = [
        i
        for i in single
        if med(runs[i]) <= med(runs[fast]) * 1.1 or not _beats(runs[fast], runs[i])
    ]
    split = [i for i in ok if i >= 4]
    if split:
        best = min(split, key=lambda i: med(runs[i]))
        if med(runs[best]) < med(runs[fast]) and not _adopts(runs[best], runs[fast]):
            near.append(best)
    return near if len(near) > 1 else []


def test_every_candidate_runs_the_same_rounds_and_the_rule_decides(verified: Path) -> None:
    sec = json.loads((verified / "r.json").read_text())["execute"]
    v = sec["verify"]
    assert sec["order"] == "interleaved" and v["rounds"] == 5
    assert (v["single_ways"], v["splits"]) == (4, 2)
    labels = [p["label"] for p in sec["placements"]]
    assert labels[:4] == [
        "duckdb",
        "duckdb (as written)",
        "datafusion",
        "datafusion (as written)",
    ]
    assert all(";" in x for x in labels[4:])
    ok = [p for p in sec["placements"] if p["status"] == "ok"]
    assert len(ok) == 6, [p["error"] for p in sec["placements"]]
    runs = [p["measured"]["runs"] for p in ok]
    # Every way ran every round: after the first five, one more round at a time while
    # two or more were in question, ten at most.
    last = len(runs[0])
    assert all(len(r) == last for r in runs) and 5 <= last <= 15
    for p in ok:
        assert len(p["cpu"]["runs"]) == last
    assert v["extra_rounds"] == last - 5
    for r in range(5, last + 1):
        asked = _in_question([x[:r] for x in runs])
        assert (len(asked) >= 2) == (r < last) or r == 15, (r, asked)
    single = min(ok[:4], key=lambda p: p["measured"]["median"])
    assert v["fastest_single"] == single["label"]
    best = min(ok[4:], key=lambda p: p["measured"]["median"])
    assert v["best_split"] == best["label"]
    want = best if _adopts(best["measured"]["runs"], single["measured"]["runs"]) else single
    assert v["adopted"] == want["label"]
    assert [p["label"] for p in sec["placements"] if p["chosen"]] == [want["label"]]
    wins = sum(
        1
        for a, b in zip(best["measured"]["runs"], single["measured"]["runs"], strict=False)
        if a < b
    )
    assert best["wins"] == v["wins"] == wins
    assert sec["machine"]["cores"] >= 1 and sec["machine"]["seconds"] > 0


def test_the_decision_file_is_a_tree_artifact_the_other_commands_read(
    verified: Path, tpch_db: Path
) -> None:
    rep = json.loads((verified / "r.json").read_text())["execute"]
    final = json.loads((verified / "out" / "final.json").read_text())
    placed = json.loads((verified / "placed.json").read_text())
    d = final["tree"]["decision"]
    assert d["rule"] == "verified" and d["evidence"]["adopted"] == rep["verify"]["adopted"]
    assert [w["label"] for w in d["ways"]] == [p["label"] for p in rep["placements"]]
    # Everything but the decision is the artifact it was made from, its tree file's
    # path seen from the new artifact's folder.
    assert final["tree"]["input_ref"]["path"] == "../t.json"
    assert placed["tree"]["input_ref"]["path"] == "t.json"
    drop = ("decision", "input_ref")
    assert {k: x for k, x in final["tree"].items() if k not in drop} == {
        k: x for k, x in placed["tree"].items() if k not in drop
    }
    assert _cli("validate", "out/final.json", cwd=verified).returncode == 0
    shown = _cli("show", "out/final.json", cwd=verified)
    assert shown.returncode == 0 and "verified:" in shown.stdout
    again = _cli("execute", "out/final.json", "--db", str(tpch_db), "--repeat", "1", "-q", "-o", "r2.json", cwd=verified)  # fmt: skip
    assert again.returncode == 0, again.stderr
    summary = json.loads((verified / "r2.json").read_text())["execute"]["summary"]
    assert summary["chosen"] == rep["verify"]["adopted"]


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--placed-out", "f.json"], "--verify"),
        (["--verify", "1", "--all"], "--all"),
    ],
)
def test_verify_options_that_do_not_go_together_are_usage_errors(
    verified: Path, tpch_db: Path, extra: list[str], words: str
) -> None:
    r = _cli("execute", "placed.json", "--db", str(tpch_db), *extra, cwd=verified)
    assert r.returncode == 2 and words in r.stderr
    assert not (verified / "f.json").exists()


def test_a_run_with_other_threads_than_the_probe_says_so(verified: Path, tpch_db: Path) -> None:
    probed = json.loads((verified / "t.json").read_text())["query"]["threads"]
    assert set(probed) == {"duckdb", "datafusion"} and all(n >= 1 for n in probed.values())
    same = max(probed.values())
    other = same + 1
    codes = {}
    for n in (same, other):
        r = _cli("execute", "placed.json", "--db", str(tpch_db), "--threads", str(n), "--repeat", "1", "-q", "-o", f"th{n}.json", cwd=verified)  # fmt: skip
        assert r.returncode == 0, r.stderr
        art = json.loads((verified / f"th{n}.json").read_text())
        assert art["execute"]["threads"] == {"duckdb": n, "datafusion": n}
        codes[n] = [d for d in art["diagnostics"] if d["code"] == "threads-differ"]
    if set(probed.values()) == {same}:  # engines probed alike: run alike, no warning
        assert codes[same] == []
    (warned,) = codes[other]
    assert warned["severity"] == "warning"
    for e, k in probed.items():
        assert f"{e} {k} (now {other})" in warned["message"]


def test_a_run_with_other_caches_than_the_probe_says_so(verified: Path, tpch_db: Path) -> None:
    """The probe records the CPU caches its timed runs started with (cold by default);
    `execute` records its own, and warns when they are not the probe's; a tree probed
    before the field existed (none recorded) was timed warm."""
    tree = json.loads((verified / "t.json").read_text())
    assert tree["query"]["caches"] == "cold"
    old = dict(tree, query={k: v for k, v in tree["query"].items() if k != "caches"})
    (verified / "t-old.json").write_text(json.dumps(old))
    for path, mode, warned in (
        ("t.json", "cold", False),
        ("t.json", "warm", True),
        ("t-old.json", "warm", False),
        ("t-old.json", "cold", True),
    ):
        r = _cli("execute", path, "--db", str(tpch_db), "--caches", mode, "--repeat", "1", "-q", "-o", "c.json", cwd=verified)  # fmt: skip
        assert r.returncode == 0, r.stderr
        art = json.loads((verified / "c.json").read_text())
        assert art["execute"]["caches"] == mode
        codes = [d for d in art["diagnostics"] if d["code"] == "caches-differ"]
        assert bool(codes) is warned, (path, mode, codes)
        if warned:
            probed = "warm" if mode == "cold" else "cold"
            assert f"probed with {probed} CPU caches" in codes[0]["message"]
    bad = _cli("execute", "t.json", "--db", str(tpch_db), "--caches", "hot", cwd=verified)
    assert bad.returncode == 2 and "--caches" in bad.stderr


def test_forks_pool_the_runs_of_fresh_processes_and_the_rule_decides_on_them(
    verified: Path, tpch_db: Path
) -> None:
    r = _cli("execute", "placed.json", "--db", str(tpch_db), "--verify", "2", "--repeat", "5", "--forks", "2", "--result", "rows.arrow", "-q", "-o", "forks.json", cwd=verified)  # fmt: skip
    assert r.returncode == 0, r.stderr
    sec = json.loads((verified / "forks.json").read_text())["execute"]
    v = sec["verify"]
    assert sec["forks"] == 2 and sec["repeat"] == 5 and v["rounds"] == 10
    ran = [p for p in sec["placements"] if p["measured"]]
    counts = {len(p["measured"]["runs"]) for p in ran}
    # Every way the same runs: each process's rounds (and extra rounds) in turn, paired.
    assert len(counts) == 1 and counts.pop() == v["rounds"] + v["extra_rounds"]
    singles = [p for p in ran if p["single_engine"]]
    fast = min(singles, key=lambda p: p["measured"]["median"])
    assert v["fastest_single"] == fast["label"]
    splits = [p for p in ran if not p["single_engine"]]
    if splits:
        best = min(splits, key=lambda p: p["measured"]["median"])
        adopts = _adopts(best["measured"]["runs"], fast["measured"]["runs"])
        assert v["adopted"] == (best["label"] if adopts else fast["label"])
    assert (verified / "rows.arrow").stat().st_size > 0  # the last run's rows came back
    one = _cli("execute", "placed.json", "--db", str(tpch_db), "--repeat", "1", "-q", "-o", "one.json", cwd=verified)  # fmt: skip
    assert (
        one.returncode == 0
        and "forks" not in json.loads((verified / "one.json").read_text())["execute"]
    )
