"""JSON Schemas of the plan file, the tree file and every artifact (format 2).

The artifact models are the strict reading models of `placement_cli.formats.sections`, one per
stage of the registry (`placement_cli.pipeline.registry.artifact_model`), with the
sections that kind carries made required: the schemas describe exactly
what the tool writes and reads back. Tests validate every golden artifact against
them and fail when the committed `schemas/` drift from these models.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel

from placement_cli.app.console import say
from placement_cli.core.io import write_output
from placement_cli.formats.body import BodyFile
from placement_cli.formats.execute import ExecuteArtifact
from placement_cli.formats.lower_rules import LowerRules
from placement_cli.formats.plan import Plan
from placement_cli.formats.transfer_profile import TransferProfile
from placement_cli.formats.tree import TreeFile
from placement_cli.frontends.lower.profile import Profile
from placement_cli.pipeline import registry
from placement_cli.pipeline.registry import artifact_model


def artifact_models() -> dict[str, type[BaseModel]]:
    """Kind -> the model of that kind's artifact, one per stage of the registry."""
    return {kind: artifact_model(kind) for kind in registry.STAGES}


def all_schemas() -> dict[str, dict[str, Any]]:
    """File name -> JSON Schema, in a fixed order."""
    out: dict[str, dict[str, Any]] = {
        "plan.schema.json": _schema(Plan, "placement plan file, version 1")
    }

    out["tree.schema.json"] = _schema(TreeFile, "placement operator-tree file")

    out["body.schema.json"] = _schema(
        BodyFile, "placement body file (MIR input of `placement lower`)"
    )
    out["profile.schema.json"] = _schema(
        Profile, "placement target profile (`placement lower --targets`)"
    )
    out["lower-rules.schema.json"] = _schema(
        LowerRules, "the rule fields (`excluded`, `target_rules`) of `placement lower`'s section"
    )
    out["transfer-profile.schema.json"] = _schema(
        TransferProfile, "placement transfer profile (`calibrate fit`, `tree --transfer`)"
    )
    out["execute.report.schema.json"] = _schema(
        ExecuteArtifact, "placement `execute` report, format 1"
    )
    for kind, model in artifact_models().items():
        out[f"{kind}.artifact.schema.json"] = _schema(
            model, f"placement `{kind}` artifact, format 2"
        )
    return out


def _schema(model: type[BaseModel], title: str) -> dict[str, Any]:
    sch = model.model_json_schema(by_alias=True)
    sch["title"] = title
    sch["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return sch


def schema_bytes(schema: dict[str, Any]) -> bytes:
    return orjson.dumps(
        schema, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
    )


def command(name: str, v: dict[str, Any]) -> int:
    """`placement schema`: write every schema into `--out-dir`."""
    schemas = all_schemas()
    for file, sch in schemas.items():
        write_output(schema_bytes(sch), str(Path(v["out_dir"]) / file), parents=True)
    say(f"wrote {len(schemas)} schemas to {v['out_dir']}/", v["quiet"])
    return 0
