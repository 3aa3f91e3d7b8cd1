"""An artifact's top-level keys dropped, renamed, mistyped or duplicated: every command
that reads an artifact ends with exit 3 and a line naming the key (never an internal
error), and a JSON object with a key twice reads as its last value, as JSON parsers do."""

# Every command is run as a separate process on an artifact without its plan; the 24
# other ways of breaking a required key are read by the same commands in this process
# (what is checked is the message, and 96 fresh processes took minutes on a loaded machine).

from __future__ import annotations

from types import SimpleNamespace

import orjson
import pytest

from placement_cli.formats.artifact import render
from tests.conftest import EXAMPLES, run_cli
from tests.views_goldens import invoke

# Every command that reads an artifact, with what it needs besides the input.
COMMANDS = {
    "validate": [],
    "prune": [],
    "scc": [],
    "solve": [],
    "fuse": [],
    "islands": [],
    "run": ["--out-dir", "OUT"],
    "show": [],
    "explain": ["bb0"],
    "diff": ["OTHER"],
}
REQUIRED = ("format_version", "kind", "status", "plan", "diagnostics", "prune", "scc", "solve")


@pytest.fixture(scope="module")
def solve_artifact(tmp_path_factory) -> dict:
    r = run_cli("solve", str(EXAMPLES / "three_targets.yaml"), "-q", "--no-config")
    assert r.returncode == 0, r.stderr
    return orjson.loads(r.stdout)


def _run(tmp_path, command: str, data: bytes, other: dict, in_process: bool = False):
    src = tmp_path / "a.json"
    src.write_bytes(data)
    (tmp_path / "b.json").write_bytes(orjson.dumps(other, option=orjson.OPT_INDENT_2))
    extra = [
        {"OUT": str(tmp_path / "out"), "OTHER": str(tmp_path / "b.json")}.get(a, a)
        for a in COMMANDS[command]
    ]
    args = [command, str(src), *extra, "-q", "--no-config"]
    if in_process:
        code, stdout, stderr = invoke(args)
        return SimpleNamespace(returncode=code, stdout=stdout, stderr=stderr)
    return run_cli(*args)


def _assert_names(r, key: str, what: str) -> None:
    err = r.stderr.decode()
    assert r.returncode == 3, (what, r.returncode, err)
    assert "internal error" not in err, (what, err)
    lines = err.splitlines()
    assert lines and all(ln.startswith(("a.json: ", "<")) or "a.json" in ln for ln in lines), err
    assert any(f": {key}" in ln for ln in lines), (what, err)
    assert len(err) < 2000, err  # one line per problem, not a dump of the document


@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_artifact_without_its_plan_is_invalid_input(tmp_path, solve_artifact, command):
    art = dict(solve_artifact)
    del art["plan"]
    r = _run(tmp_path, command, orjson.dumps(art, option=orjson.OPT_INDENT_2), solve_artifact)
    _assert_names(r, "plan", f"{command} without plan")


@pytest.mark.parametrize("key", REQUIRED)
@pytest.mark.parametrize("how", ["dropped", "mistyped", "renamed"])
def test_every_required_key_dropped_mistyped_or_renamed(tmp_path, solve_artifact, key, how):
    art = dict(solve_artifact)
    value = art.pop(key)
    if how == "mistyped":
        art[key] = [value] if not isinstance(value, list) else "x"
    elif how == "renamed":
        art[key.upper()] = value
    data = orjson.dumps(art, option=orjson.OPT_INDENT_2)
    for command in ("validate", "solve", "show", "diff"):
        r = _run(tmp_path, command, data, solve_artifact, in_process=True)
        _assert_names(r, key, f"{command}: {key} {how}")


def _with_duplicate(art: dict, key: str, value, last: bool) -> bytes:
    """`art` as its JSON lines with `key` written twice: `value` first (`art`'s own
    value is then the one read) or last (`value` is read)."""
    body = render(art)
    extra = b"  " + orjson.dumps({key: value})[1:-1]
    if last:
        return body[: body.rindex(b"}")].rstrip() + b",\n" + extra + b"\n}"
    return b"{\n" + extra + b"," + body[1:]


@pytest.fixture(scope="module")
def other_artifact() -> dict:
    r = run_cli("solve", str(EXAMPLES / "nested_loops.yaml"), "-q", "--no-config")
    assert r.returncode == 0, r.stderr
    return orjson.loads(r.stdout)


READERS = ("validate", "solve", "islands", "show")


def _read(where, command: str, data: bytes):
    """`command` on `data` as `a.json` in `where`, named relative to it: its messages are
    the same bytes in every folder, so a result can be compared across tests."""
    (where / "a.json").write_bytes(data)
    r = run_cli(command, "a.json", "-q", "--no-config", cwd=where)
    return r.returncode, r.stdout, r.stderr


@pytest.fixture(scope="module")
def plain_reads(tmp_path_factory):
    """What each reader makes of an artifact in the tool's own layout, computed once per
    artifact: the five keys duplicated first all read as the same plain artifact."""
    cache: dict[tuple[str, bytes], tuple] = {}
    where = tmp_path_factory.mktemp("plain")

    def read(command: str, data: bytes):
        if (command, data) not in cache:
            cache[command, data] = _read(where, command, data)
        return cache[command, data]

    return read


@pytest.mark.parametrize("key", ["plan", "renamed plan", "status", "solve", "kind"])
@pytest.mark.parametrize("last", [False, True])
def test_a_duplicated_key_reads_as_its_last_value(
    tmp_path, solve_artifact, other_artifact, plain_reads, key, last
):
    other = other_artifact
    if key == "renamed plan":  # the same plan under another name: the sections still hold
        key, value = "plan", {**solve_artifact["plan"], "name": "another name"}
    else:
        value = other[key] if key != "kind" else "fuse"
    data = _with_duplicate(solve_artifact, key, value, last)
    read = {**solve_artifact, key: value} if last else solve_artifact
    plain = render(read)  # the tool's own layout (a reader reuses its plan's bytes)
    for command in READERS:
        got = _read(tmp_path, command, data)
        want = plain_reads(command, plain)
        assert got == want, (command, got[2], want[2])
