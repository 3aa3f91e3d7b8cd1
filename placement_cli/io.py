"""Reading plans and artifacts, writing artifacts: bytes in, bytes out, no rich here."""

from __future__ import annotations

import gc
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from placement_cli.errors import InputError, Problem, UsageError

STDIN = "-"


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC: loading a 50k-block plan allocates millions of
    non-cyclic objects and the collector's scans were ~4x the parse itself."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def source_name(path: str) -> str:
    return "<stdin>" if path == STDIN else path


def read_bytes(path: str) -> bytes:
    if path == STDIN:
        if sys.stdin is None:
            raise UsageError("no standard input to read '-' from")
        if sys.stdin.isatty():
            raise UsageError("'-' reads standard input, which is a terminal: pipe a plan in or give a file")
        return sys.stdin.buffer.read()
    p = Path(path)
    if not p.exists():
        raise UsageError(f"'{path}': no such file")
    if p.is_dir():
        raise UsageError(f"'{path}' is a directory")
    return p.read_bytes()


def is_json(path: str, data: bytes) -> bool:
    if path != STDIN:
        suffix = Path(path).suffix.lower()
        if suffix == ".json":
            return True
        if suffix in (".yaml", ".yml"):
            return False
    return data.lstrip()[:1] == b"{"


def parse_document(path: str, data: bytes) -> Any:
    """JSON or YAML bytes to Python objects; syntax errors become exit-3 problems."""
    source = source_name(path)
    if is_json(path, data):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise InputError([Problem("", f"invalid JSON: {exc}")], source) from None
    import yaml  # only YAML users pay for the import

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(data, Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        raise InputError([Problem("", f"invalid YAML: {exc}".replace("\n", " "))], source) from None


def read_document(path: str) -> Any:
    data = read_bytes(path)
    with gc_paused():
        return parse_document(path, data)


def _plain(obj: Any) -> Any:
    """Integral floats print as integers, so `4` in a plan stays `4` in artifacts."""
    if isinstance(obj, float):
        return int(obj) if obj.is_integer() and abs(obj) < 2**53 else obj
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def dumps(obj: Any, fmt: str = "json") -> bytes:
    """The artifact bytes: sorted keys, two-space indent, trailing newline."""
    if fmt == "yaml":
        import yaml

        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        text = yaml.dump(_plain(obj), Dumper=dumper, sort_keys=True, allow_unicode=True, width=10**9)
        return text.encode()
    return orjson.dumps(
        obj,
        default=_default,
        option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE | orjson.OPT_INDENT_2,
    )


def _default(obj: Any) -> Any:
    if isinstance(obj, (tuple, frozenset)):
        return list(obj)
    raise TypeError(f"cannot serialise {type(obj).__name__}")


def num(x: float) -> float | int:
    """Costs are floats inside; integral ones are written as integers."""
    if x.is_integer() and abs(x) < 2**53:
        return int(x)
    return x


def write_output(data: bytes, output: str | None) -> None:
    """Write to stdout, or atomically to a file: a failed run leaves the old file intact."""
    if output is None or output == STDIN:
        out = sys.stdout.buffer
        out.write(data)
        out.flush()
        return
    target = Path(output)
    parent = target.parent if str(target.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        # mkstemp creates 0600; an artifact gets the permissions of any new file.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
