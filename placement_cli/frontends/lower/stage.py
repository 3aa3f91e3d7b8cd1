"""The `lower` stage: body file (or plan) in, plan document out.

Order, as in the reference: eligibility per target -> block splitting -> sizes and
liveness -> transition matrices per edge and path premium per block -> plan.
"""

from __future__ import annotations

from typing import Any

from placement_cli.core.errors import InputError
from placement_cli.core.problems import validation_problems
from placement_cli.formats.body_structs import BodyFile, convert_body, decode_body, from_model
from placement_cli.frontends.lower.compile import compile_file
from placement_cli.frontends.lower.eligibility import analyse
from placement_cli.frontends.lower.emit import emit, piece_edges
from placement_cli.frontends.lower.ir import FileIR
from placement_cli.frontends.lower.options import LowerOptions
from placement_cli.frontends.lower.planmode import lower_plan
from placement_cli.frontends.lower.profile import Compiled, load_profile
from placement_cli.frontends.lower.rules import exclusions, target_rules
from placement_cli.frontends.lower.sizes import ZERO, SizeAnalysis, liveness
from placement_cli.frontends.lower.split import split


def validate_body_file(doc: Any) -> BodyFile:
    """The body file, from parsed data or (faster) from JSON bytes: decoded and checked
    by msgspec (`formats.body_structs`); what that refuses goes to the pydantic model
    (`formats.body`), which says what is wrong, or accepts it and is converted."""
    f = decode_body(doc) if isinstance(doc, bytes) else convert_body(doc)
    if f is not None:
        return f
    # Lazy: the body model (~15 ms after the profile's pydantic, measured), only to say what msgspec
    # refused (or to accept what only pydantic's coercions accept).
    from pydantic import ValidationError

    from placement_cli.formats.body import BodyFile as BodyModel

    try:
        if isinstance(doc, bytes):
            model = BodyModel.model_validate_json(doc)
        else:
            model = BodyModel.model_validate(doc)
    except ValidationError as exc:
        raise InputError(validation_problems(exc)) from None
    return from_model(model)


def parse_body_file(doc: Any, options: LowerOptions | None = None) -> tuple[FileIR, Compiled]:
    """Validate a body document and its profile; index every body."""
    options = options or LowerOptions()
    f = doc if isinstance(doc, BodyFile) else validate_body_file(doc)
    prof = load_profile(
        options.profile if options.profile is not None else f.profile,
        "profile" if options.profile is None else "",
    )
    return compile_file(f, prof, options.body), prof


Result = tuple[dict[str, Any], dict[str, Any] | None, list[dict[str, Any]]]


def lower_body(f: BodyFile, options: LowerOptions) -> Result:
    """Lower a validated body file."""
    fir, prof = parse_body_file(f, options)
    body = fir.bodies[fir.place]
    cap = options.size_cap if options.size_cap is not None else f.size_cap
    mode = options.split or f.split or "runs"
    elig = analyse(body, prof)
    pieces, first, _ = split(
        [b.id for b in body.blocks], elig.stmt_support, elig.term_support, mode
    )
    edges = piece_edges(body, pieces, first)
    succ = [[d for d, _, _ in row] for row in edges]
    live = liveness(body, pieces, succ)
    sizes = SizeAnalysis(fir, prof.path_size, prof.path_names).body_sizes(
        body, [ZERO] * len(body.args)
    )
    low = emit(
        fir,
        body,
        prof,
        elig,
        pieces,
        first,
        live,
        sizes,
        mode,
        None if cap is None else float(cap),
        edges,
    )
    # the rule behind every exclusion (lower.excluded), and the targets' block-level rules
    src = f.bodies[fir.place] if f.names == "hashql-mir" else None
    low.section["excluded"] = exclusions(body, prof, elig, src)
    low.section["target_rules"] = target_rules(prof)
    if fir.warnings:
        # only the placed body's (a callee's unknown paths are its own business)
        prefix = f"bodies[{fir.place}]."
        low.diagnostics[:0] = [
            {"severity": "warning", "code": c, "message": m, "blocks": [b] if b else []}
            for c, b, m in fir.warnings
            if m.startswith(prefix)
        ]
    low.section["diagnostics"] = low.diagnostics
    return low.plan, low.section, low.diagnostics


def lower_to_plan(doc: Any, source: str, options: LowerOptions | None = None) -> Result:
    """(plan document, the `lower` section, diagnostics) for a body file, a plan, or an
    artifact (its plan). `doc` is parsed data, or JSON bytes of a body file.

    >>> doc = {"version": 1, "bodies": [{"name": "f", "locals": {"a": "int"}, "blocks": [
    ...   {"id": "bb0", "statements": [{"assign": "a", "load": {"const": 1}}],
    ...    "terminator": {"kind": "return", "operand": "a"}}]}]}
    >>> plan, sec, diags = lower_to_plan(doc, "f.body.yaml")
    >>> [(b["id"], b["domain"]) for b in plan["blocks"]]
    [('bb0', ['interpreter', 'postgres'])]
    """
    options = options or LowerOptions()
    # MIR text's body file says where its parts were written (frontends/mir_text):
    # problems and warnings are then told at their MIR line and column, in MIR words.
    source_map = getattr(doc, "source_map", None)
    try:
        if isinstance(doc, bytes) or (isinstance(doc, dict) and "bodies" in doc):
            result = lower_body(validate_body_file(doc), options)
            if source_map is not None and isinstance(doc, dict):
                place = options.body if options.body is not None else doc.get("place")
                # in place: the `lower` section holds the same list
                result[2][:] = [source_map.diagnostic(d, place) for d in result[2]]
            return result
        if isinstance(doc, dict) and "format_version" in doc and isinstance(doc.get("plan"), dict):
            doc = doc["plan"]  # an artifact: split its (normalised) plan

        plan, section, diags = lower_plan(doc, options.split or "runs")
        section["diagnostics"] = diags
        return plan, section, diags
    except InputError as exc:
        if source_map is not None:
            raise source_map.input_error(exc, source) from None
        raise exc.with_source(source) from None
