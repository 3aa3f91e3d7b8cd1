"""Start-up budget: what each command imports, held to an allow-list.

A piped stage, a build script's `--version` and a CI job's `solve` are whole processes
whose start-up is mostly imports (docs/startup.md). Each case below runs the console
script's own lines (`launch.main`) as a process and lists the modules it imported
(`sys.modules` as `main` leaves: it ends with `os._exit`, so the process writes them
just before; `-X importtime` would also list an import that was refused, as the
launcher refuses msgspec's `typing_extensions`), and fails on a module outside the
command's allow-list:

- the interpreter's own start (`python -c pass`, measured here);
- the import closure of the libraries the command is allowed (measured here too, so
  that what orjson and msgspec themselves import, which no command can avoid, follows
  their versions: `dataclasses`, `inspect`, `uuid`, `datetime`, `decimal`,
  `typing_extensions`...);
- the project's modules under the listed prefixes (a prefix allows its parent
  packages).

A module that a change adds to a command's start-up fails here until it is deferred to
where it is used, or added to the list on purpose, with its measured cost.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

import orjson
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "three_targets.yaml"
# The console script's lines, with `os._exit` writing the modules imported first.
LAUNCH = (
    "import os, sys\n"
    "leave = os._exit\n"
    "def report(code):\n"
    "    sys.stderr.write('\\n@modules ' + ' '.join(sorted(sys.modules)) + '\\n')\n"
    "    sys.stderr.flush()\n"
    "    leave(code)\n"
    "os._exit = report\n"
    "from placement_cli.app.launch import main\n"
    "main()\n"
)
AFTER = "import sys; sys.stderr.write('\\n@modules ' + ' '.join(sorted(sys.modules)) + '\\n')"
# What the graph code and the CLI need of the standard library: heapq (scc, the
# solvers), gc (the CLI switches the cycle collector off), errno. Not pathlib (with
# urllib.parse and ipaddress, ~2.7 ms): paths go through `core.paths`.
PLAIN_STAGE_LIBS = ("orjson", "msgspec", "heapq", "gc", "errno")
# The project's modules a JSON stage may import: the launcher, its declarations and
# report, the load path, the stages it runs. Not the typer command line (`app.cli`),
# not `app.batch` (directories, several inputs), not the views, engines or front ends
# (a plan has no body to lower; `frontends.lower.options` declares `--targets` etc.).
STAGE_PROJECT = (
    "placement_cli.app.launch",
    "placement_cli.app.commands",
    "placement_cli.app.options",
    "placement_cli.app.console",
    "placement_cli.app.report",
    "placement_cli.app.dispatch",
    "placement_cli.app.config",
    "placement_cli.app.stagecmd",
    "placement_cli.app.solve_cli",
    "placement_cli.app.values",
    "placement_cli.app.summary",
    "placement_cli.core",
    "placement_cli.formats.artifact",
    "placement_cli.formats.checking",
    "placement_cli.formats.structs",
    "placement_cli.ir",
    "placement_cli.pipeline",
    "placement_cli.algorithms",
    "placement_cli.frontends.lower.options",
    "placement_cli.views.tree_sniff",
)
# Never on a JSON stage's start-up: the command line's typer (and its click), the
# terminal's rich, the YAML reader, the models' pydantic, numpy and networkx.
NEVER = ("typer", "click", "rich", "yaml", "pydantic", "numpy", "networkx")
# The solver's modules a `solve` imports only when it runs them (`solve.driver`,
# `solve.exact.entry`): the seed heuristic, the complete search, the results without an
# assignment, and the exact method's branch and reduce search, bounds and dead-end
# elimination. The 7-block example is proven by the reductions alone, so its `solve`
# runs none of them (~2 ms of its start-up, measured).
DEFERRED_SOLVER = (
    "placement_cli.algorithms.solve.heuristic",
    "placement_cli.algorithms.solve.loops",
    "placement_cli.algorithms.solve.complete",
    "placement_cli.algorithms.solve.search",
    "placement_cli.algorithms.solve.outcomes",
    "placement_cli.algorithms.solve.exact.search",
    "placement_cli.algorithms.solve.exact.arraysearch",
    "placement_cli.algorithms.solve.exact.listsearch",
    "placement_cli.algorithms.solve.exact.dense",
    "placement_cli.algorithms.solve.exact.primal",
    "placement_cli.algorithms.solve.exact.bounds",
    "placement_cli.algorithms.solve.exact.dominance",
)


@cache
def imported(*argv: str, code: str = LAUNCH, cwd: str | None = None) -> frozenset[str]:
    """Every module a process running `code` (with `argv`) has imported when it ends,
    run in `cwd` (by default a folder outside the checkout: `-c` imports from its
    folder first). `code` other than the launcher's: the modules it leaves."""
    if code != LAUNCH:
        code = code + "\n" + AFTER
    r = subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        cwd=cwd or tempfile.gettempdir(),
    )
    assert r.returncode == 0, r.stderr[-2000:]
    line = next(x for x in r.stderr.splitlines()[::-1] if x.startswith("@modules "))
    # A module written by the code itself (`__main__`) or built in is no import.
    return frozenset(line.split()[1:]) - {"__main__"}


def allowed(libs: tuple[str, ...], project: tuple[str, ...]) -> frozenset[str]:
    """The interpreter's start, the closure of `libs`, and the parents of `project`."""
    out = set(imported(code="pass"))
    if libs:
        out |= imported(code="import " + ", ".join(libs))
    for prefix in project:
        parts = prefix.split(".")
        out |= {".".join(parts[:i]) for i in range(1, len(parts))}
    return frozenset(out)


def outside(mods: frozenset[str], libs: tuple[str, ...], project: tuple[str, ...]) -> set[str]:
    """The modules of `mods` outside the allow-list."""
    ok = allowed(libs, project)
    return {
        m for m in mods if m not in ok and not any(m == p or m.startswith(p + ".") for p in project)
    }


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 7-block example as JSON and as YAML, in a folder with no project file above
    it (a configuration file found is read, with `tomllib`)."""
    d = tmp_path_factory.mktemp("plans")
    (d / "plan.json").write_bytes(orjson.dumps(yaml.safe_load(EXAMPLE.read_text())))
    shutil.copy(EXAMPLE, d / "plan.yaml")
    return d


def test_version_imports_nothing_but_the_launcher() -> None:
    mods = imported("--version")
    # `from __future__ import annotations` imports `__future__` (~0.1 ms); `gc` is built in.
    assert outside(mods, ("__future__", "gc"), ("placement_cli.app.launch",)) == set()
    assert "placement_cli.app.launch" in mods  # the check sees the launcher's imports


@pytest.mark.parametrize(
    "argv",
    [
        ("solve", "{d}/plan.json", "-o", "{d}/out.json"),
        ("solve", "{d}/plan.json", "-q"),
        ("prune", "{d}/plan.json", "--format", "json", "-o", "{d}/p.json"),
        ("validate", "{d}/plan.json"),
        ("run", "{d}/plan.json", "--out-dir", "{d}/run", "-q"),
    ],
)
def test_a_json_stage_imports_only_its_path(plans: Path, argv: tuple[str, ...]) -> None:
    mods = imported(*(a.format(d=plans) for a in argv), cwd=str(plans))
    assert outside(mods, PLAIN_STAGE_LIBS, STAGE_PROJECT) == set()
    assert not mods & set(NEVER)
    assert "tempfile" not in mods  # a file is written without it (`io._temporary`)
    assert "pathlib" not in mods  # paths are spelled without it (`core.paths`)
    assert "typing_extensions" not in mods  # msgspec without it (`core/start.py`)


@pytest.mark.parametrize("method", ["auto", "exact"])
def test_a_solve_the_exact_method_proves_imports_no_search(plans: Path, method: str) -> None:
    mods = imported("solve", str(plans / "plan.json"), "--method", method, "-q", cwd=str(plans))
    assert "placement_cli.algorithms.solve.exact.entry" in mods  # the exact method ran
    assert mods.isdisjoint(DEFERRED_SOLVER)


def test_the_deferred_solver_modules_are_imported_where_they_run(plans: Path) -> None:
    """The list above names real modules: the heuristic method imports its own."""
    mods = imported(
        "solve", str(plans / "plan.json"), "--method", "heuristic", "-q", cwd=str(plans)
    )
    assert {
        "placement_cli.algorithms.solve.heuristic",
        "placement_cli.algorithms.solve.loops",
        "placement_cli.algorithms.solve.complete",
    } <= mods
    assert all(importlib.util.find_spec(m) is not None for m in DEFERRED_SOLVER)


def test_yaml_is_imported_for_yaml_input_only(plans: Path) -> None:
    mods = imported("solve", str(plans / "plan.yaml"), "-q", cwd=str(plans))
    assert "yaml" in mods  # the reader that input needs
    extra = outside(mods, (*PLAIN_STAGE_LIBS, "yaml"), STAGE_PROJECT)
    assert extra == set()
    assert not mods & {"typer", "rich", "pydantic", "numpy"}


@pytest.mark.parametrize("argv", [("--help",), ("solve", "--help"), ("lower", "--help")])
def test_help_builds_no_solver_and_no_model(argv: tuple[str, ...]) -> None:
    """typer prints the help from the commands' declarations: neither the solvers, the
    load path, the formats' models and `Struct`s, nor numpy, pydantic or YAML."""
    mods = imported(*argv)
    assert "typer" in mods
    heavy = {"numpy", "pydantic", "yaml", "networkx"}
    project = {m for m in mods if m.startswith("placement_cli.")}
    assert not mods & heavy
    # The engine commands' declarations read the engine registry and options (the one
    # engine list, no engine package): nothing else of the engine layer.
    declarations = {
        "placement_cli.engines",
        "placement_cli.engines.backends",
        "placement_cli.engines.base",
        "placement_cli.engines.options",
        "placement_cli.engines.registry",
        "placement_cli.engines.require",
    }
    assert not {
        m
        for m in project - declarations
        if m.startswith(("placement_cli.pipeline.load", "placement_cli.formats.structs"))
        or m.startswith(("placement_cli.algorithms.solve.driver", "placement_cli.engines."))
        and not m.startswith("placement_cli.engines.backends.")
    }
    assert not mods & {"duckdb", "datafusion", "polars", "pyarrow", "adbc_driver_manager"}
    # A command's help builds that command only (`cli.application`): not `tree`'s options.
    assert ("placement_cli.ir.tree.options" in mods) == (argv == ("--help",))


def test_the_check_sees_an_import_outside_the_list() -> None:
    # The check itself: a process that imports tempfile and the typer command line
    # after the launcher is caught, and with both allowed it passes.
    code = "import tempfile; import placement_cli.app.cli"
    mods = imported(code=code)
    extra = outside(mods, PLAIN_STAGE_LIBS, STAGE_PROJECT)
    assert {"tempfile", "typer", "placement_cli.app.cli"} <= extra
    assert outside(mods, (*PLAIN_STAGE_LIBS, "tempfile", "typer"), ("placement_cli",)) == set()


def test_msgspec_without_typing_extensions_reads_types_as_before() -> None:
    """`core.start.import_msgspec`: msgspec falls back to `typing`'s three names, which
    are the same on Python 3.11+; `typing_extensions` is importable afterwards."""
    code = (
        "from placement_cli.core.start import import_msgspec; import_msgspec()\n"
        "import sys, typing, msgspec, msgspec._utils as u\n"
        "assert 'typing_extensions' not in sys.modules\n"
        "assert u._get_type_hints is typing.get_type_hints\n"
        "import typing_extensions as te, pydantic\n"
        "assert (u.Required, u.NotRequired) == (te.Required, te.NotRequired)\n"
        "class P(msgspec.Struct):\n"
        "    a: typing.Annotated[int, msgspec.Meta(ge=0)]\n"
        "    b: typing.Literal['x', 'y'] = 'x'\n"
        'print(msgspec.json.decode(b\'{"a": 1, "b": "y"}\', type=P))\n'
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "P(a=1, b='y')\n"
