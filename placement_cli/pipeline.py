"""Reading a plan or an artifact, running the missing stages, and building artifacts.

An artifact carries the normalised plan and every earlier stage's section. A stage
given an artifact keeps the earlier sections as they are and reuses their decisions
(the pruned domains, the assignment); whatever it still needs it recomputes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from placement_cli import FORMAT_VERSION
from placement_cli.diagnostics import Diagnostic
from placement_cli.errors import InputError, Problem
from placement_cli.graph import Graph, build_graph
from placement_cli.io import gc_paused, is_json, parse_document, read_bytes, source_name
from placement_cli.model import Plan
from placement_cli.problems import validation_problems

STAGES = ("prune", "scc", "solve", "fuse", "islands")


@dataclass
class Loaded:
    source: str
    graph: Graph
    sections: dict[str, Any] = field(default_factory=dict)
    diagnostics: list[dict[str, Any]] = field(default_factory=list)
    status: str = "ok"


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
    """Read a plan file or an artifact of any stage."""
    source = source_name(path)
    try:
        data = read_bytes(path)
        if is_json(path, data) and b'"format_version"' not in data:
            # The common case, a JSON plan: pydantic's own JSON parser validates while
            # parsing, about twice as fast as parsing to dicts and validating those.
            return Loaded(source, _plan_from_json(data))
        with gc_paused():
            doc = parse_document(path, data)
        if isinstance(doc, dict) and "format_version" in doc:
            return _load_artifact(doc, source)
        if not isinstance(doc, dict):
            raise InputError([Problem("", "a plan file is a mapping at the top level")])
        return Loaded(source, parse_plan(doc))
    except InputError as exc:
        raise exc.with_source(source) from None


def _load_artifact(doc: dict[str, Any], source: str) -> Loaded:
    if doc.get("format_version") != FORMAT_VERSION:
        raise InputError([Problem("format_version", f"unsupported artifact version {doc.get('format_version')!r}; this tool reads {FORMAT_VERSION}")])
    kind = doc.get("kind")
    if kind not in STAGES:
        raise InputError([Problem("kind", f"not an artifact this tool reads: {kind!r} (expected one of {', '.join(STAGES)})")])
    if "plan" not in doc:
        raise InputError([Problem("plan", "required field is missing")])
    g = parse_plan(doc["plan"], "plan.")
    sections = {}
    for stage in STAGES[: STAGES.index(kind) + 1]:
        if stage in doc:
            sections[stage] = doc[stage]
    diags = doc.get("diagnostics", [])
    if not isinstance(diags, list):
        raise InputError([Problem("diagnostics", "expected a list")])
    status = doc.get("status", "ok")
    if status not in ("ok", "infeasible"):
        raise InputError([Problem("status", f"expected 'ok' or 'infeasible', got {status!r}")])
    return Loaded(source, g, sections, list(diags), status)


def _stage_of(diag: dict[str, Any]) -> int:
    stage = diag.get("stage")
    return STAGES.index(stage) if stage in STAGES else 0


class Run:
    """Runs stages on demand, each at most once, reusing what the input carried."""

    def __init__(self, loaded: Loaded, options: dict[str, BaseModel] | None = None) -> None:
        self.loaded = loaded
        self.g = loaded.graph
        self.options = options or {}
        self.sections: dict[str, Any] = dict(loaded.sections)
        self.diagnostics: list[dict[str, Any]] = list(loaded.diagnostics)
        self.infeasible = loaded.status == "infeasible"
        self.results: dict[str, Any] = {}
        self._cache: dict[str, Any] = {}

    def _record(self, stage: str, section: dict[str, Any], diags: tuple[Diagnostic, ...], status: str) -> None:
        self.sections[stage] = section
        for d in diags:
            js = d.to_json()
            js["stage"] = stage
            self.diagnostics.append(js)
        if status == "infeasible":
            self.infeasible = True

    def domains(self) -> tuple[int, ...]:
        if "domains" not in self._cache:
            from placement_cli.passes import prune as mod

            if "prune" in self.sections:
                self._cache["domains"] = mod.from_json(self.sections["prune"], self.g)
            else:
                res = mod.prune(self.g, self.options.get("prune"))  # type: ignore[arg-type]
                self.results["prune"] = res
                self._record("prune", res.to_json(self.g), res.diagnostics, res.status)
                self._cache["domains"] = res.domains
        return self._cache["domains"]  # type: ignore[no-any-return]

    def scc(self) -> Any:
        if "scc" not in self._cache:
            from placement_cli.passes import scc as mod

            self.domains()
            res = mod.scc(self.g, self.options.get("scc"))  # type: ignore[arg-type]
            self.results["scc"] = res
            if "scc" not in self.sections:
                self._record("scc", res.to_json(self.g), (), "ok")
            self._cache["scc"] = res
        return self._cache["scc"]

    def assignment(self) -> tuple[int, ...]:
        if "assignment" not in self._cache:
            from placement_cli.passes import solve as mod

            domains = self.domains()
            comps = self.scc()
            if "solve" in self.sections:
                self._cache["assignment"] = mod.from_json(self.sections["solve"], self.g)
            else:
                res = mod.solve(self.g, domains, comps, self.options.get("solve"))  # type: ignore[arg-type]
                self.results["solve"] = res
                self._record("solve", res.to_json(self.g), res.diagnostics, res.status)
                self._cache["assignment"] = res.assignment
        return self._cache["assignment"]  # type: ignore[no-any-return]

    def fused(self) -> Any:
        if "fuse" not in self._cache:
            from placement_cli.passes import fuse as mod

            assignment = self.assignment()
            res = mod.fuse(self.g, assignment, self.options.get("fuse"))  # type: ignore[arg-type]
            self.results["fuse"] = res
            if "fuse" not in self.sections:
                self._record("fuse", res.to_json(self.g), res.diagnostics, res.status)
            self._cache["fuse"] = res
        return self._cache["fuse"]

    def islands(self) -> Any:
        if "islands" not in self._cache:
            from placement_cli.passes import islands as mod

            fused = self.fused()
            res = mod.islands(self.g, self.assignment(), fused, self.options.get("islands"))  # type: ignore[arg-type]
            self.results["islands"] = res
            if "islands" not in self.sections:
                self._record("islands", res.to_json(self.g), res.diagnostics, res.status)
            self._cache["islands"] = res
        return self._cache["islands"]

    def run(self, stage: str) -> None:
        step = {"prune": self.domains, "scc": self.scc, "solve": self.assignment, "fuse": self.fused, "islands": self.islands}
        try:
            step[stage]()
        except InputError as exc:
            # An earlier stage's section of the input artifact was invalid: name the file.
            raise exc.with_source(self.loaded.source) from None

    def artifact(self, kind: str) -> dict[str, Any]:
        art: dict[str, Any] = {
            "format_version": FORMAT_VERSION,
            "kind": kind,
            "status": "infeasible" if self.infeasible else "ok",
            "plan": self.g.normalized,
            "diagnostics": [d for d in self.diagnostics if _stage_of(d) <= STAGES.index(kind)],
        }
        for stage in STAGES[: STAGES.index(kind) + 1]:
            if stage in self.sections:
                art[stage] = self.sections[stage]
        return art
