"""Reading a plan or an artifact once, running the missing stages, and building artifacts.

An artifact (format 2, see docs/format.md) carries the compact normalised plan and
every earlier stage's section. It is parsed once, straight from bytes into strict
models (`placement_cli.sections`); each earlier section is then checked against the
plan by its stage (`placement_cli.stages`) before its decision is reused, and a
section that does not hold is exit 3 with `FILE: section.path: message`.

`Run` is the one driver: it runs each stage at most once, its requirements first,
either by checking the section the input carried or by computing it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel, ValidationError

from placement_cli import ARTIFACT_FORMAT_VERSION as FORMAT_VERSION
from placement_cli.errors import InputError, Problem
from placement_cli.graph import Graph, build_graph
from placement_cli.io import gc_paused, is_json, parse_document, read_bytes, source_name
from placement_cli.model import Plan
from placement_cli.problems import brief, validation_problems
from placement_cli.stages import STAGES, get, upto

__all__ = ["STAGES", "Loaded", "Run", "load", "parse_plan", "validation_problems"]

# Where a diagnostic's stage sorts: the front end first, then the pipeline's stages.
_ORDER = {"lower": -1, **{s: i for i, s in enumerate(STAGES)}}


class Loaded:
    """What was read: the source name, the checked plan's graph, and for an artifact
    its (parsed, not yet checked) sections, diagnostics and status."""

    def __init__(
        self,
        source: str,
        graph: Graph,
        sections: dict[str, Any] | None = None,
        diagnostics: list[dict[str, Any]] | None = None,
        status: str = "ok",
        *,
        models: dict[str, BaseModel] | None = None,
        extra: dict[str, Any] | None = None,
        new_diagnostics: list[dict[str, Any]] | None = None,
    ) -> None:
        self.source = source
        self.graph = graph
        self.models: dict[str, BaseModel] = dict(models or {})
        for name, raw in (sections or {}).items():
            # Sections given as plain data (library callers) are parsed like a file's.
            model_cls = get(name).section
            try:
                self.models[name] = model_cls.model_validate(raw)
            except ValidationError as exc:
                raise InputError(validation_problems(exc, f"{name}."), source) from None
        self._sections = sections
        self.diagnostics = list(diagnostics or [])
        self.status = status
        self.extra = dict(extra or {})  # sections of front ends ("lower"), carried as they are
        self.new_diagnostics = list(new_diagnostics or [])  # raised while loading (front end)
        self.raw_plan: bytes | None = None  # the normalised plan's bytes, when read from an artifact

    @property
    def sections(self) -> dict[str, Any]:
        """The input's sections as data (not checked: `Run` checks before reuse)."""
        if self._sections is None:
            self._sections = {k: m.model_dump(by_alias=True, exclude_unset=True) for k, m in self.models.items()}
        return self._sections


def parse_plan(doc: Any, prefix: str = "") -> Graph:
    """Validate a plan document (already parsed) and build its indexed form."""
    with gc_paused():
        try:
            plan = Plan.model_validate(doc)
        except ValidationError as exc:
            raise InputError(validation_problems(exc, prefix)) from None
        return build_graph(plan, prefix)


def _plan_from_json(data: bytes) -> Graph:
    with gc_paused():
        try:
            plan = Plan.model_validate_json(data)
        except ValidationError as exc:
            raise InputError(validation_problems(exc)) from None
        return build_graph(plan)


def load(path: str) -> Loaded:
    """Read a plan file, a body file (through the `lower` front end) or an artifact of
    any stage. Raises InputError (exit 3) naming the file."""
    source = source_name(path)
    try:
        data = read_bytes(path)
        json_input = is_json(path, data)
        if json_input and b'"format_version"' not in data and b'"bodies"' not in data:
            # The common case, a JSON plan: pydantic's own JSON parser validates while
            # parsing, about twice as fast as parsing to dicts and validating those.
            return Loaded(source, _plan_from_json(data))
        if json_input and b'"bodies"' not in data:
            return _artifact_from_json(data, source)
        with gc_paused():
            doc = parse_document(path, data)
        if not isinstance(doc, dict):
            raise InputError([Problem("", "a plan file is a mapping at the top level")])
        if "bodies" in doc:
            return _lower(doc, source)
        if "format_version" in doc:
            return _artifact(_validate_artifact(lambda: _artifact_model().model_validate(doc), doc.get("format_version")), source)
        return Loaded(source, parse_plan(doc))
    except InputError as exc:
        raise exc.with_source(source) from None


def _lower(doc: dict[str, Any], source: str) -> Loaded:
    # --- front-end hook (the `lower` command's module; only body files get here) ---
    from placement_cli.lower import lower_to_plan  # type: ignore[import-not-found,unused-ignore]

    plan_doc, lower_section, diagnostics = lower_to_plan(doc, source)
    diags = []
    for d in diagnostics or ():
        js = d.to_json() if hasattr(d, "to_json") else dict(d)
        js.setdefault("stage", "lower")
        diags.append(js)
    extra = {"lower": lower_section} if lower_section is not None else {}
    return Loaded(source, parse_plan(plan_doc), diagnostics=diags, extra=extra, new_diagnostics=diags)


def _artifact_model() -> type[BaseModel]:
    from placement_cli.sections import Artifact

    return Artifact


def _validate_artifact(validate: Any, version: Any = None) -> Any:
    try:
        with gc_paused():
            return validate()
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        for err in errors:
            if tuple(err["loc"]) == ("format_version",):
                # An old artifact fails everywhere; the version is the one thing to say.
                got = err.get("input", version)
                raise InputError([Problem(
                    "format_version",
                    f"unsupported artifact version {got!r}; this tool reads {FORMAT_VERSION} "
                    "(run the stage again on the plan file to get a current artifact)",
                )]) from None
        problems = validation_problems(exc)
        for i, err in enumerate(errors):
            loc = tuple(err["loc"])
            if loc == ("kind",):
                problems[i] = Problem("kind", f"not an artifact this tool reads: {err.get('input')!r} (expected one of {', '.join(STAGES)})")
            elif loc == ("status",):
                problems[i] = Problem("status", f"expected 'ok' or 'infeasible' (proven) or 'unsolved' (stopped by a limit), got {brief(err.get('input'))}")
        raise InputError(problems) from None


def _artifact_from_json(data: bytes, source: str) -> Loaded:
    loaded = _artifact(_validate_artifact(lambda: _artifact_model().model_validate_json(data)), source)
    loaded.raw_plan = _plan_span(data)
    return loaded


_PLAN_KEY = b'\n  "plan": '
_NEXT_KEY = b',\n  "prune": '


def _plan_span(data: bytes) -> bytes | None:
    r"""The plan's bytes in an artifact this tool wrote (its layout puts every top-level
    key on its own line at indent 2, `plan` directly before `prune`), or None.

    The plan an artifact carries is already normalised, so writing these bytes again
    gives what normalising the checked plan would, without the cost (a third of a
    stage's time on large plans). Anything not in that layout is normalised afresh.

    >>> _plan_span(b'{\n  "kind": "prune",\n  "plan": {\n    "a": 1\n  },\n  "prune": {}\n}\n')
    b'{\n    "a": 1\n  }'
    >>> _plan_span(b'{"plan": {}, "prune": {}}') is None
    True
    """
    start = data.find(_PLAN_KEY)
    end = data.find(_NEXT_KEY, start)
    if start < 0 or end < 0:
        return None
    span = data[start + len(_PLAN_KEY) : end]
    if not (span.startswith(b"{\n") and span.endswith(b"\n  }")):
        return None
    try:
        import orjson

        if not isinstance(orjson.loads(span), dict):
            return None
    except orjson.JSONDecodeError:
        return None
    return span


def _artifact(art: Any, source: str) -> Loaded:
    kind = art.kind
    want = upto(kind)
    problems = []
    for stage in STAGES:
        present = getattr(art, stage) is not None
        if stage in want and not present:
            problems.append(Problem(stage, f"required section is missing (a {kind} artifact carries every earlier stage's section)"))
        elif stage not in want and present:
            problems.append(Problem(stage, f"unexpected section in a {kind} artifact"))
    for i, d in enumerate(art.diagnostics):
        if d.stage not in _ORDER or (d.stage in STAGES and d.stage not in want):
            problems.append(Problem(f"diagnostics[{i}].stage", f"not a stage of a {kind} artifact: {d.stage!r}"))
    if problems:
        raise InputError(problems)
    with gc_paused():
        g = build_graph(art.plan, "plan.")
    models = {stage: getattr(art, stage) for stage in want}
    diags = [d.model_dump(by_alias=True, exclude_unset=True) for d in art.diagnostics]
    extra = {"lower": art.lower} if art.lower is not None else {}
    return Loaded(source, g, diagnostics=diags, status=art.status, models=models, extra=extra)


class Run:
    """Runs stages on demand, each at most once, checking what the input carried.

    >>> from placement_cli.model import Plan
    >>> g = build_graph(Plan.model_validate({"version": 1, "targets": ["a"],
    ...     "blocks": [{"id": "x", "terminator": {"kind": "return"}}]}))
    >>> r = Run(Loaded("<doc>", g))
    >>> r.run("islands")
    >>> r.status, sorted(r.sections), r.artifact("solve")["solve"]["assignment"]
    ('ok', ['fuse', 'islands', 'prune', 'scc', 'solve'], {'x': 'a'})
    """

    def __init__(self, loaded: Loaded, options: dict[str, BaseModel] | None = None) -> None:
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
        return self.values[stage]

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
        model = self.loaded.models.get(stage)
        try:
            if model is not None:
                with self.timed(f"check {stage}"):
                    out = st.check(self, model)
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
        if model is not None and len(self.loaded.models) == sum(s in self.values for s in self.loaded.models):
            # Every section of the input is checked: its top-level status must agree.
            last = max(self.loaded.models, key=STAGES.index)
            if self.loaded.status != self.status_upto(last):
                raise InputError(
                    [Problem("status", f"is '{self.loaded.status}', but the sections say '{self.status_upto(last)}'")],
                    self.loaded.source,
                )

    def artifact(self, kind: str, raw_plan: bool = False) -> dict[str, Any]:
        """The artifact of stage `kind` (run it first) as JSON data. With `raw_plan`,
        the plan and the sections are bytes (`orjson.Fragment`s, for
        `placement_cli.artifact.render` in JSON only): the plan's as read when the input
        was an artifact, else each rendered once and reused by every later artifact."""
        self.run(kind)
        mine = set(upto(kind))
        plan: Any = None
        if raw_plan:
            import orjson

            from placement_cli.artifact import plan_fragment

            # The bytes read, or the normalised plan rendered once for every artifact.
            plan = orjson.Fragment(self.loaded.raw_plan) if self.loaded.raw_plan is not None else plan_fragment(self.g)
        art: dict[str, Any] = {
            "format_version": FORMAT_VERSION,
            "kind": kind,
            "status": self.status_upto(kind),
            "plan": self.g.normalized if plan is None else plan,
            "diagnostics": [d for d in self.diagnostics if d.get("stage") in mine or d.get("stage") == "lower"],
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
            from placement_cli.artifact import fragment

            got = self._fragments[stage] = fragment(self.sections[stage])
        return got
