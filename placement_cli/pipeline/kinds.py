"""What an input file is, told from its bytes without parsing them: MIR text, a body
file, a plan, a pipeline artifact, an operator tree, a tree artifact, a target profile,
or none of these.

Two uses. A command given a file of another command's kind says so in one line, naming
what the file is and which command reads it (`foreign`), instead of the wall of field
errors its own format's models would give; this is asked only after the loader has
refused the file, so a good input never pays for it. And a directory walked by a batch
(`app/batch.py`) takes only the files its command reads, so the profiles, trees and
`summary.json` files lying next to the bodies are listed as skipped, not run.

The kind is read from the top-level keys: a YAML key at column 0, or any JSON key in
quotes (nested JSON keys of these names do not occur in our formats at a level where
they could mislead: an artifact is told by `format_version` first). MIR text is told by
its first line that is not blank or a `//` comment: `fn` or `thunk`, perhaps after `*`.
Only the first `HEAD` bytes are looked at; a longer file whose head names no kind is
`unknown` but taken by a walk (the loader then says what it is).

>>> kind_of(b"version: 1\\nengines: [pg]\\nnodes: []\\n")
'tree'
>>> kind_of(b'{"format_version": 1, "kind": "tree", "tree": {}}')
'tree-artifact'
>>> kind_of(b"// a filter\\n\\nfn {graph::read::filter@3}(%0: (), %1: Entity) -> Boolean {")
'mir'
>>> kind_of(b"repos: []\\n")
'unknown'
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections.abc import Iterator
from typing import Any, Literal

import orjson

from placement_cli.core.errors import InputError, Problem, UsageError
from placement_cli.core.io import STDIN, read_bytes, source_name

Kind = Literal[
    "mir", "body", "plan", "artifact", "tree", "tree-artifact", "profile", "unknown", "empty"
]

HEAD = 256 * 1024

_PROFILE_KEYS = (
    b"fallback",
    b"transfer_unit",
    b"overhead",
    b"estimate",
    b"nominal",
    b"open_vertex",
)
_KEYS = rb"format_version|bodies|blocks|engines|nodes|targets|" + b"|".join(_PROFILE_KEYS)
# The patterns are compiled where they are used (`re.compile` keeps them): a good input
# that is not asked what it is compiles none (~0.4 ms, measured, at every start-up).
_YAML_KEY = rb"""(?m)^["']?(""" + _KEYS + rb""")["']?[ \t]*:"""
_JSON_KEY = rb'"(' + _KEYS + rb')"\s*:'
_KIND = rb"""(?m)(?:^|")kind["']?\s*:\s*["']?([A-Za-z_]+)"""

# Which kinds each command reads (`placement_cli.app.commands`' names); a kind not in a
# command's set is skipped by its directory walks and is one line when named.
PIPELINE_KINDS: frozenset[str] = frozenset({"mir", "body", "plan", "artifact", "empty"})
READS: dict[str, frozenset[str]] = {
    "validate": PIPELINE_KINDS | {"tree-artifact"},
    "tree": frozenset({"tree", "tree-artifact", "empty"}),
}

_WHAT = {
    "mir": "MIR text",
    "body": "a body file",
    "plan": "a plan",
    "tree": "an operator tree",
    "tree-artifact": "a tree artifact",
    "profile": "a target profile",
}
_READER = {
    "tree": "`placement tree` reads it",
    "tree-artifact": "`placement show`, `validate` and `diff` read it "
    "(written by `placement tree`)",
    "profile": "`--targets FILE` reads it (as in `placement lower BODY --targets FILE`)",
}


# Standard input once read: every later reader in the command gets the same bytes (a
# worker forked after, whose own stdin multiprocessing has closed, too).
_STDIN: list[bytes] = []


# A file's bytes just read, to be given once more to the next reader (`read_again`).
_AGAIN: dict[str, bytes] = {}


def read_input(path: str) -> bytes:
    """`read_bytes(path)`; standard input is read once and then given again to every
    later reader of the same command (a sniff, then the loader; the workers of a
    batch). `forget_stdin` starts a new command. Inside `read_again(path, data)`, the
    next read of `path` is `data`."""
    if path != STDIN:
        again = _AGAIN.pop(path, None)
        return read_bytes(path) if again is None else again
    if not _STDIN:
        _STDIN.append(read_bytes(path))
    return _STDIN[0]


@contextlib.contextmanager
def read_again(path: str, data: bytes) -> Iterator[None]:
    """Within it, the next `read_input(path)` gives `data`, the bytes a first reader (a
    sniff) just read, rather than reading the file again (90 MB: a tenth of a second of
    system time). Standard input is kept by `read_input` anyway."""
    if path != STDIN:
        _AGAIN[path] = data
    try:
        yield
    finally:
        _AGAIN.pop(path, None)


def forget_stdin() -> None:
    """A new command reads standard input afresh (several in one process: tests)."""
    _STDIN.clear()


@contextlib.contextmanager
def stdin_again(path: str) -> Iterator[None]:
    """Within it, a reader of `sys.stdin` (one that does not use `read_input`) reads
    the standard input `read_input` read (when `path` is `-`)."""
    if path != STDIN:
        yield
        return
    data = read_input(path)
    saved: Any = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(data))
    try:
        yield
    finally:
        sys.stdin = saved


def looks_like_mir(data: bytes) -> bool:
    """Whether `data` starts (after blank lines and `//` comments, and a byte-order
    mark) like MIR text: a body header.

    >>> looks_like_mir(b"\\xef\\xbb\\xbf*thunk t() -> Integer {"), looks_like_mir(b"fn: 1")
    (True, False)
    """
    # Every input is asked this first: read without a regular expression, whose first
    # compile is ~4 ms (measured) of a small stage's run. `tests/test_input_kinds.py`
    # holds it to the pattern `\*?[ \t]*(?:fn|thunk)[ \t]` after `(?:[ \t\r\n]+|//[^\n]*)*`.
    at = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    while True:
        chunk = data[at : at + 4096]  # blank space in slices: never a copy of the input
        rest = chunk.lstrip(b" \t\r\n")
        at += len(chunk) - len(rest)
        if data.startswith(b"//", at):
            end = data.find(b"\n", at)
            at = len(data) if end < 0 else end
        elif chunk and not rest:
            continue  # blank to the slice's end: read on
        else:
            break  # the first byte that is neither blank nor a comment, or the end
    if data.startswith(b"*", at):
        at += 1
    while data.startswith((b" ", b"\t"), at):
        at += 1
    return data.startswith((b"fn ", b"fn\t", b"thunk ", b"thunk\t"), at)


def _artifact_kind(data: bytes) -> bytes | None:
    """An artifact's `kind`: read as a reader reads it (the last of a key written twice)
    when the whole document is JSON within `HEAD`, else the last `kind` in the head."""
    if len(data) <= HEAD and data.lstrip()[:1] == b"{":
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError:
            doc = None
        if isinstance(doc, dict):
            kind = doc.get("kind")
            return kind.encode() if isinstance(kind, str) else None
    found = [m.group(1) for m in re.compile(_KIND).finditer(data[:HEAD])]
    return found[-1] if found else None


def kind_of(data: bytes) -> Kind:
    """The kind of input `data` holds (module doc), from its first `HEAD` bytes."""
    head = data[:HEAD]
    if not head.strip():
        return "empty"
    if looks_like_mir(head):
        return "mir"
    keys = {m.group(1) for m in re.compile(_YAML_KEY).finditer(head)}
    keys.update(m.group(1) for m in re.compile(_JSON_KEY).finditer(head))
    if b"format_version" in keys:
        return "tree-artifact" if _artifact_kind(data) == b"tree" else "artifact"
    if b"bodies" in keys:
        return "body"
    if b"blocks" in keys:
        return "plan"
    if b"engines" in keys or b"nodes" in keys:
        return "tree"
    if b"targets" in keys and keys.intersection(_PROFILE_KEYS):
        # targets without blocks may be a broken plan: a profile says so by a key of its own
        return "profile"
    return "unknown"


def reads(command: str, kind: str) -> bool:
    """Whether `command` reads inputs of `kind` (`unknown` ones only when named)."""
    return kind in READS.get(command, PIPELINE_KINDS)


def describe(kind: str, data: bytes = b"") -> str:
    """What a file of `kind` is, as a message says it: `this is an operator tree`."""
    if kind == "artifact":
        m = re.compile(_KIND).search(data[:HEAD])
        stage = m.group(1).decode() if m else "pipeline"
        return f"this is {'an' if stage[:1] in 'aeiou' else 'a'} {stage} artifact"
    if kind == "unknown":
        return "this is not a plan, body file, MIR text or artifact"
    return f"this is {_WHAT.get(kind, kind)}"


def foreign(command: str, data: bytes) -> str | None:
    """The one line to say when `command` was given a file of another command's kind
    (what it is and which command reads it), or None when `command` reads its kind (its
    own loader then says what is wrong).

    >>> foreign("solve", b"engines: [pg]\\nnodes: []\\n")
    'this is an operator tree: `placement tree` reads it'
    >>> foreign("tree", b"targets: [a]\\nblocks: []\\n")
    'this is a plan: `placement tree` reads operator trees (a plan is read by `lower`, `validate`, the stages and `run`)'
    >>> foreign("solve", b"targets: [a]\\nblocks: []\\n") is None
    True
    """
    kind = kind_of(data)
    if kind in ("unknown", "empty") or reads(command, kind):
        return None
    what = describe(kind, data)
    if command == "tree":
        readers = "`lower`, `validate`, the stages and `run`"
        if kind == "artifact":
            return f"{what}: `placement tree` reads operator trees (an artifact is read by the stages, `validate`, `show`, `explain` and `diff`)"
        if kind == "profile":
            return f"{what}: {_READER['profile']}"
        return f"{what}: `placement tree` reads operator trees ({_WHAT[kind]} is read by {readers})"
    return f"{what}: {_READER[kind]}"


def skip_reason(command: str, data: bytes, complete: bool) -> str | None:
    """Why a directory walk of `command` skips a file with these bytes (`complete`:
    they are the whole file), or None to take it."""
    kind = kind_of(data)
    if reads(command, kind):
        return None
    if kind == "unknown":
        if not complete:
            return None  # undecided in its head: the loader says what it is
        return f"{describe(kind)}"
    line = foreign(command, data)
    return line if line is not None else describe(kind, data)


def is_mir_input(path: str, data: bytes, source_format: str | None) -> bool:
    """Whether the loader reads `data` as MIR text: `--from hashql-mir`, or without
    `--from` a `.mir` file or bytes that look like MIR text (standard input, or a file
    under another extension)."""
    if source_format is not None:
        return source_format == "hashql-mir"
    return path.endswith(".mir") or looks_like_mir(data)


def say_what_it_is(data: bytes, source: str) -> None:
    """For a file a pipeline command's loader refused: when it is of another kind, raise
    the one line saying what it is and which command reads it (instead of the loader's
    messages); else return."""
    if not data.strip():
        return
    if looks_like_mir(data):
        line: str | None = "this looks like MIR text: use --from hashql-mir"
    else:
        line = foreign("stage", data)
    if line is not None:
        raise InputError([Problem("", line)], source)


def placeable(doc: Any) -> list[str]:
    """The names of the bodies MIR text gives to place: its graph-read filters (the
    bodies the compiler's placement runs on; the MIR reader gives each its vertex)."""
    bodies = doc.get("bodies") if isinstance(doc, dict) else None
    return [
        b["name"]
        for b in bodies or ()
        if isinstance(b, dict) and b.get("vertex") and isinstance(b.get("name"), str)
    ]


def several_bodies(source: str, names: list[str]) -> str:
    """The message for MIR text with several bodies to place and no `--body`."""
    listed = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
    return (
        f"{source}: {len(names)} bodies to place ({listed}): choose one with --body NAME, "
        "or place each with --out-dir DIR (`placement run` and `validate` place each)"
    )


def one_body(doc: Any, source: str, body: str | None) -> None:
    """MIR text with several bodies to place and no `--body` chosen (`body`): a usage
    error (exit 2) naming them, never silently the first."""
    if body is not None:
        return
    names = placeable(doc)
    if len(names) > 1:
        raise UsageError(several_bodies(source, names))


def placeable_bodies(path: str, source_format: str | None = None) -> list[str]:
    """The bodies to place of the input at `path` when it is MIR text (else none); a
    file that is not is told by its first bytes, not read whole."""
    if path != STDIN and source_format is None and not path.endswith(".mir"):
        try:
            with open(path, "rb") as fh:
                if not looks_like_mir(fh.read(4096)):
                    return []
        except OSError:
            return []  # the command itself says why
    data = read_input(path)
    if not is_mir_input(path, data, source_format):
        return []
    # Lazy: the MIR reader (~15 ms, measured), only for MIR text.
    from placement_cli.frontends.mir_text import read_body

    try:
        return placeable(read_body(data, source_name(path)))
    except InputError:
        return []  # the command itself says what is wrong with it
