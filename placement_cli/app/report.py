"""Diagnostics for people and for machines: `--diagnostics text|json|github|sarif`.

Every problem of an invalid input (exit 3) and every error or warning a stage raises is
one record: severity, code, message, file, line and column where known, and the field
path or blocks it is about. `text` is what a person reads (`FILE: PATH: message`, or
`FILE:LINE:COL: message` where the reader gave a position, as for MIR text); `json`
writes one JSON object a line; `github` writes workflow commands that GitHub Actions
shows as annotations on the file and line; `sarif` writes one SARIF 2.1.0 log, the
format code-scanning tools read (as ruff and clang-tidy write them). They go to stderr,
like every message; artifacts are untouched.

Positions of YAML and JSON nodes are looked up only when a record is written
(`core/positions.py`).

>>> r = Record("warning", "unpriceable-transfer", "an edge ...", "b.yaml", 3, 5)
>>> render([r], "github")
'::warning file=b.yaml,line=3,col=5,title=unpriceable-transfer::an edge ...\\n'
>>> render([r], "text")
'warning: unpriceable-transfer: an edge ...\\n'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from placement_cli import __version__
from placement_cli.core.errors import InputError, escape
from placement_cli.core.positions import block_position, locate

FORMATS = ("text", "json", "github", "sarif")
INVALID_INPUT = "invalid-input"  # the code of every problem that makes an input invalid


@dataclass(frozen=True, slots=True)
class Record:
    """One diagnostic as the reports write it."""

    severity: str
    code: str
    message: str
    file: str | None = None
    line: int | None = None
    col: int | None = None
    path: str = ""
    blocks: tuple[str, ...] = field(default=())
    text: str = ""  # the line `text` prints (the tool's own wording)

    def to_json(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "path": self.path,
            "blocks": list(self.blocks),
        }


def problem_records(exc: InputError, fmt: str) -> list[Record]:
    """The problems of an invalid input, located in its file (not for `text`)."""
    out = []
    for p in exc.problems:
        line, col = p.line, p.col
        if line is None and fmt != "text" and p.path:
            found = locate(exc.source, p.path)
            line, col = found if found else (None, None)
        out.append(
            Record(
                "error",
                INVALID_INPUT,
                p.message,
                exc.source,
                line,
                col,
                p.path,
                text=p.render(exc.source),
            )
        )
    return out


def diagnostic_records(
    diagnostics: list[dict[str, Any]], source: str | None, fmt: str
) -> list[Record]:
    """A stage's errors and warnings (`{severity, code, message, blocks}`), each at its
    first block's position in the input file (not for `text`)."""
    out = []
    for d in diagnostics:
        severity = d.get("severity")
        if severity not in ("error", "warning"):
            continue
        blocks = tuple(d.get("blocks") or ())
        line, col = d.get("line"), d.get("col")  # a front end's own position (MIR text)
        if line is None and fmt != "text" and source and blocks:
            found = block_position(source, blocks[0])
            line, col = found if found else (None, None)
        text = f"{severity}: {d['code']}: {d['message']}"
        if d.get("line") is not None and source:
            text = f"{escape(source)}:{line}:{col}: {text}"
        out.append(Record(severity, d["code"], d["message"], source, line, col, "", blocks, text))
    return out


def _github_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def _github(r: Record) -> str:
    level = "error" if r.severity == "error" else "warning"
    props = []
    if r.file:
        props.append(f"file={_github_escape(r.file, True)}")
    if r.line is not None:
        props.append(f"line={r.line}")
        if r.col is not None:
            props.append(f"col={r.col}")
    props.append(f"title={_github_escape(r.code, True)}")
    message = f"{r.path}: {r.message}" if r.path else r.message
    return f"::{level} {','.join(props)}::{_github_escape(message)}"


def sarif(records: list[Record]) -> dict[str, Any]:
    """One SARIF 2.1.0 log with a result per record and a rule per code."""
    rules = list(dict.fromkeys(r.code for r in records))
    results = []
    for r in records:
        result: dict[str, Any] = {
            "ruleId": r.code,
            "ruleIndex": rules.index(r.code),
            "level": "error" if r.severity == "error" else "warning",
            "message": {"text": f"{r.path}: {r.message}" if r.path else r.message},
        }
        if r.file:
            phys: dict[str, Any] = {"artifactLocation": {"uri": r.file}}
            if r.line is not None:
                phys["region"] = {"startLine": r.line, "startColumn": r.col or 1}
            result["locations"] = [{"physicalLocation": phys}]
        results.append(result)
    return {
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "placement",
                        "version": __version__,
                        "rules": [
                            {"id": code, "helpUri": f"docs/diagnostics.md#{code}"} for code in rules
                        ],
                    }
                },
                "results": results,
            }
        ],
    }


def render(records: list[Record], fmt: str) -> str:
    """The records as `fmt` writes them (nothing for no records)."""
    if not records:
        return ""
    if fmt == "json":
        return "".join(orjson.dumps(r.to_json()).decode() + "\n" for r in records)
    if fmt == "github":
        return "".join(_github(r) + "\n" for r in records)
    if fmt == "sarif":
        return orjson.dumps(sarif(records), option=orjson.OPT_INDENT_2).decode() + "\n"
    # `text` keeps each line as the tool has always written it (problems already escaped).
    return "".join(
        (r.text or f"{r.severity}: {r.code}: {escape(r.message)}") + "\n" for r in records
    )
