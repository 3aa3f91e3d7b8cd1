"""The `Stage` protocol: a frozen object with a name, the stages it requires, a typed
options model, a summary line, and two ways to produce its result: `compute` it, or
`check` the section an input artifact carries and rebuild the result from it. Both read
the run through `StageRun`; the section's model is named in the registry, and what a
`check` uses to report is in `placement_cli.pipeline.checks`.

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
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

if TYPE_CHECKING:
    from placement_cli.core.diagnostics import Diagnostic
    from placement_cli.ir.indexed import Graph


class StageRun(Protocol):
    """What a stage reads of the run it is part of (`placement_cli.pipeline.run.Run`
    is one): the plan's graph, the earlier stages' values, the stages' options, and
    work one section check hands to a later one."""

    g: Graph
    options: dict[str, Any]
    shared: dict[str, Any]

    def value(self, stage: str) -> Any: ...


class Output(msgspec.Struct, frozen=True):
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


class Stage(msgspec.Struct, frozen=True):
    name: str
    requires: tuple[str, ...]
    options: type[Any]  # a frozen Struct (validated on construction)
    compute: Callable[[StageRun, Any], Output]
    # check(run, section data) -> Output: verify a read section (JSON data of checked
    # types) against the plan and the checked earlier stages; raise InputError (paths
    # under `name.`) when it fails.
    check: Callable[[StageRun, Any], Output]
    doc: str = ""
    # summary(section) -> the stage's part of the human summary on stderr ("" for none)
    summary: Callable[[dict[str, Any]], str] = lambda sec: ""
