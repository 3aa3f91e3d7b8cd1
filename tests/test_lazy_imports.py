"""Every import inside a function of `placement_cli`, of the package's own modules or of
a heavy dependency, says why it is not at the top of its module.

A function-level import is the way to keep a module's import off the start-up of the
commands that do not need it (docs/startup.md); it is also how an import that costs
nothing ends up hidden in a function for no reason. So each one carries a comment
directly above it (above the run of imports it belongs to) starting `# Lazy:`, which
names what it avoids loading and its measured cost; an import that costs nothing at
start-up belongs at the top of its module.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "placement_cli"
HEAVY = frozenset(
    (
        "numpy",
        "pyarrow",
        "duckdb",
        "datafusion",
        "psycopg",
        "yaml",
        "pydantic",
        "typer",
        "rich",
        "networkx",
    )
)


# A measured cost in the comment: `~30 ms`, `0.2 s`.
COST = re.compile(r"\d+(?:\.\d+)? ?m?s\b")


def _watched(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules of `node` that need a reason to be imported in a function."""
    if isinstance(node, ast.ImportFrom):
        if node.level:  # a relative import: the package's own module
            return ["." * node.level + (node.module or "")]
        names = [node.module or ""]
    else:
        names = [a.name for a in node.names]
    return [n for n in names if n.split(".")[0] in HEAVY or n.split(".")[0] == "placement_cli"]


def _statement_lists(fn: ast.AST) -> list[list[ast.stmt]]:
    """Every statement list inside a function (its body, an `if`'s branches, a `try`'s
    handlers, ...), nested functions included."""
    out = []
    for node in ast.walk(fn):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                out.append(stmts)
        for handler in getattr(node, "handlers", ()):
            out.append(handler.body)
        for case in getattr(node, "cases", ()):
            out.append(case.body)
    return out


def _comment_above(lines: list[str], lineno: int) -> list[str]:
    """The comment lines directly above line `lineno` (1-based), top first."""
    out: list[str] = []
    i = lineno - 2
    while i >= 0 and lines[i].lstrip().startswith("#"):
        out.insert(0, lines[i].strip())
        i -= 1
    return out


def unexplained(path: Path, root: Path = ROOT) -> list[str]:
    """`path:line: module` of each function-level import in `path` without its `# Lazy:`
    comment naming a cost; consecutive imports share the comment above the first of them."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    tree = ast.parse(text, str(path))
    seen: set[int] = set()
    found: list[tuple[int, str]] = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for stmts in _statement_lists(fn):
            if id(stmts) in seen:
                continue
            seen.add(id(stmts))
            first = None  # the first import of the current run of imports
            for stmt in stmts:
                if not isinstance(stmt, ast.Import | ast.ImportFrom):
                    first = None
                    continue
                first = first or stmt
                comment = _comment_above(lines, first.lineno)
                if comment and comment[0].startswith("# Lazy:") and COST.search(" ".join(comment)):
                    continue
                found += [(stmt.lineno, m) for m in _watched(stmt)]
    rel = path.relative_to(root)
    return [f"{rel}:{line}: {m}" for line, m in sorted(found)]


def test_every_function_level_import_says_why_it_is_lazy():
    found = [f for path in sorted(PACKAGE.rglob("*.py")) for f in unexplained(path)]
    assert not found, (
        "function-level imports without a `# Lazy: what it avoids loading (cost, measured)`"
        " comment directly above (or move them to the top of the module):\n" + "\n".join(found)
    )


def test_the_check_sees_what_it_should(tmp_path):
    # The checker itself: nested statement lists, runs of imports, relative imports, and
    # what it leaves alone (standard library, module level, TYPE_CHECKING blocks).
    src = tmp_path / "m.py"
    src.write_text(
        "from typing import TYPE_CHECKING\n"
        "import numpy\n"
        "if TYPE_CHECKING:\n"
        "    from placement_cli.core import io\n"
        "def f(x):\n"
        "    import json\n"
        "    if x:\n"
        "        from placement_cli.core.io import dumps\n"
        "    # Lazy: numpy (~60 ms, measured), only for x.\n"
        "    import numpy as np\n"
        "    from placement_cli.ir import graph\n"
        "    y = 1\n"
        "    # Lazy: pydantic, for no measured reason\n"
        "    from pydantic import BaseModel\n"
        "    try:\n"
        "        from . import sibling\n"
        "    except ImportError:\n"
        "        import yaml.loader\n"
        "    def g():\n"
        "        import rich\n"
    )
    assert unexplained(src, tmp_path) == [
        "m.py:8: placement_cli.core.io",
        "m.py:14: pydantic",
        "m.py:16: .",
        "m.py:18: yaml.loader",
        "m.py:20: rich",
    ]


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _targets(
    node: ast.Import | ast.ImportFrom, here: str, is_pkg: bool, known: set[str]
) -> set[str]:
    """The package's modules an import statement in module `here` loads by name (a
    `from m import x` also names `m.x`, which is a module when `x` is one)."""
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = here.split(".") if is_pkg else here.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            mod = ".".join([*base, *([node.module] if node.module else [])])
        else:
            mod = node.module or ""
        names = [mod, *(f"{mod}.{a.name}" for a in node.names)]
    else:
        names = [a.name for a in node.names]
    return {n for n in names if n in known}


def hidden_cycles(package: Path, root: Path) -> list[str]:
    """`a -> b` for each function-level import in module a of module b that would close
    a cycle at the top of a's module: b reaches a through module-level imports (not
    counting a package's own parents, which Python has loaded before any submodule)."""
    files = {_module_name(p, root): p for p in sorted(package.rglob("*.py"))}
    known = set(files)
    top: dict[str, set[str]] = {}
    lazy: list[tuple[str, str, int]] = []
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        is_pkg = path.name == "__init__.py"
        top[name] = set()
        module_level = list(tree.body)
        while module_level:
            stmt = module_level.pop()
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                top[name] |= _targets(stmt, name, is_pkg, known)
            elif isinstance(stmt, ast.If) and "TYPE_CHECKING" not in ast.unparse(stmt.test):
                module_level += stmt.body + stmt.orelse
            elif isinstance(stmt, ast.Try):
                module_level += stmt.body + [s for h in stmt.handlers for s in h.body]
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                for node in ast.walk(fn):
                    if isinstance(node, ast.Import | ast.ImportFrom):
                        lazy += [
                            (name, t, node.lineno) for t in _targets(node, name, is_pkg, known)
                        ]

    def reaches(start: str, goal: str) -> bool:
        seen, stack = set(), [start]
        while stack:
            m = stack.pop()
            if m == goal:
                return True
            if m not in seen:
                seen.add(m)
                stack += top.get(m, ())
        return False

    out = []
    for a, b, line in lazy:
        related = a == b or a.startswith(b + ".") or b.startswith(a + ".")
        if not related and reaches(b, a):
            out.append(f"{files[a].relative_to(root)}:{line}: {a} -> {b}")
    return sorted(out)


def test_no_function_level_import_hides_a_cycle():
    # Each lazy import is there for what it keeps off start-up (the test above), never
    # because moving it to the top would make two modules import each other.
    found = hidden_cycles(PACKAGE, ROOT)
    assert not found, "function-level imports that stand in for an import cycle:\n" + "\n".join(
        found
    )


def test_the_cycle_check_sees_a_cycle(tmp_path):
    pkg = tmp_path / "p"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from p import b\n")
    (pkg / "b.py").write_text("def f():\n    from p.a import x\n    from . import c\n")
    (pkg / "c.py").write_text("import p.d\n")
    (pkg / "d.py").write_text("")
    assert hidden_cycles(pkg, tmp_path) == ["p/b.py:2: p.b -> p.a"]
