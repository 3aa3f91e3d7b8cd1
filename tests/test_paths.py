"""`core.paths` against `pathlib`: the same strings on generated paths, the same answers
and errors on a folder of real files, links and loops (`core.paths` replaces `pathlib`
on every command's start-up, so every path a message names must be the one `pathlib`
gave: docs/startup.md)."""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path, PurePosixPath

import pytest

from placement_cli.core import paths

PIECES = ["", "a", "b.json", ".", "..", ".x", "y.", "c.tar.gz", " ", "d.YAML", "é", "..."]


def generated(n: int, seed: int) -> list[str]:
    """Paths of 0 to 5 pieces joined by runs of 0 to 3 slashes, leading and trailing."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        parts = [rng.choice(PIECES) for _ in range(rng.randrange(0, 6))]
        text = rng.choice(["", "/", "//", "///"])
        for p in parts:
            text += p + "/" * rng.choice([1, 1, 1, 2, 3])
        out.append(text if rng.random() < 0.5 else text.rstrip("/") or text)
    return out


def test_lexical_operations_spell_paths_as_pathlib() -> None:
    for path in generated(5000, 1):
        p = PurePosixPath(path)
        got = (paths.pure(path), paths.parent(path), paths.name(path), paths.suffix(path))
        assert got == (str(p), str(p.parent), p.name, p.suffix), path
        assert paths.lineage(path) == [str(x) for x in (p, *p.parents)], path
        for other in ("n.json", "/abs/x", "//r", "..", "", "s/t"):
            assert paths.joined(path, other) == str(p / other), (path, other)


def test_absolute_joins_the_working_directory_as_pathlib(tmp_path: Path) -> None:
    cwd = os.getcwd()
    for where in (tmp_path, tmp_path / "sub"):
        where.mkdir(exist_ok=True)
        os.chdir(where)
        try:
            for path in generated(500, 2):
                assert paths.absolute(path) == str(Path(path).absolute()), path
        finally:
            os.chdir(cwd)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A file, a folder, a link to each, a dangling link, a loop of links."""
    (tmp_path / "f").write_text("x")
    (tmp_path / "d").mkdir()
    (tmp_path / "to_f").symlink_to(tmp_path / "f")
    (tmp_path / "to_d").symlink_to(tmp_path / "d")
    (tmp_path / "dangling").symlink_to(tmp_path / "missing")
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    return tmp_path


NAMES = ["f", "d", "to_f", "to_d", "dangling", "loop1", "missing", "f/x", "d/", "d/x/y", "a\0b"]


@pytest.mark.parametrize("rel", NAMES)
def test_tests_answer_as_pathlib(tree: Path, rel: str) -> None:
    path = str(tree) + "/" + rel
    p = Path(path)
    assert paths.exists(path) == p.exists()
    assert paths.is_dir(path) == p.is_dir()
    assert paths.is_file(path) == p.is_file()


@pytest.mark.parametrize(
    "rel", ["new", "new/a/b", "d", "d/new/x", "f", "f/x", "to_d/n", "dangling/x"]
)
def test_mkdirs_makes_and_fails_as_pathlib(
    tree: Path, tmp_path_factory: pytest.TempPathFactory, rel: str
) -> None:
    """The same folders made, or the same error, in two copies of the same tree."""
    twin = tmp_path_factory.mktemp("twin")
    for entry in tree.iterdir():
        if entry.is_symlink():
            (twin / entry.name).symlink_to(str(os.readlink(entry)).replace(str(tree), str(twin)))
        elif entry.is_dir():
            (twin / entry.name).mkdir()
        else:
            (twin / entry.name).write_text("x")

    def outcome(run: Callable[[], None]) -> str:
        try:
            run()
        except OSError as exc:
            return f"{type(exc).__name__} {exc.errno}"
        return "made"

    mine = outcome(lambda: paths.mkdirs(str(tree / rel)))
    theirs = outcome(lambda: Path(twin / rel).mkdir(parents=True, exist_ok=True))
    assert mine == theirs
    made = sorted(str(p.relative_to(tree)) for p in tree.rglob("*"))
    made_twin = sorted(str(p.relative_to(twin)) for p in twin.rglob("*"))
    assert made == made_twin


def test_a_stage_writing_a_file_imports_no_pathlib(tmp_path: Path) -> None:
    """The point of the module: no `pathlib` (nor `urllib.parse`) on a stage's start-up."""
    import subprocess
    import sys

    plan = tmp_path / "p.json"
    plan.write_bytes(
        b'{"version": 1, "targets": ["a"], "blocks": [{"id": "x", "terminator": {"kind": "return"}}]}'
    )
    code = (
        "import os, sys\n"
        "leave = os._exit\n"
        "def report(code):\n"
        "    sys.stderr.write('@' + ' '.join(sorted(sys.modules)) + '\\n'); leave(code)\n"
        "os._exit = report\n"
        "from placement_cli.app.launch import main\n"
        "main()\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, "run", str(plan), "--out-dir", str(tmp_path / "o"), "-q"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    mods = set(r.stderr.strip().splitlines()[-1][1:].split())
    assert "placement_cli.core.paths" in mods
    assert not mods & {"pathlib", "urllib.parse", "ipaddress"}
    assert sorted(p.name for p in (tmp_path / "o").iterdir())[:2] == ["fuse.json", "islands.json"]
