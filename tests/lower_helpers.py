"""Small builders for body documents in the lower tests."""

from __future__ import annotations

from typing import Any

from placement_cli.frontends.lower import LowerOptions, lower_to_plan

ENV_VERTEX = {"env": "env", "vertex": "vertex"}


def body_doc(
    blocks: list[dict[str, Any]],
    locals_: dict[str, Any],
    *,
    env: Any = None,
    types: dict[str, Any] | None = None,
    **top: Any,
) -> dict[str, Any]:
    """One body `f` with args env (default an empty tuple) and vertex, plus the given locals."""
    loc = {"env": env if env is not None else {"tuple": []}, "vertex": {"opaque": "Entity"}}
    loc.update(locals_)
    doc: dict[str, Any] = {
        "version": 1,
        "bodies": [{"name": "f", **ENV_VERTEX, "locals": loc, "blocks": blocks}],
    }
    if types:
        doc["types"] = types
    doc.update(top)
    return doc


def one_block(
    stmts: list[dict[str, Any]],
    locals_: dict[str, Any],
    term: dict[str, Any] | None = None,
    **kw: Any,
) -> dict[str, Any]:
    return body_doc(
        [{"id": "bb0", "statements": stmts, "terminator": term or {"kind": "return"}}],
        locals_,
        **kw,
    )


def lower(
    doc: dict[str, Any], **opts: Any
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    plan, sec, diags = lower_to_plan(doc, "t.body.yaml", LowerOptions(**opts))
    assert sec is not None
    return plan, sec, diags


def supports(doc: dict[str, Any], block: str = "bb0") -> list[set[str]]:
    """Support set of every statement of an original block, then the terminator's."""
    _, sec, _ = lower(doc)
    return [set(s) for s in sec["statements"][block]] + [set(sec["terminators"][block])]


I, P, E = "interpreter", "postgres", "embedding"  # noqa: E741
