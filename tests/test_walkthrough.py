"""From a TPC-H query to a placement, as a user runs it: `import --transfer` (a transfer
profile's models written into the tree file), and the README's walkthrough, read from
the README as written and run on the TPC-H fixture (`examples/tpch/walkthrough.py`,
what `make tpch-demo` runs)."""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson

from tests.conftest import EXAMPLES, run_cli

PLANS = Path(__file__).resolve().parent / "data" / "engine_plans"


def walkthrough() -> ModuleType:
    """examples/tpch/walkthrough.py (a script, not a package module)."""
    path = EXAMPLES / "tpch" / "walkthrough.py"
    spec = importlib.util.spec_from_file_location("tpch_walkthrough", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ok(*args: str, cwd: Path | None = None) -> bytes:
    r = run_cli(*args, cwd=cwd)
    assert r.returncode == 0, (args, r.stderr.decode())
    return r.stdout


# --- import --transfer


def _fast_scans(tmp_path: Path) -> Path:
    """Q3's real DuckDB profile made a second engine: its scans ten times faster, every
    other operator ten times slower, so the best placement splits at a scan."""
    doc = orjson.loads((PLANS / "q3.duckdb.json").read_bytes())
    stack = [doc]
    while stack:
        n = stack.pop()
        if "operator_timing" in n:
            n["operator_timing"] *= 0.1 if n.get("operator_name") == "SEQ_SCAN" else 10
        stack.extend(n.get("children", []))
    out = tmp_path / "fast-scans.json"
    out.write_bytes(orjson.dumps(doc))
    return out


def _profile(tmp_path: Path) -> Path:
    """A transfer profile fitted by `calibrate fit` to hand-offs of 1 ms + 1 us per row
    both ways between the two engines (exact points: the fit gives that model)."""
    rows = ["src,dst,rows,width,ms"]
    for src, dst in (("duck", "fast"), ("fast", "duck")):
        for r in (1_000, 10_000, 100_000, 1_000_000):
            for w in (16, 64, 256):
                rows.append(f"{src},{dst},{r},{w},{1 + r * 1e-6:.6f}")
    (tmp_path / "h.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "profiles").mkdir()
    out = tmp_path / "profiles" / "profile.json"
    ok("calibrate", "fit", str(tmp_path / "h.csv"), "-o", str(out), "-q")
    return out


def _import(tmp_path: Path, out: str, *extra: str) -> dict[str, Any]:
    ok(
        "import",
        "duckdb-profile",
        str(PLANS / "q3.duckdb.json"),
        str(_fast_scans(tmp_path)),
        "--engine",
        "duck",
        "--engine",
        "fast",
        "--budget",
        "1",
        "-o",
        str(tmp_path / out),
        *extra,
    )
    doc: dict[str, Any] = orjson.loads((tmp_path / out).read_bytes())
    return doc


def test_import_transfer_writes_the_profile_into_the_tree_and_it_places_with_a_cut(
    tmp_path: Path,
) -> None:
    profile = _profile(tmp_path)
    plain = _import(tmp_path, "plain.json")
    given = _import(tmp_path, "given.json", "--transfer", str(profile))

    # the profile's models, and the profile by name and hash (no path)
    models = {
        (d["src"], d["dst"]): d["model"] for d in orjson.loads(profile.read_bytes())["directions"]
    }
    linear = given["transfer"]["linear"]
    assert {(a, b): m for a, row in linear.items() for b, m in row.items()} == models
    assert given["transfer"]["profile"] == {
        "name": "profile.json",
        "sha256": hashlib.sha256(profile.read_bytes()).hexdigest(),
    }
    assert "transfer" not in plain or not plain["transfer"].get("linear")
    assert {k: v for k, v in given.items() if k != "transfer"} == plain

    # without a transfer model no cut is allowed; with the profile's, one pays
    art = orjson.loads(ok("tree", str(tmp_path / "plain.json")))["tree"]
    assert art["cuts_used"] == 0 and len(set(art["engines"].values())) == 1
    art = orjson.loads(ok("tree", str(tmp_path / "given.json")))["tree"]
    assert art["cuts_used"] == 1 and set(art["engines"].values()) == {"duck", "fast"}
    (cut,) = art["cuts"]
    assert cut["from_engine"] == "fast" and cut["to_engine"] == "duck"
    # `tree --transfer` with the same profile places the plain file the same way
    again = orjson.loads(ok("tree", str(tmp_path / "plain.json"), "--transfer", str(profile)))
    assert again["tree"]["engines"] == art["engines"]
    assert again["tree"]["latency"] == art["latency"]


def test_import_transfer_is_byte_identical_across_runs(tmp_path: Path) -> None:
    profile = _profile(tmp_path)
    runs = ("a/q3.tree.json", "b/q3.tree.json")
    for out in runs:
        (tmp_path / out).parent.mkdir()
        _import(tmp_path, out, "--transfer", str(profile))
    assert (tmp_path / runs[0]).read_bytes() == (tmp_path / runs[1]).read_bytes()
    placed = [ok("tree", "q3.tree.json", cwd=(tmp_path / out).parent) for out in runs]
    assert placed[0] == placed[1] and orjson.loads(placed[0])["tree"]["cuts_used"] == 1


def test_import_transfer_refuses_what_is_not_a_profile(tmp_path: Path) -> None:
    r = run_cli(
        "import",
        "duckdb-profile",
        str(PLANS / "q3.duckdb.json"),
        "--transfer",
        str(PLANS / "q3.duckdb.json"),
        "-o",
        str(tmp_path / "t.json"),
    )
    assert r.returncode == 3 and b"not a transfer profile" in r.stderr
    assert not (tmp_path / "t.json").exists()


# --- the README's walkthrough


def test_the_readme_walkthrough_is_the_four_commands_after_the_data_step() -> None:
    lines = walkthrough().commands()
    words = [line.split()[:3] for line in lines]
    assert words[0][:2] == ["python", "examples/tpch/make_data.py"]
    assert [w[:2] for w in words[1:]] == [
        ["placement", "import"],
        ["placement", "calibrate"],
        ["placement", "calibrate"],
        ["placement", "tree"],
        ["placement", "show"],
        # Close the loop: run the placement, feed the measurements back, place again.
        ["placement", "execute"],
        ["placement", "calibrate"],
        ["placement", "tree"],
        # What the choice promises: the model's decision, then the measured one.
        ["placement", "tree"],
        ["placement", "execute"],
    ]
    assert "--verify" in lines[-1] and "--placed-out" in lines[-1]
    assert "--probe" in lines[1] and "--transfer" in lines[4] and "dot -Tsvg" in lines[5]


def test_q3_is_duckdbs_text(tpch_sql: dict[int, str]) -> None:
    assert (EXAMPLES / "tpch" / "q3.sql").read_text(encoding="utf-8") == tpch_sql[3]


def test_the_readme_walkthrough_runs_and_draws_the_placed_tree(
    tpch_db: Path, tmp_path: Path
) -> None:
    work = tmp_path / "w"
    done = walkthrough().run(work, db=tpch_db, quick=True, timeout=300)
    for p in done:
        assert p.returncode == 0, (p.args, p.stderr)
    assert len(done) == 10  # the data step is the fixture's

    tree = orjson.loads((work / "q3.tree.json").read_bytes())
    assert tree["engines"] == ["duckdb", "datafusion"] and tree["query"]["repeat"] == 1
    profile = orjson.loads((work / "profile.json").read_bytes())
    assert {(d["src"], d["dst"]) for d in profile["directions"]} == {
        ("duckdb", "datafusion"),
        ("datafusion", "duckdb"),
    }
    art = orjson.loads((work / "q3.placed.json").read_bytes())["tree"]
    assert art["transfer_ref"]["name"] == "profile.json"
    assert set(art["engines"]) == {n["id"] for n in tree["nodes"]}
    assert art["budget"] == 1 and art["cuts_used"] <= 1

    # closing the loop: execute ran every one-cut placement of the tree as placed (with
    # the profile it names), wrote the hand-offs `calibrate fit` read back with the
    # calibration's, and the measured tree placed again
    report = orjson.loads((work / "q3.report.json").read_bytes())["execute"]
    n = len(tree["nodes"])
    # each engine alone, and each node's subtree on one engine under the rest on the
    # other; and the query as written on each engine (the probe measured both)
    assert [p["sql"] for p in report["placements"]].count("plan") == 2 + 2 * (n - 1)
    assert report["summary"]["placements"] == 2 + 2 * (n - 1) + 2
    assert report["summary"]["mismatches"] == 0 and report["summary"]["executed"] >= 3
    assert (work / "q3.h.csv").read_text().count("\n") > 1
    again = orjson.loads((work / "profile2.json").read_bytes())
    assert again["directions"] and (work / "q3.placed2.json").exists()

    # what the choice promises: the model's decision, then the verified one
    decided = orjson.loads((work / "q3.decided.json").read_bytes())["tree"]["decision"]
    assert decided["rule"] == "model" and decided["chosen"]["kind"] in ("single", "split")
    verify = orjson.loads((work / "q3.verify.json").read_bytes())["execute"]["verify"]
    final = orjson.loads((work / "q3.final.json").read_bytes())["tree"]["decision"]
    assert verify["rounds"] >= 5 and final["rule"] == "verified"
    assert final["evidence"]["adopted"] == verify["adopted"]

    # the picture: show's DOT, and the SVG Graphviz made of it
    dot = ok("show", "q3.placed.json", cwd=work).decode()
    assert dot.startswith("digraph") and all(f'id="op:{n["id"]}"' in dot for n in tree["nodes"])
    if shutil.which("dot"):
        svg = (work / "q3.placed.svg").read_text(encoding="utf-8")
        assert "<svg" in svg and "read(lineitem)" in svg

    # the profile written into a probed tree file: `tree` needs no --transfer then
    ok(
        "import",
        "sql",
        "examples/tpch/q3.sql",
        "--probe",
        "--db",
        "tpch.duckdb",
        "--repeat",
        "1",
        "--transfer",
        "profile.json",
        "-o",
        "q3.with-profile.json",
        cwd=work,
    )
    given = orjson.loads((work / "q3.with-profile.json").read_bytes())
    assert given["transfer"]["profile"]["name"] == "profile.json"
    assert given["transfer"]["linear"] == {
        d["src"]: {d["dst"]: d["model"]} for d in profile["directions"]
    }
    # it carries that profile already: giving it again places the same way
    alone, again = (
        orjson.loads(ok("tree", "q3.with-profile.json", "--budget", "1", *more, cwd=work))["tree"]
        for more in ((), ("--transfer", "profile.json"))
    )
    assert (alone["engines"], alone["latency"]) == (again["engines"], again["latency"])


def test_walkthrough_fast_settings_are_added_before_a_pipe() -> None:
    fast = walkthrough().fast
    assert fast("placement import sql q.sql --probe -o t.json").endswith("--repeat 1")
    assert fast("placement calibrate fit h.csv") == "placement calibrate fit h.csv"
    piped = fast("placement calibrate measure --db x | cat")
    assert piped.startswith("placement calibrate measure --db x --repeat 1 ")
    assert piped.endswith(" | cat")
