"""A SARIF log as code scanning reads it: exactly one JSON document, valid against the
official OASIS SARIF 2.1.0 schema (`tests/data/sarif-schema-2.1.0.json`, its origin in
`tests/data/sarif-schema-2.1.0.md`), with the few rules the schema states only in words
checked by hand (absolute URIs where it says `format: uri`)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from jsonschema import Draft4Validator

SCHEMA = Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json"


@cache
def validator() -> Draft4Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    Draft4Validator.check_schema(schema)
    return Draft4Validator(schema)


def sarif_log(data: bytes | str) -> dict[str, Any]:
    """The one SARIF log in `data` (fails on anything else: a second document, a human
    line, no log at all), checked against the schema: one run, as the tool writes it."""
    text = data.decode() if isinstance(data, bytes) else data
    log = json.loads(text)  # one document, nothing before or after it
    errors = sorted(validator().iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
    assert len(log["runs"]) == 1
    run = log["runs"][0]
    for rule in run["tool"]["driver"].get("rules", []):
        uri = rule.get("helpUri")
        assert uri is None or urlparse(uri).scheme, f"helpUri is not an absolute URI: {uri}"
    for res in run["results"]:
        assert res["ruleId"] == run["tool"]["driver"]["rules"][res["ruleIndex"]]["id"]
    return log


def results(log: dict[str, Any]) -> list[dict[str, Any]]:
    return log["runs"][0]["results"]  # type: ignore[no-any-return]


def invocation(log: dict[str, Any]) -> dict[str, Any]:
    (inv,) = log["runs"][0]["invocations"]
    return inv  # type: ignore[no-any-return]


def uri_of(res: dict[str, Any]) -> str:
    return res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]  # type: ignore[no-any-return]
