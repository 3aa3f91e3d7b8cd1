"""The committed schemas match the models, and every golden artifact fits its schema."""

from __future__ import annotations

import orjson
import pytest

from placement_cli.app.schemas import all_schemas, artifact_models, schema_bytes
from placement_cli.formats.plan import Plan
from tests.conftest import ROOT

# The pipeline's artifacts; the tree artifact has its own checks in test_tree.
GOLDENS = sorted(p for p in (ROOT / "tests" / "goldens").glob("*/*.json") if p.name != "tree.json")


def test_committed_schemas_match_models():
    for name, sch in all_schemas().items():
        path = ROOT / "schemas" / name
        assert path.exists(), f"schemas/{name} missing: run `make schemas`"
        assert path.read_bytes() == schema_bytes(sch), (
            f"schemas/{name} drifted from the models: run `make schemas`"
        )


def test_no_stale_schema_files():
    names = set(all_schemas())
    for path in (ROOT / "schemas").glob("*.json"):
        assert path.name in names, f"stale schema file {path.name}"


@pytest.mark.parametrize("path", GOLDENS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_golden_artifacts_fit_their_schema(path):
    art = orjson.loads(path.read_bytes())
    kind = art["kind"]
    assert kind in artifact_models(), f"{path.name}: no schema for artifact kind {kind!r}"
    artifact_models()[kind].model_validate(art)
    Plan.model_validate(art["plan"])  # the normalised plan is itself a valid plan file
