"""Running the stages and building artifacts: `Run` is the one driver.

An artifact (format 2, see docs/format.md) carries the compact normalised plan and
every earlier stage's section. It is read once (`placement_cli.pipeline.loading`); each earlier
section is then checked against the plan by its stage (`placement_cli.pipeline.registry`) before its
decision is reused, and a section that does not hold is exit 3 with
`FILE: section.path: message`.

`Run` runs each stage at most once, its requirements first, either by checking the
section the input carried or by computing it. `load`, `Loaded` and `parse_plan` are
importable from here too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from placement_cli import ARTIFACT_FORMAT_VERSION as FORMAT_VERSION
from placement_cli.core.errors import InputError, Problem
from placement_cli.core.problems import validation_problems
from placement_cli.formats.artifact import fragment
from placement_cli.ir.normalize import normalize, plan_fragment
from placement_cli.pipeline.loading import Loaded, load, parse_plan
from placement_cli.pipeline.registry import STAGES, get, upto
from placement_cli.pipeline.stage import Deferred

__all__ = ["STAGES", "Loaded", "Run", "load", "parse_plan", "validation_problems"]


class Run:
    """Runs stages on demand, each at most once, checking what the input carried.

    >>> from placement_cli.ir.graph import build_graph
    >>> from placement_cli.formats.plan import Plan
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a"],
    ...     "blocks": [{"id": "x", "terminator": {"kind": "return"}}]}))
    >>> r = Run(Loaded("<doc>", g))
    >>> r.run("islands")
    >>> r.status, sorted(r.sections), r.artifact("solve")["solve"]["assignment"]
    ('ok', ['fuse', 'islands', 'prune', 'scc', 'solve'], {'x': 'a'})
    """

    def __init__(self, loaded: Loaded, options: dict[str, Any] | None = None) -> None:
        self.loaded = loaded
        self.g = loaded.graph
        self.options: dict[str, Any] = dict(options or {})
        self.sections: dict[str, Any] = {}  # checked or computed sections only
        self.values: dict[str, Any] = {}
        self.results: dict[str, Any] = {}  # the passes' own result objects, when computed
        self.statuses: dict[str, str] = {}
        self.diagnostics: list[dict[str, Any]] = list(loaded.diagnostics)
        # What this process raised, for stderr: a pipe's later stages do not repeat
        # the warnings an earlier stage already printed.
        self.new_diagnostics: list[dict[str, Any]] = list(loaded.new_diagnostics)
        self.timings: list[tuple[str, float]] = []
        # Work one section check hands to a later one in this process (the block indices
        # of the ids `prune.domains` lists, which `solve.assignment` lists again).
        self.shared: dict[str, Any] = {}
        self._fragments: dict[str, Any] = {}  # rendered sections (`artifact(raw_plan=True)`)
        # Told the name of each phase as it starts (the CLI's progress display on a
        # terminal); None: nobody is watching.
        self.progress: Callable[[str], None] | None = None

    @property
    def status(self) -> str:
        return self.status_upto(STAGES[-1])

    @property
    def infeasible(self) -> bool:
        return self.status == "infeasible"

    def status_upto(self, kind: str) -> str:
        """The artifact status after the stages up to `kind`: the last deciding stage's
        (solve's when it ran: fuse and islands only follow it)."""
        status = "ok"
        for stage in upto(kind):
            status = self.statuses.get(stage, status)
        return status

    @contextmanager
    def timed(self, phase: str) -> Iterator[None]:
        if self.progress is not None:
            self.progress(phase)
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings.append((phase, time.perf_counter() - start))

    def value(self, stage: str) -> Any:
        """The stage's in-memory result (running it, and what it requires, if needed)."""
        self.run(stage)
        got = self.values[stage]
        if isinstance(got, Deferred):  # proven when checked, built now that it is read
            got = self.values[stage] = got.build()
        return got

    # The per-stage accessors of the earlier driver, kept for library callers.
    def domains(self) -> tuple[int, ...]:
        """Pruned domains (target bitsets per block)."""
        return self.value("prune")  # type: ignore[no-any-return]

    def scc(self) -> Any:
        """The `SccResult`."""
        return self.value("scc")

    def assignment(self) -> tuple[int, ...] | None:
        """Target per block (None when solve found no placement)."""
        return self.value("solve")  # type: ignore[no-any-return]

    def fused(self) -> Any:
        """The `FuseResult`."""
        return self.value("fuse")

    def islands(self) -> Any:
        """The `IslandsResult`."""
        return self.value("islands")

    def run(self, stage: str) -> None:
        """Run `stage` (and what it requires) once: check the input's section, or compute."""
        if stage in self.values:
            return
        st = get(stage)
        for req in st.requires:
            self.run(req)
        given = self.loaded.data.get(stage)
        try:
            if given is not None:
                with self.timed(f"check {stage}"):
                    out = st.check(self, given)
            else:
                with self.timed(stage):
                    out = st.compute(self, self.options.get(stage))
                for d in out.diagnostics:
                    js = d.to_json()
                    js["stage"] = stage
                    self.diagnostics.append(js)
                    self.new_diagnostics.append(js)
                if out.result is not None:
                    self.results[stage] = out.result
        except InputError as exc:
            # An earlier stage's section of the input artifact does not hold: name the file.
            raise exc.with_source(self.loaded.source) from None
        self.values[stage] = out.value
        self.sections[stage] = out.section
        if out.status is not None:
            self.statuses[stage] = out.status
        if given is not None and len(self.loaded.data) == sum(
            s in self.values for s in self.loaded.data
        ):
            # Every section of the input is checked: its top-level status must agree.
            last = max(self.loaded.data, key=STAGES.index)
            if self.loaded.status != self.status_upto(last):
                raise InputError(
                    [
                        Problem(
                            "status",
                            f"is '{self.loaded.status}', but the sections say '{self.status_upto(last)}'",
                        )
                    ],
                    self.loaded.source,
                )

    def artifact(self, kind: str, raw_plan: bool = False) -> dict[str, Any]:
        """The artifact of stage `kind` (run it first) as JSON data. With `raw_plan`,
        the plan and the sections are bytes for `placement_cli.formats.artifact.render` /
        `render_parts` in JSON only (an `orjson.Fragment` for the plan's bytes as read
        when the input was an artifact, else `artifact.Raw` pieces rendered once and
        reused by every later artifact); a bare `orjson.dumps` of such an artifact
        needs `render`'s `default`."""
        self.run(kind)
        mine = set(upto(kind))
        plan: Any = None
        if raw_plan:
            import orjson

            # The bytes read, or the normalised plan rendered once for every artifact.
            plan = (
                orjson.Fragment(self.loaded.raw_plan)
                if self.loaded.raw_plan is not None
                else plan_fragment(self.g)
            )
        art: dict[str, Any] = {
            "format_version": FORMAT_VERSION,
            "kind": kind,
            "status": self.status_upto(kind),
            "plan": normalize(self.g) if plan is None else plan,
            "diagnostics": [
                d for d in self.diagnostics if d.get("stage") in mine or d.get("stage") == "lower"
            ],
        }
        art.update(self.loaded.extra)
        for stage in upto(kind):
            art[stage] = self.sections[stage] if plan is None else self._section_fragment(stage)
        return art

    def _section_fragment(self, stage: str) -> Any:
        """A section as the bytes `render` writes for it, rendered once: `run` writes the
        prune section into five artifacts, the scc section into four, and so on."""
        got = self._fragments.get(stage)
        if got is None:
            got = self._fragments[stage] = fragment(self.sections[stage])
        return got
