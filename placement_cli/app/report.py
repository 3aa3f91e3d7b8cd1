"""Diagnostics for people and for machines: `--diagnostics text|json|github|sarif`.

Every problem of an invalid input (exit 3) and every error or warning a stage raises is
one record: severity, code, message, file, line and column where known, and the field
path or blocks it is about. `text` is what a person reads (`FILE: PATH: message`, or
`FILE:LINE:COL: message` where the reader gave a position, as for MIR text); `json`
writes one JSON object a line; `github` writes workflow commands that GitHub Actions
shows as annotations on the file and line; `sarif` writes one SARIF 2.1.0 log, the
format code-scanning tools read (as ruff and clang-tidy write them). Artifacts are
untouched.

One call writes one report (`Report`), whatever the number of inputs and whatever
the exit code: every input's findings, and the call's own failures (a usage error, a
file-system error, an internal error: codes `usage-error`, `io-error`,
`internal-error`, `interrupted`; in SARIF they are the invocation's notifications, not
results). It goes to stderr, or to `--diagnostics-file PATH` (written atomically as
`-o` is). A machine format on stderr has the stream to itself: the human lines
(summaries, the batch table, `--timings`) are left out, and with `--diagnostics-file`
they stay on stderr. `--quiet` silences the human lines only: a machine report keeps
every finding, warnings included. `--strict` reports every warning as an error and
turns an exit 0 into 3.

Positions of YAML and JSON nodes are looked up only when a record is written
(`core/positions.py`).

>>> r = Record("warning", "unpriceable-transfer", "an edge ...", "b.yaml", 3, 5)
>>> render([r], "github")
'::warning file=b.yaml,line=3,col=5,title=unpriceable-transfer::an edge ...\\n'
>>> render([r], "text")
'warning: unpriceable-transfer: an edge ...\\n'
"""

from __future__ import annotations

import sys
from typing import Any

import msgspec
import orjson

from placement_cli import __version__
from placement_cli.core.errors import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_IO,
    EXIT_OK,
    EXIT_USAGE,
    InputError,
    IOFailure,
    escape,
)
from placement_cli.core.io import write_output
from placement_cli.core.positions import block_position, locate

FORMATS = ("text", "json", "github", "sarif")
INVALID_INPUT = "invalid-input"  # the code of every problem that makes an input invalid
# The call's own failures, by exit code: not findings about an input.
TOOL_CODES = {
    EXIT_USAGE: "usage-error",
    EXIT_IO: "io-error",
    EXIT_INTERNAL: "internal-error",
    EXIT_INTERRUPTED: "interrupted",
}
# Exit codes of a call that ran to its end (SARIF's `executionSuccessful`): findings,
# infeasible or unsolved plans and differences are results, not failures of the tool.
_RAN = (EXIT_OK, EXIT_INPUT, 4, 5, 7)


class Record(msgspec.Struct, frozen=True):
    """One diagnostic as the reports write it."""

    severity: str
    code: str
    message: str
    file: str | None = None
    line: int | None = None
    col: int | None = None
    path: str = ""
    blocks: tuple[str, ...] = ()
    text: str = ""  # the line `text` prints (the tool's own wording)
    tool: bool = False  # the call's own failure (TOOL_CODES), not a finding about an input

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


def tool_record(message: str, exit_code: int) -> Record:
    """The call's own failure (usage, file system, internal, interrupted) as a record.

    >>> tool_record("'x.yaml': no such file", 2).text
    "placement: 'x.yaml': no such file"
    """
    code = TOOL_CODES.get(exit_code, TOOL_CODES[EXIT_INTERNAL])
    return Record("error", code, message, text=f"placement: {message}", tool=True)


def strict_record(r: Record) -> Record:
    """A warning reported as an error under `--strict` (as a compiler's -Werror does)."""
    if r.severity != "warning":
        return r
    line = r.text or f"warning: {r.code}: {escape(r.message)}"
    if line.startswith("warning: "):
        line = "error: " + line[len("warning: ") :]
    text = f"{line} [--strict]"
    return Record("error", r.code, r.message, r.file, r.line, r.col, r.path, r.blocks, text)


def _github_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def _github(r: Record) -> str:
    level = "error" if r.severity == "error" else "warning"
    props = []
    if r.file and not r.file.startswith("<"):  # standard input is no file to annotate
        props.append(f"file={_github_escape(r.file, True)}")
    if r.line is not None:
        props.append(f"line={r.line}")
        if r.col is not None:
            props.append(f"col={r.col}")
    props.append(f"title={_github_escape(r.code, True)}")
    message = f"{r.path}: {r.message}" if r.path else r.message
    return f"::{level} {','.join(props)}::{_github_escape(message)}"


def _uri(path: str) -> str | None:
    """A file as a SARIF artifact URI: relative paths stay relative (code scanning
    resolves them against the checkout), absolute ones become `file:` URIs; standard
    input has none.

    >>> _uri("queries/a b.mir"), _uri("/tmp/x.yaml"), _uri("<stdin>")
    ('queries/a%20b.mir', 'file:///tmp/x.yaml', None)
    """
    if path.startswith("<"):
        return None
    # Lazy: urllib.parse (~4 ms, measured), only when a SARIF log names a file.
    from urllib.parse import quote

    if path.startswith("/"):
        return "file://" + quote(path)
    return quote(path)


def _location(r: Record) -> list[dict[str, Any]] | None:
    uri = _uri(r.file) if r.file else None
    if uri is None:
        return None
    phys: dict[str, Any] = {"artifactLocation": {"uri": uri}}
    if r.line is not None:
        phys["region"] = {"startLine": r.line, "startColumn": r.col or 1}
    return [{"physicalLocation": phys}]


def _rule(code: str) -> dict[str, Any]:
    """A rule as `placement codes CODE` explains it (no `helpUri`: the tool has no
    published page to point to, and SARIF wants an absolute URI there)."""
    # Lazy: the registry of every code (~4 ms, measured), only when a SARIF log is written.
    from placement_cli.core.codes import CODES

    rule: dict[str, Any] = {"id": code}
    c = CODES.get(code)
    if c is not None:
        rule["shortDescription"] = {"text": c.title}
        rule["fullDescription"] = {"text": c.text}
        rule["help"] = {"text": f"{c.text} (`placement codes {code}`)"}
        level = "error" if "error" in c.severities else "warning"
        rule["defaultConfiguration"] = {"level": level}
    return rule


def sarif(records: list[Record], exit_code: int | None = None) -> dict[str, Any]:
    """One SARIF 2.1.0 log, one run: a result per finding and a rule per code; the
    call's own failures and its exit code in the run's invocation."""
    findings = [r for r in records if not r.tool]
    rules = list(dict.fromkeys(r.code for r in findings))
    results = []
    for r in findings:
        result: dict[str, Any] = {
            "ruleId": r.code,
            "ruleIndex": rules.index(r.code),
            "level": "error" if r.severity == "error" else "warning",
            "message": {"text": f"{r.path}: {r.message}" if r.path else r.message},
        }
        where = _location(r)
        if where is not None:
            result["locations"] = where
        results.append(result)
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "placement",
                "version": __version__,
                "rules": [_rule(code) for code in rules],
            }
        },
        "results": results,
    }
    if exit_code is not None:
        invocation: dict[str, Any] = {
            "executionSuccessful": exit_code in _RAN,
            "exitCode": exit_code,
        }
        notes = []
        for r in records:
            if r.tool:
                note: dict[str, Any] = {
                    "level": "error",
                    "message": {"text": r.message},
                    "descriptor": {"id": r.code},
                }
                where = _location(r)
                if where is not None:
                    note["locations"] = where
                notes.append(note)
        if notes:
            invocation["toolExecutionNotifications"] = notes
        run["invocations"] = [invocation]
    return {
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [run],
    }


def render(records: list[Record], fmt: str, exit_code: int | None = None) -> str:
    """The records as `fmt` writes them: a SARIF log always (empty `results` for none),
    the other formats a line a record (nothing for none)."""
    if fmt == "sarif":
        return orjson.dumps(sarif(records, exit_code), option=orjson.OPT_INDENT_2).decode() + "\n"
    if not records:
        return ""
    if fmt == "json":
        return "".join(orjson.dumps(r.to_json()).decode() + "\n" for r in records)
    if fmt == "github":
        return "".join(_github(r) + "\n" for r in records)
    # `text` keeps each line as the tool has always written it (problems already escaped).
    return "".join(
        (r.text or f"{r.severity}: {r.code}: {escape(r.message)}") + "\n" for r in records
    )


def plural(n: int, noun: str) -> str:
    """A count and its noun.

    >>> plural(1, "warning"), plural(2, "warning")
    ('1 warning', '2 warnings')
    """
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class Report(msgspec.Struct):
    """Where one call's diagnostics go, and what else may share stderr with them.

    `stream`: text on stderr, each record written as it comes (the tool's classic
    output). Otherwise the records are collected and `close` writes them as one
    document (to `file`, or stderr). `human`: whether summaries, tables and timings may
    go to stderr (not when a machine format has it). `owner`: this report writes the
    document; an input of a batch has a report of its own whose records go back to
    the batch's. `quiet` silences human lines and, in the streamed text only, warnings.
    """

    fmt: str = "text"
    file: str | None = None
    strict: bool = False
    quiet: bool = False
    owner: bool = True
    stream: bool = True
    human: bool = True
    records: list[Record] = msgspec.field(default_factory=list)
    warnings: int = 0
    errors: int = 0  # errors reported, warnings made errors by --strict included
    first_error: str | None = None  # the first error's line (a batch's summary row)
    summary_shown: bool = False
    counted: bool = False  # the warning count was said already (a batch's table)

    @classmethod
    def for_call(cls, fmt: str | None, file: str | None) -> Report:
        """The report of a whole call (`--diagnostics`, `--diagnostics-file`)."""
        f = fmt if fmt in FORMATS else "text"
        plain = f == "text" and file is None
        return cls(f, file, stream=plain, human=f == "text" or file is not None)

    def for_input(self) -> Report:
        """The report of one input of a batch: it streams or collects as this one does,
        and its human lines are captured for the batch to print or drop."""
        return Report(self.fmt, None, self.strict, self.quiet, owner=False, stream=self.stream)

    def add(self, records: list[Record], quiet: bool = False) -> None:
        """Findings and failures: counted, made errors under `--strict`, then written
        now (streamed text) or kept for the document."""
        out = []
        for r in records:
            if r.severity == "warning":
                self.warnings += 1
                if self.strict:
                    r = strict_record(r)
            if r.severity == "error":
                self.errors += 1
                if self.first_error is None:
                    self.first_error = r.text or f"error: {r.code}: {escape(r.message)}"
            out.append(r)
        if not self.stream:
            self.records += out
            return
        if quiet and not self.strict:
            # Streamed text under --quiet: errors still show, warnings are human lines.
            out = [r for r in out if r.severity == "error"]
        sys.stderr.write(render(out, "text"))

    def merge(self, other: Report) -> None:
        """A batch input's collected records and counts, in input order."""
        self.records += other.records
        self.warnings += other.warnings
        self.errors += other.errors
        if self.first_error is None:
            self.first_error = other.first_error

    def close(self, code: int) -> int:
        """The call's exit code (`--strict`: warnings make a clean call exit 3), with
        the warning count for people and, from the owner, the one document written."""
        if self.strict and self.warnings and code == EXIT_OK:
            code = EXIT_INPUT
        if not self.owner:
            return code
        if self.warnings and self.human and not self.quiet and not self.counted:
            if self.summary_shown or code == EXIT_INPUT and self.strict:
                note = " (--strict: exit 3)" if self.strict and code == EXIT_INPUT else ""
                sys.stderr.write(f"{plural(self.warnings, 'warning')}{note}\n")
        if self.stream:
            return code
        text = render(self.records, self.fmt, code)
        if self.file is None:
            sys.stderr.write(text)
            return code
        try:
            write_output(text.encode(), self.file)
        except IOFailure as exc:
            sys.stderr.write(f"placement: {exc}\n")
            return EXIT_IO
        return code
