"""The `Stage` protocol: a frozen object with a name, the stages it requires, a typed
options model, a summary line, and two ways to produce its result: `compute` it, or
`check` the section an input artifact carries and rebuild the result from it.

The driver (`placement_cli.pipeline.run.Run`) runs each stage exactly once, requirements
first, by reading and checking its section when the input has one and computing it
otherwise. A checked section is reused only when it holds for the plan; otherwise
`check` raises `InputError` with every problem's `section.path`.

`check` gets the section as JSON data whose types are already checked (every field its
model, the registry's `StageInfo.section`, declares, of the declared type): nothing here imports
pydantic, which costs a fifth of a second per process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from placement_cli.core.errors import InputError, Problem
from placement_cli.pipeline.registry import get, section_model

if TYPE_CHECKING:
    from placement_cli.core.diagnostics import Diagnostic
    from placement_cli.pipeline.run import Run


@dataclass(frozen=True, slots=True)
class Output:
    """What a stage produced: the in-memory `value` later stages use, its artifact
    `section`, the diagnostics it raised, and its status (ok, infeasible, unsolved;
    None when the stage does not decide the artifact's status)."""

    value: Any
    section: dict[str, Any]
    diagnostics: tuple[Diagnostic, ...] = ()
    status: str | None = None
    result: Any = None  # the pass's own result object, when computed (for library users)


class Deferred:
    """A stage's value built on first use (`Run.value` builds it): a checked section
    is proven before the check returns, but the in-memory object later stages would
    read (the `SccResult` with one object per component) is built only if one does.

    >>> d = Deferred(lambda: 42)
    >>> d.build()
    42
    """

    __slots__ = ("build",)

    def __init__(self, build: Callable[[], Any]) -> None:
        self.build = build


@dataclass(frozen=True, slots=True)
class Stage:
    name: str
    requires: tuple[str, ...]
    options: type[Any]  # a frozen dataclass (validated on construction)
    compute: Callable[[Run, Any], Output]
    # check(run, section data) -> Output: verify a read section (JSON data of checked
    # types) against the plan and the checked earlier stages; raise InputError (paths
    # under `name.`) when it fails.
    check: Callable[[Run, Any], Output]
    doc: str = field(default="")
    # summary(section) -> the stage's part of the human summary on stderr ("" for none)
    summary: Callable[[dict[str, Any]], str] = field(default=lambda sec: "")

    @property
    def section(self) -> type[Any]:
        """The pydantic model of the section (its `StageInfo.section` in the registry).
        Imported lazily: a stage given a plan file never reads a section, and building
        the models costs start-up time."""
        return section_model(self.name)  # type: ignore[no-any-return]


class Problems:
    """Collects problems of one section; `raise_if_any` raises them together."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.items: list[Problem] = []

    def add(self, path: str, message: str) -> None:
        self.items.append(Problem(f"{self.prefix}.{path}" if path else self.prefix, message))

    def raise_if_any(self) -> None:
        if self.items:
            raise InputError(self.items)


def first_difference(given: Any, expected: Any, path: str = "") -> tuple[str, str] | None:
    """The first place (path, message) where `given` differs from `expected`, walking
    both in order; numbers compare by value (4 == 4.0).

    >>> first_difference({"a": [1, 2]}, {"a": [1, 3]})
    ('a[1]', 'is 2, but the plan gives 3')
    >>> first_difference({"a": 1.0}, {"a": 1}) is None
    True
    """
    if isinstance(expected, dict) and isinstance(given, dict):
        for k, v in expected.items():
            sub = f"{path}.{k}" if path else str(k)
            if k not in given:
                return sub, "missing"
            d = first_difference(given[k], v, sub)
            if d is not None:
                return d
        for k in given:
            if k not in expected:
                return (f"{path}.{k}" if path else str(k)), "unexpected field"
        return None
    if isinstance(expected, list) and isinstance(given, list):
        for i, (a, b) in enumerate(zip(given, expected, strict=False)):
            d = first_difference(a, b, f"{path}[{i}]")
            if d is not None:
                return d
        if len(given) != len(expected):
            return path, f"has {len(given)} entries, but the plan gives {len(expected)}"
        return None
    if isinstance(given, bool) or isinstance(expected, bool):
        same = given is expected
    else:
        same = given == expected
    if same:
        return None
    return path, f"is {given!r:.60}, but the plan gives {expected!r:.60}"


def compare(pr: Problems, sec: Any, expected: dict[str, Any]) -> None:
    """Add the first difference between a read section and the recomputed one."""
    given = dump(sec)
    if given == expected:  # checked types: no 1 == True confusion in declared fields
        return
    if isinstance(sec, dict):
        # Reported as the section's model reads it (fields in declaration order, so the
        # first unexpected field named is the same whichever order the file has).
        given = dump(get(pr.prefix).section.model_validate(sec))
    diff = first_difference(given, expected)
    pr.add(*(diff or ("", "does not match the section recomputed from the plan")))


def dump(section: Any) -> dict[str, Any]:
    """A read section as JSON data (only the fields it had, aliases restored): the data
    itself, or a pydantic section model dumped."""
    if isinstance(section, dict):
        return section
    return section.model_dump(by_alias=True, exclude_unset=True)  # type: ignore[no-any-return]
