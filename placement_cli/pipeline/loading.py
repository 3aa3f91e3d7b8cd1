"""Reading a plan, a body file or an artifact once (`load`): parsed once with orjson (or
`yaml_core`), its types checked without pydantic (a plan by msgspec,
`placement_cli.formats.structs`; sections by `placement_cli.formats.sectioncheck`;
docs/load.md), which accept exactly what the strict models
(`placement_cli.formats.plan`, `placement_cli.formats.sections`) accept; anything else goes to those
models for its messages (docs/load.md). The result, `Loaded`, holds the checked plan's
graph and the artifact's sections, not yet checked against the plan: the driver
(`placement_cli.pipeline.run.Run`) checks each before reusing it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import orjson

from placement_cli import ARTIFACT_FORMAT_VERSION as FORMAT_VERSION
from placement_cli.core.errors import InputError, Problem
from placement_cli.core.io import STDIN, gc_paused, is_json, parse_document, source_name
from placement_cli.core.problems import brief, validation_problems
from placement_cli.formats.checking import Reject
from placement_cli.frontends.lower.options import LowerOptions
from placement_cli.ir.graph import Graph, build_graph, checked_graph, parse_plan
from placement_cli.pipeline.artifact_bytes import loads, parse_artifact, plan_span
from placement_cli.pipeline.kinds import is_mir_input, one_body, read_input, say_what_it_is
from placement_cli.pipeline.registry import (
    STAGES,
    artifact_model,
    artifact_struct,
    section_model,
    section_struct,
    upto,
)

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["Loaded", "load", "parse_plan"]

# Where a diagnostic's stage sorts: the front end first, then the pipeline's stages.
_ORDER = {"lower": -1, **{s: i for i, s in enumerate(STAGES)}}


def check_section(name: str, value: Any) -> None:
    """Accept stage `name`'s section exactly when its model certainly would (`Reject`
    otherwise): its Struct (`sectioncheck`), as the registry names it."""
    # Lazy: the sections' Structs (~3 ms, measured), only for an artifact: a plan's
    # command never reads a section.
    from placement_cli.formats import sectioncheck

    sectioncheck.check_section(section_struct(name), value, name)


def check_artifact(doc: Any, *, plan: bool = True) -> None:
    """Accept an artifact document exactly when the registry's `artifact_model()`
    certainly would (`sectioncheck.check_artifact` with the registry's Struct)."""
    # Lazy: the sections' Structs (~3 ms, measured), only for an artifact.
    from placement_cli.formats import sectioncheck

    sectioncheck.check_artifact(doc, artifact_struct(), plan=plan)


class _Models(Mapping[str, Any]):
    """The input's sections as pydantic models, each built on first use (library
    callers); membership and iteration cost nothing."""

    def __init__(self, data: dict[str, dict[str, Any]]) -> None:
        self._data = data
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        got = self._built.get(name)
        if got is None:
            got = self._built[name] = section_model(name).model_validate(self._data[name])
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, name: object) -> bool:
        return name in self._data


def _section_data(name: str, raw: Any, source: str) -> dict[str, Any]:
    """A section given as data (library callers), checked like a file's and copied."""
    try:
        check_section(name, raw)
        return orjson.loads(orjson.dumps(raw))  # type: ignore[no-any-return]
    except (Reject, TypeError, orjson.JSONEncodeError):
        pass
    # Lazy: pydantic (~20 ms, measured), only when the fast check refused.
    from pydantic import ValidationError

    try:
        model = section_model(name).model_validate(raw)
    except ValidationError as exc:
        raise InputError(validation_problems(exc, f"{name}."), source) from None
    return model.model_dump(by_alias=True, exclude_unset=True)  # type: ignore[no-any-return]


class Loaded:
    """What was read: the source name, the checked plan's graph, and for an artifact
    its sections (their types checked, not yet checked against the plan), diagnostics
    and status. `data` holds each section as JSON data; `models` gives them as the
    pydantic models of `placement_cli.formats.sections`, built on demand."""

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
        data: dict[str, dict[str, Any]] | None = None,
        config: dict[str, Any] | None = None,
    ) -> None:
        self.source = source
        self.graph = graph
        self.data: dict[str, dict[str, Any]] = dict(data or {})
        for name, model in (models or {}).items():
            self.data[name] = model.model_dump(by_alias=True, exclude_unset=True)
        for name, raw in (sections or {}).items():
            # Sections given as plain data (library callers) are checked like a file's.
            self.data[name] = _section_data(name, raw, source)
        self.models = _Models(self.data)
        self.diagnostics = list(diagnostics or [])
        self.status = status
        self.extra = dict(extra or {})  # sections of front ends ("lower"), carried as they are
        self.new_diagnostics = list(new_diagnostics or [])  # raised while loading (front end)
        # The configuration an artifact was made under (`diff` compares it); not carried
        # on: an artifact records the configuration of the command that wrote it.
        self.config = config
        self.raw_plan: bytes | None = (
            None  # the normalised plan's bytes, when read from an artifact
        )

    @property
    def sections(self) -> dict[str, Any]:
        """The input's sections as data (not checked: `Run` checks before reuse)."""
        return self.data


def _plan_from_doc(doc: Any) -> Graph:
    """A plan parsed from JSON or YAML (plain types only) this process owns: accepted by
    the fast check and built from the document itself, or else validated by the models
    (every message theirs)."""
    try:
        return checked_graph(doc)
    except Reject:
        return parse_plan(doc)


def _plan_from_json(data: bytes) -> Graph:
    # Lazy: pydantic and the plan's models (~110 ms, measured), only when the fast check refused.
    from pydantic import ValidationError

    from placement_cli.formats.plan import (
        Plan,
    )

    with gc_paused():
        try:
            plan = Plan.model_validate_json(data)
        except ValidationError as exc:
            raise InputError(validation_problems(exc)) from None
        return build_graph(plan)


def load(path: str, lower: LowerOptions | None = None, source_format: str | None = None) -> Loaded:
    """Read a plan file, a body file or MIR text (through the `lower` front end) or an
    artifact of any stage. `lower`: settings of the front end for a body (None: the
    file's own). `source_format`
    (`--from`): `hashql-mir` reads MIR text, `body` a body file, a plan or an artifact;
    None decides by the extension, then by the bytes (`pipeline/kinds.py`). Raises
    InputError (exit 3) naming the file; a file of another command's kind (an operator
    tree, a tree artifact, a target profile) is one line saying what it is and which
    command reads it."""
    source = source_name(path)
    data = b""
    try:
        data = read_input(path)
        if not data.strip():
            # In a pipe, an empty input is what a failed earlier stage leaves behind.
            why = "empty input (the previous command failed?)" if path == STDIN else "empty file"
            raise InputError([Problem("", why)])
        if is_mir_input(path, data, source_format):
            # Lazy: the MIR reader (~15 ms, measured), only for MIR text.
            from placement_cli.frontends.mir_text import read_body

            doc = read_body(data, source)
            one_body(doc, source, lower.body if lower is not None else None)
            return _lower(doc, source, lower)
        json_input = is_json(path, data)
        if json_input and b'"bodies"' not in data:
            # Fast accept: a plan decoded and type-checked by msgspec in one pass, an
            # artifact parsed with orjson and checked without pydantic; anything not
            # certainly accepted goes to the models, which give today's messages.
            raw_plan: bytes | None = None
            if b'"format_version"' in data:
                doc, raw_plan = parse_artifact(data)
            else:
                try:
                    # The plan Struct has no `kind` or `plan`: what it accepts is not
                    # an artifact that lost its version.
                    return _plan(source, checked_graph(data))
                except Reject:
                    pass
                doc = loads(data)
                if not _artifact_like(doc):
                    return _plan(source, _plan_from_json(data))
            if doc is not None:
                try:
                    check_artifact(doc, plan=False)
                    loaded = _artifact_doc(doc, source)
                    loaded.raw_plan = raw_plan
                    return loaded
                except Reject:
                    pass
            return _artifact_from_json(data, source, doc)
        with gc_paused():
            doc = parse_document(path, data)
        if not isinstance(doc, dict):
            raise InputError([Problem("", "a plan file is a mapping at the top level")])
        if "bodies" in doc:
            return _lower(doc, source, lower)
        if "format_version" in doc or _artifact_like(doc):
            try:
                check_artifact(doc, plan=False)
                return _artifact_doc(doc, source)
            except Reject:
                return _artifact(
                    _validate_artifact(lambda: _artifact_model().model_validate(doc), doc), source
                )
        return _plan(source, _plan_from_doc(doc))
    except InputError as exc:
        if not is_mir_input(path, data, source_format):
            say_what_it_is(data, source)  # a file of another kind: one line
        raise exc.with_source(source) from None


def _plan(source: str, g: Graph) -> Loaded:
    """A plan read from a file. A plan `placement lower` wrote carries the front end's
    section: it travels on into every artifact, as when the stage lowers the body itself
    (`lower body | islands -` writes what `islands body` writes)."""
    lower = getattr(g.plan, "lower", None)
    return Loaded(source, g, extra={"lower": lower} if isinstance(lower, dict) else None)


def _lower(doc: dict[str, Any], source: str, options: LowerOptions | None = None) -> Loaded:
    # Lazy: the front end and pydantic (0.2 s, measured), only for body files.
    from placement_cli.frontends.lower.stage import lower_to_plan

    plan_doc, lower_section, diagnostics = lower_to_plan(doc, source, options)
    diags = []
    for d in diagnostics or ():
        js = d.to_json() if hasattr(d, "to_json") else dict(d)
        js.setdefault("stage", "lower")
        diags.append(js)
    extra = {"lower": lower_section} if lower_section is not None else {}
    # The front end's document may hold values of its own types: the models read it.
    return Loaded(
        source, parse_plan(plan_doc), diagnostics=diags, extra=extra, new_diagnostics=diags
    )


def _artifact_model() -> type[BaseModel]:
    # The pydantic models (0.2 s, measured), built only when the fast check refused.
    return artifact_model()  # type: ignore[no-any-return]


def _artifact_like(doc: Any) -> bool:
    """Whether a document without `format_version` is an artifact that lost it (a plan
    has neither `kind` nor `plan`): its problems are then an artifact's, the missing
    version among them, not a plan's."""
    return type(doc) is dict and "format_version" not in doc and ("kind" in doc or "plan" in doc)


def _validate_artifact(validate: Any, doc: Any = None) -> Any:
    """The artifact model `validate()` gives, or InputError with every problem of the
    document `doc` (parsed; None when it is not), each naming its key."""
    # Lazy: pydantic (~20 ms, measured), only when an artifact's model reads it.
    from pydantic import ValidationError

    try:
        with gc_paused():
            return validate()
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        for err in errors:
            if tuple(err["loc"]) == ("format_version",) and err["type"] != "missing":
                # An old artifact fails everywhere; the version is the one thing to say.
                got = err.get("input")
                raise InputError(
                    [
                        Problem(
                            "format_version",
                            f"unsupported artifact version {got!r}; this tool reads {FORMAT_VERSION} "
                            "(run the stage again on the plan file to get a current artifact)",
                        )
                    ]
                ) from None
        problems = validation_problems(exc)
        for i, err in enumerate(errors):
            loc = tuple(err["loc"])
            if err["type"] == "missing":
                continue  # "required field is missing", named by its path
            if loc == ("kind",):
                problems[i] = Problem(
                    "kind",
                    f"not an artifact this tool reads: {brief(err.get('input'))} (expected one of {', '.join(STAGES)})",
                )
            elif loc == ("status",):
                problems[i] = Problem(
                    "status",
                    f"expected 'ok' or 'infeasible' (proven) or 'unsolved' (stopped by a limit), got {brief(err.get('input'))}",
                )
        raise InputError(problems + _missing_sections(doc, problems)) from None


def _missing_sections(doc: Any, known: list[Problem]) -> list[Problem]:
    """The sections an artifact of its (valid) kind must carry and does not, when the
    models refused it for something else: a renamed section is then named twice, as
    the unknown key it became and as the section it no longer is."""
    if type(doc) is not dict or doc.get("kind") not in STAGES:
        return []
    said = {p.path for p in known}
    try:
        _sections_present(doc["kind"], lambda stage: doc.get(stage) is not None, [])
    except InputError as exc:
        return [p for p in exc.problems if p.path not in said]
    return []


def _artifact_from_json(data: bytes, source: str, doc: Any) -> Loaded:
    """An artifact the fast check did not accept, validated by the models (`doc`: the
    bytes parsed by orjson, or None)."""
    loaded = _artifact(
        _validate_artifact(lambda: _artifact_model().model_validate_json(data), doc), source
    )
    # Unparsed by orjson, the plan's place cannot be checked: normalised afresh.
    loaded.raw_plan = plan_span(data, doc) if doc is not None else None
    return loaded


def _sections_present(kind: str, present: Callable[[str], bool], diag_stages: list[Any]) -> None:
    """Exactly the sections of the stages up to `kind`, and diagnostics of those stages."""
    want = upto(kind)
    problems = []
    for stage in STAGES:
        has = present(stage)
        if stage in want and not has:
            problems.append(
                Problem(
                    stage,
                    f"required section is missing (a {kind} artifact carries every earlier stage's section)",
                )
            )
        elif stage not in want and has:
            problems.append(Problem(stage, f"unexpected section in a {kind} artifact"))
    for i, stage in enumerate(diag_stages):
        if stage not in _ORDER or (stage in STAGES and stage not in want):
            problems.append(
                Problem(f"diagnostics[{i}].stage", f"not a stage of a {kind} artifact: {stage!r}")
            )
    if problems:
        raise InputError(problems)


def _artifact(art: Any, source: str) -> Loaded:
    """An artifact the models validated (`registry.artifact_model()`)."""
    kind = art.kind
    _sections_present(
        kind, lambda stage: getattr(art, stage) is not None, [d.stage for d in art.diagnostics]
    )
    with gc_paused():
        g = build_graph(art.plan, "plan.")
    want = upto(kind)
    data = {
        stage: getattr(art, stage).model_dump(by_alias=True, exclude_unset=True) for stage in want
    }
    diags = [d.model_dump(by_alias=True, exclude_unset=True) for d in art.diagnostics]
    extra = {"lower": art.lower} if art.lower is not None else {}
    config = art.config.model_dump() if art.config is not None else None
    return Loaded(
        source, g, diagnostics=diags, status=art.status, data=data, extra=extra, config=config
    )


def _artifact_doc(doc: dict[str, Any], source: str) -> Loaded:
    """An artifact document `sectioncheck.check_artifact(doc, plan=False)` accepted (as
    `_artifact` would): raises `Reject` when its plan is not certainly accepted."""
    kind = doc["kind"]
    diagnostics = doc["diagnostics"]
    # The plan's types first (a refusal goes to the models, which read them first), its
    # problems after the sections' presence (the order the models' path reports them).
    problems: InputError | None = None
    try:
        g = checked_graph(doc["plan"], "plan.")
    except InputError as exc:
        problems = exc
    _sections_present(
        kind, lambda stage: doc.get(stage) is not None, [d["stage"] for d in diagnostics]
    )
    if problems is not None:
        raise problems
    data = {stage: doc[stage] for stage in upto(kind)}
    extra = {"lower": doc["lower"]} if doc.get("lower") is not None else {}
    return Loaded(
        source,
        g,
        diagnostics=diagnostics,
        status=doc["status"],
        data=data,
        extra=extra,
        config=doc.get("config"),
    )
