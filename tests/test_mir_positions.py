"""Every diagnostic on MIR text is told where the user wrote it, in MIR words: problems
that `lower` finds in the body file the reader made (an unknown vertex path, a wrong
number of block arguments, a local used before it is defined, a projection past an
environment's fields) and the warnings it raises, as `FILE:LINE:COL`, `{body} bbN` and
`%N`, in every `--diagnostics` format; and text with CRLF line endings or a byte-order
mark reads as the same text, at the same positions."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from placement_cli.frontends.mir_text import parse_mir, read_body
from tests.conftest import ROOT, run_cli

DATA = ROOT / "tests" / "data" / "mir"
WEB = ROOT / "examples" / "web_filter.mir"
MIR_FILES = sorted(DATA.glob("*.mir")) + [WEB]
FILTER = "{graph::read::filter@9}"


def _at(text: str, needle: str, offset: int = 0) -> tuple[int, int]:
    """The 1-based (line, column) of `needle` (plus `offset` characters) in `text`."""
    i = text.index(needle) + offset
    return text.count("\n", 0, i) + 1, i - text.rfind("\n", 0, i)


# (what is wrong, the edit of examples/web_filter.mir, where the edit is, its offset in it,
# the message in MIR words)
CASES = [
    (
        "unknown-vertex-path",
        ("!%1.metadata.archived", "!%1.metadata.archivd"),
        1,
        "unknown vertex path `metadata.archivd` in '%1.metadata.archivd'",
    ),
    (
        "block-arguments",
        ("goto -> bb3(%6)", "goto -> bb3(%6, %5)"),
        len("goto -> "),
        "block 'bb3' takes 1 argument(s), got 2",
    ),
    (
        "used-before-defined",
        ("%6 = %4 & %5", "%6 = %4 & %7"),
        len("%6 = %4 & "),
        "local '%7' is used before it is defined on every path",
    ),
    (
        "env-field",
        ("!= %0.0", "!= %0.5"),
        len("!= "),
        "projection '%0.5' does not fit the type of '%0'",
    ),
]


def _broken(tmp_path: Path, edit: tuple[str, str], crlf: bool = False) -> tuple[Path, str]:
    text = WEB.read_text()
    assert edit[0] in text
    text = text.replace(edit[0], edit[1])
    path = tmp_path / "q.mir"
    path.write_bytes((text.replace("\n", "\r\n") if crlf else text).encode())
    return path, text


@pytest.mark.parametrize(("what", "edit", "offset", "message"), CASES, ids=[c[0] for c in CASES])
def test_a_semantic_error_in_mir_has_its_line_column_and_mir_words(
    tmp_path, what, edit, offset, message
):
    path, text = _broken(tmp_path, edit)
    line, col = _at(text, edit[1], offset)
    extra = ("--targets", str(_closed_profile(tmp_path))) if what == "unknown-vertex-path" else ()
    for command in ("lower", "run"):
        r = run_cli(command, path.name, *extra, cwd=tmp_path)
        assert r.returncode == 3, (command, r.stderr)
        err = r.stderr.decode()
        assert err.startswith(f"q.mir:{line}:{col}: {FILTER} bb1: {message}"), (command, err)
        assert "bodies[" not in err and "'_" not in err and "vertex." not in err
    r = run_cli("lower", path.name, *extra, "--diagnostics", "json", cwd=tmp_path)
    rec = orjson.loads(r.stderr.splitlines()[0])
    assert (rec["file"], rec["line"], rec["col"]) == ("q.mir", line, col)
    assert rec["path"] == f"{FILTER} bb1" and rec["message"].startswith(message)
    r = run_cli("lower", path.name, *extra, "--diagnostics", "github", cwd=tmp_path)
    assert r.stderr.decode().startswith(f"::error file=q.mir,line={line},col={col},")


def test_crlf_keeps_the_positions_of_a_semantic_error(tmp_path):
    _, edit, offset, message = CASES[2]
    path, text = _broken(tmp_path, edit, crlf=True)
    line, col = _at(text, edit[1], offset)
    r = run_cli("lower", path.name, cwd=tmp_path)
    assert r.returncode == 3
    assert r.stderr.decode().startswith(f"q.mir:{line}:{col}: {FILTER} bb1: {message}")


def _closed_profile(tmp_path: Path) -> Path:
    """The built-in profile with a closed vertex: an unknown path is an error (the
    built-in profile makes it an unresolvable access and warns, as the compiler does)."""
    shown = run_cli("profile", "show")
    assert shown.returncode == 0, shown.stderr
    assert b"open_vertex: true\n" in shown.stdout
    path = tmp_path / "closed.yaml"
    path.write_bytes(shown.stdout.replace(b"open_vertex: true\n", b"open_vertex: false\n"))
    return path


def test_warnings_on_mir_have_their_line_column_and_mir_words(tmp_path):
    edit = CASES[0][1]
    path, text = _broken(tmp_path, edit)
    line, col = _at(text, edit[1], 1)
    r = run_cli("lower", path.name, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.decode().splitlines()
    want = (
        f"q.mir:{line}:{col}: warning: unknown-vertex-path: {FILTER} bb1: "
        "unknown vertex path `metadata.archivd` in '%1.metadata.archivd'"
    )
    assert lines[0].startswith(want), lines
    # a warning about blocks is at the first of them, in the body's printed name
    premium = next(ln for ln in lines if "unpriceable-premium" in ln)
    bline, bcol = _at(text, "bb1(): {")
    assert premium.startswith(f"q.mir:{bline}:{bcol}: warning: unpriceable-premium: {FILTER}: ")
    r = run_cli("lower", path.name, "--diagnostics", "json", cwd=tmp_path)
    recs = [orjson.loads(x) for x in r.stderr.splitlines() if x.startswith(b"{")]
    assert [(x["code"], x["line"], x["col"]) for x in recs] == [
        ("unknown-vertex-path", line, col),
        ("unpriceable-premium", bline, bcol),
    ]
    # the plan carries them too, in MIR words
    plan = orjson.loads(run_cli("lower", path.name, "-q", cwd=tmp_path).stdout)
    (diag,) = [d for d in plan["lower"]["diagnostics"] if d["code"] == "unknown-vertex-path"]
    assert (diag["line"], diag["col"]) == (line, col) and "bodies[" not in diag["message"]


# -- the source map on every real file ----------------------------------------------------

_START = {
    "statements": re.compile(r"(%\d+|let|drop|nop)\b"),
    "terminator": re.compile(r"(return|goto|switchInt|graph|unreachable)\b"),
}


@pytest.mark.parametrize("path", MIR_FILES, ids=lambda p: p.name)
def test_every_statement_terminator_and_operand_is_located(path):
    """Each statement's path leads to the line it is on (its first token), each
    assignment to its `%N`, each operand that is a place to that place's text, each
    block to its `bbN(`: checked on every body of every data file."""
    text = path.read_text()
    lines = text.split("\n")
    doc = parse_mir(text, path.name)
    smap = doc.source_map

    def token_at(p: str) -> str:
        found = smap.locate(p)
        assert found is not None, p
        _, (ln, col), _ = found
        return lines[ln - 1][col - 1 :]

    for bi, b in enumerate(doc["bodies"]):
        mir = {name: f"%{n}" for n, name in smap.bodies[bi].names.items()}

        def place_text(op: str, mir=mir) -> str:
            head, *rest = op.split(".")
            return ".".join([mir[head], *rest])

        assert token_at(f"bodies[{bi}]").startswith(b["name"])
        for k, blk in enumerate(b["blocks"]):
            bp = f"bodies[{bi}].blocks[{k}]"
            assert token_at(bp).startswith(blk["id"] + "(")
            for j, prm in enumerate(blk["params"]):
                assert token_at(f"{bp}.params[{j}]").startswith(mir[prm])
            for j, st in enumerate(blk["statements"]):
                sp = f"{bp}.statements[{j}]"
                assert _START["statements"].match(token_at(sp)), (sp, token_at(sp))
                if "assign" in st:
                    assert re.match(re.escape(mir[st["assign"]]) + r"\b", token_at(sp + ".assign"))
                for key in ("load",):
                    if isinstance(st.get(key), str):
                        assert token_at(f"{sp}.{key}").startswith(place_text(st[key]))
                if "binary" in st:
                    for side in ("left", "right"):
                        op = st["binary"][side]
                        if isinstance(op, str):
                            got = token_at(f"{sp}.binary.{side}")
                            assert got.startswith(place_text(op)), (sp, side, got)
                if "apply" in st:
                    for m, op in enumerate(st["apply"]["args"]):
                        if isinstance(op, str):
                            got = token_at(f"{sp}.apply.args[{m}]")
                            assert got.startswith(place_text(op)), (sp, m, got)
            tp = f"{bp}.terminator"
            assert _START["terminator"].match(token_at(tp)), (tp, token_at(tp))
            for m, e in enumerate(blk["terminator"].get("successors", [])):
                assert token_at(f"{tp}.successors[{m}].block").startswith(e["block"])
                for q, op in enumerate(e["args"]):
                    if isinstance(op, str):
                        assert token_at(f"{tp}.successors[{m}].args[{q}]").startswith(
                            place_text(op)
                        )


# -- CRLF and a byte-order mark -----------------------------------------------------------


@pytest.mark.parametrize("path", MIR_FILES, ids=lambda p: p.name)
def test_crlf_and_a_bom_read_as_the_same_text(path):
    data = path.read_bytes()
    want = read_body(data, path.name)
    assert read_body(data.replace(b"\n", b"\r\n"), path.name) == want
    assert read_body(b"\xef\xbb\xbf" + data, path.name) == want
    assert read_body(b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n"), path.name) == want


def test_lower_and_run_read_crlf_and_a_bom_as_the_cli_reads_lf(tmp_path):
    data = WEB.read_bytes()
    (tmp_path / "q.mir").write_bytes(data)
    (tmp_path / "w.mir").write_bytes(b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n"))
    for command in ("lower", "run"):
        extra = ("--out-dir", "o") if command == "run" else ()
        a = run_cli(command, "q.mir", "-q", *extra, cwd=tmp_path)
        b = run_cli(command, "w.mir", "-q", *(("--out-dir", "p") if extra else ()), cwd=tmp_path)
        assert a.returncode == b.returncode == 0, (a.stderr, b.stderr)
        if command == "lower":
            assert a.stdout == b.stdout
        else:
            pa = orjson.loads((tmp_path / "o" / "solve.json").read_bytes())["solve"]
            pb = orjson.loads((tmp_path / "p" / "solve.json").read_bytes())["solve"]
            assert pa["assignment"] == pb["assignment"]
    piped = run_cli(
        "lower", "-", "--from", "hashql-mir", "-q", stdin=(tmp_path / "w.mir").read_bytes()
    )
    assert piped.returncode == 0, piped.stderr


def test_a_syntax_error_after_crlf_lines_is_at_the_same_position():
    text = (
        "thunk t() -> Integer {\n    let %0: Integer\n\n    bb0(): {\n        %0 = 1\n\n"
        "        return %9 +\n    }\n}\n"
    )
    with pytest.raises(Exception) as lf:
        read_body(text.encode(), "t.mir")
    with pytest.raises(Exception) as crlf:
        read_body(text.replace("\n", "\r\n").encode(), "t.mir")
    assert str(crlf.value) == str(lf.value) and str(lf.value).startswith("t.mir:7:")


def test_every_problem_is_reported_in_the_order_of_the_text(tmp_path):
    text = WEB.read_text()
    for old, new in (CASES[2][1], CASES[1][1], ("return %0\n", "return %0.1\n")):
        text = text.replace(old, new)
    (tmp_path / "q.mir").write_text(text)
    r = run_cli("validate", "q.mir", cwd=tmp_path)
    assert r.returncode == 3
    lines = r.stderr.decode().splitlines()
    where = [tuple(map(int, re.match(r"q\.mir:(\d+):(\d+): ", ln).groups())) for ln in lines]
    assert len(where) == 4 and where == sorted(where), lines
    assert [ln.split(": ")[1] for ln in lines] == [
        "{thunk#1} bb0",
        f"{FILTER} bb1",
        f"{FILTER} bb1",
        "{thunk#4} bb1",
    ]
