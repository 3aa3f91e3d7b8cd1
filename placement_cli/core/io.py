"""Reading plans and artifacts, writing artifacts: bytes in, bytes out, no rich here.

Reading is bounded (`limits.Limits`): at most `max_input_bytes` bytes, nesting at most
`max_depth` levels, YAML read by `yaml_core` (1.2 core schema, bounded aliases).
File-system failures are `IOFailure` (exit 6) with the path and the reason.
"""

from __future__ import annotations

import errno
import gc
import os
import stat
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, BinaryIO

import orjson

from placement_cli.core import paths
from placement_cli.core.errors import InputError, IOFailure, Problem, UsageError, escape
from placement_cli.core.limits import ENV_MAX_INPUT, Limits
from placement_cli.core.paths import exists, is_dir, mkdirs, name, parent, pure

# Paths go through `core.paths`, not `pathlib`: the same strings and the same tests,
# without its import (~2.7 ms of every command that writes a file, measured).

STDIN = "-"
BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 20


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


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _too_large(source: str, cap: int) -> InputError:
    return InputError(
        [
            Problem(
                "", f"input larger than the limit of {cap} bytes (set {ENV_MAX_INPUT} to raise it)"
            )
        ],
        source,
    )


def _read_capped(fh: BinaryIO, cap: int, source: str, expect: int = 0) -> bytes:
    """Read to the end, but never more than `cap` bytes: `/dev/zero` or an endless
    pipe stops at the cap. `expect` is a regular file's size (read in one go)."""
    chunks: list[bytes] = []
    total = 0
    want = min(expect, cap) + 1 if expect else _CHUNK
    while True:
        chunk = fh.read(min(want, cap + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > cap:
            raise _too_large(source, cap)
        want = _CHUNK
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_bytes(path: str, limits: Limits | None = None) -> bytes:
    """The bytes of a file or of stdin (`-`), at most `limits.max_input_bytes` of them,
    without a UTF-8 byte-order mark (accepted alike from a file and from stdin).

    A missing file is a usage error (exit 2); any other failure to read is an
    `IOFailure` (exit 6) naming the path and the reason; too much input is exit 3.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "p.json"
    >>> _ = p.write_bytes(b"\\xef\\xbb\\xbf{}")
    >>> read_bytes(str(p))
    b'{}'
    """
    lim = limits if limits is not None else Limits.from_env()
    cap = lim.max_input_bytes
    if path == STDIN:
        if sys.stdin is None:
            raise UsageError("no standard input to read '-' from")
        if sys.stdin.isatty():
            raise UsageError(
                "'-' reads standard input, which is a terminal: pipe a plan in or give a file"
            )
        try:
            data = _read_capped(sys.stdin.buffer, cap, "<stdin>")
        except OSError as exc:
            raise IOFailure(f"<stdin>: {_reason(exc)}") from None
    else:
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                regular = stat.S_ISREG(st.st_mode)
                if regular and st.st_size > cap:
                    raise _too_large(path, cap)
                data = _read_capped(fh, cap, path, st.st_size if regular else 0)
        except FileNotFoundError:
            raise UsageError(f"'{escape(path)}': no such file") from None
        except OSError as exc:
            raise IOFailure(f"{escape(path)}: {_reason(exc)}") from None
    return data[3:] if data.startswith(BOM) else data


def is_json(path: str, data: bytes) -> bool:
    if path != STDIN:
        suffix = paths.suffix(path).lower()
        if suffix == ".json":
            return True
        if suffix in (".yaml", ".yml"):
            return False
    return data.lstrip()[:1] == b"{"


def parse_document(path: str, data: bytes, limits: Limits | None = None) -> Any:
    """JSON or YAML bytes to Python objects; syntax errors, nesting deeper than
    `limits.max_depth` and refused YAML (see `yaml_core`) become exit-3 problems.

    >>> parse_document("p.yaml", b"a: [1e3, 012]")
    {'a': [1000.0, 12]}
    """
    lim = limits if limits is not None else Limits()
    source = source_name(path)
    if is_json(path, data):
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise InputError([Problem("", f"invalid JSON: {exc}")], source) from None
        if too_deep(doc, lim.max_depth):
            raise InputError(
                [Problem("", f"invalid JSON: nested deeper than {lim.max_depth} levels")], source
            )
        return doc
    # Lazy: PyYAML and its reader (~15 ms, measured), only for YAML input.
    import yaml

    from placement_cli.core.yaml_core import (
        YamlProblem,
        load_yaml,
    )

    try:
        return load_yaml(data, lim)
    except YamlProblem as exc:
        raise InputError([Problem("", f"invalid YAML: {exc}")], source) from None
    except yaml.YAMLError as exc:
        raise InputError([Problem("", f"invalid YAML: {exc}".replace("\n", " "))], source) from None


def too_deep(doc: Any, max_depth: int) -> bool:
    """Whether lists and mappings nest deeper than `max_depth` (iterative: any depth).

    >>> too_deep({"a": [[1]]}, 3), too_deep({"a": [[1]]}, 2)
    (False, True)
    """
    stack = [(doc, 1)] if isinstance(doc, (dict, list)) else []
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            return True
        items = node.values() if isinstance(node, dict) else node
        for v in items:
            if isinstance(v, (dict, list)):
                stack.append((v, depth + 1))
    return False


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
        # Lazy: PyYAML (~14 ms, measured), only for `--format yaml`.
        import yaml

        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        text = yaml.dump(
            _plain(obj), Dumper=dumper, sort_keys=True, allow_unicode=True, width=10**9
        )
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


def num_text(x: float) -> bytes:
    """The bytes `orjson.dumps(num(x))` writes, as a small object: a bytes object orjson
    returns sits alone on a fresh page of memory (a page fault, about 3 microseconds,
    per object kept; measured), where `%d` and a copy are allocated among others. On
    100k distinct numbers: 0.16-0.23 s against 0.75 s.

    >>> [num_text(x) for x in (2.0, 0.5, -0.0, 1e300, 2.0**53)]
    [b'2', b'0.5', b'0', b'1e+300', b'9007199254740992.0']
    """
    if x.is_integer() and abs(x) < 2**53:
        return b"%d" % x
    return bytes(memoryview(orjson.dumps(x)))


Data = (
    bytes | list[bytes]
)  # an artifact's bytes, or the pieces they are made of (`artifact.render_parts`)

# Pieces handed to one `writev` call (below the usual IOV_MAX of 1024).
_IOV = 512


def _write_all(fd: int, data: Data) -> None:
    """Write every byte to the descriptor: the pieces of a rendered artifact straight from
    where they are (`os.writev`), never joined into one more copy of the artifact."""
    parts = [data] if isinstance(data, bytes) else data
    for i in range(0, len(parts), _IOV):
        batch = parts[i : i + _IOV]
        want = sum(map(len, batch))
        done = os.writev(fd, batch)
        while done < want:  # a short write (a signal, a full pipe): finish this batch
            rest = memoryview(b"".join(batch))[done:]
            while rest:
                rest = rest[os.write(fd, rest) :]
            done = want


def write_output(data: Data, output: str | None, parents: bool = False) -> None:
    """Write to stdout, or atomically to a file: a failed run leaves the old file intact.
    A file-system failure is an `IOFailure` (exit 6) naming the path and the reason.
    `data` is bytes or a list of pieces (written in order, as they are). Missing parent
    folders are created only with `parents` (a folder the tool owns, as `--out-dir`):
    a mistyped `-o` folder is an error, as a shell's `>` would make it.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> write_output(b"x", str(d / "sub" / "a.json"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    placement_cli.core.errors.IOFailure: .../sub/a.json: no such directory: .../sub
    >>> write_output(b"x", str(d / "sub" / "a.json"), parents=True); (d / "sub" / "a.json").read_bytes()
    b'x'
    >>> _ = (d / "f").write_bytes(b"")
    >>> write_output(b"x", str(d / "f" / "a.json"), parents=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    placement_cli.core.errors.IOFailure: .../f/a.json: cannot create directory .../f: a file is in the way
    """
    if output is None or output == STDIN:
        out = sys.stdout.buffer
        try:
            try:
                fd = out.fileno()
            except (AttributeError, OSError, ValueError):  # not a file (a test's capture)
                out.write(data if isinstance(data, bytes) else b"".join(data))
                out.flush()
            else:
                out.flush()
                _write_all(fd, data)
        except BrokenPipeError:
            raise  # the reader went away: the CLI ends quietly
        except OSError as exc:
            raise IOFailure(f"<stdout>: {_reason(exc)}") from None
        return
    write_files([(output, data)], parents=parents)


def check_output(output: str | None) -> None:
    """The checks `write_output` makes before it writes, made now: an `IOFailure` naming
    the path when its folder is missing, not a folder or not writable, or the path is a
    folder. A command that runs for long checks every output first, so it never fails
    at its end on a mistyped name (stdout, a device or a pipe: nothing to check).

    >>> import tempfile, pathlib
    >>> check_output(str(pathlib.Path(tempfile.mkdtemp()) / "no" / "a.json"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    placement_cli.core.errors.IOFailure: .../no/a.json: no such directory: .../no
    """
    if output is None or output == STDIN or _through(output):
        return
    target = pure(_resolved(output))
    folder = parent(target)
    shown, where = escape(output), escape(folder)
    if not is_dir(folder):
        if exists(folder):
            raise IOFailure(f"{shown}: {where} is not a directory: a file is in the way")
        raise IOFailure(f"{shown}: no such directory: {where}")
    if is_dir(target):
        raise IOFailure(f"{shown}: is a directory")
    if not os.access(folder, os.W_OK):
        raise IOFailure(f"{shown}: permission denied: {where}")


def _prepare(output: str, data: Data, umask: int, parents: bool) -> tuple[str, str]:
    """Write `data` to a temporary file next to `output`; file-system failures become
    `IOFailure` naming the path and the reason. Returns the temporary file and the
    target, spelled as `pathlib` spells it (`core.paths.pure`)."""
    target = pure(output)
    folder = parent(target)
    shown = escape(output)
    if not parents:
        if not is_dir(folder):
            where = escape(folder)
            if exists(folder):
                raise IOFailure(f"{shown}: {where} is not a directory: a file is in the way")
            raise IOFailure(f"{shown}: no such directory: {where}")
    else:
        _mkdirs(folder, shown)
    if is_dir(target):
        raise IOFailure(f"{shown}: is a directory")
    try:
        fd, tmp = _temporary(folder, name(target))
    except OSError as exc:
        raise IOFailure(f"{shown}: {_reason(exc)}") from None
    try:
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        # Created 0600; an artifact gets the permissions of any new file.
        os.chmod(tmp, 0o666 & ~umask)
    except BaseException as exc:
        _unlink(tmp)
        if isinstance(exc, OSError):
            raise IOFailure(f"{shown}: {_reason(exc)}") from None
        raise
    return tmp, target


# How `_temporary` opens its file: exclusively, never through a link (tempfile's flags).
_EXCLUSIVE = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
_EXCLUSIVE |= getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)


def _temporary(parent: str, name: str) -> tuple[int, str]:
    """A new file `.NAME.RANDOM.tmp` in `parent`, open, as `tempfile.mkstemp` makes it
    (created exclusively, mode 0600, its absolute path) without importing tempfile:
    with shutil, random, bz2 and lzma ~3 ms (measured) of every command that writes.

    >>> import tempfile, os.path
    >>> d = tempfile.mkdtemp(); fd, tmp = _temporary(d, "a.json"); os.close(fd)
    >>> os.path.dirname(tmp) == d, os.path.basename(tmp)[:8], tmp[-4:], oct(os.stat(tmp).st_mode)[-3:]
    (True, '.a.json.', '.tmp', '600')
    """
    for _ in range(100):  # a name another writer took: draw again
        tmp = os.path.abspath(os.path.join(parent, f".{name}.{os.urandom(6).hex()}.tmp"))
        try:
            return os.open(tmp, _EXCLUSIVE, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", parent)


def _mkdirs(folder: str, shown: str) -> None:
    try:
        mkdirs(folder)
    except (FileExistsError, NotADirectoryError):
        raise IOFailure(
            f"{shown}: cannot create directory {escape(folder)}: a file is in the way"
        ) from None
    except OSError as exc:
        raise IOFailure(
            f"{shown}: cannot create directory {escape(folder)}: {_reason(exc)}"
        ) from None


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _through(path: str) -> bool:
    """Whether `path` is something to write through rather than replace: an existing
    device, FIFO or socket (also behind a symlink, as `/dev/fd/63` for `-o >(cmd)`).
    A regular file, a link to one, or a new path is replaced atomically instead."""
    try:
        mode = os.stat(path).st_mode  # follows symlinks
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _write_through(path: str, data: Data) -> None:
    """Write to a device or pipe in place, as a shell's `>` would: no temporary file,
    no rename (which would replace the device or the pipe with a regular file)."""
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError as exc:
        raise IOFailure(f"{escape(path)}: {_reason(exc)}") from None
    try:
        _write_all(fd, data)
    except OSError as exc:
        raise IOFailure(f"{escape(path)}: {_reason(exc)}") from None
    finally:
        os.close(fd)


def _resolved(path: str) -> str:
    """The file a symlink finally names (the link itself stays a link and the file it
    names is replaced), or `path` when it is not a link. A loop of links names no file:
    an `IOFailure`, never a link replaced by a file."""
    if not os.path.islink(path):
        return path
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise IOFailure(f"{escape(path)}: {_reason(exc)}") from None
    return os.path.realpath(path)


def write_files(files: Sequence[tuple[str, Data]], parents: bool = True) -> None:
    """Write every (path, bytes) or none: each goes to a temporary file next to its
    target first, and all are renamed into place only when every write succeeded. On a
    failure the temporaries are removed, and so is any target this call created, so a
    failed `run` never leaves a half-finished set of artifacts behind.

    A path that is a device, a FIFO or a socket (or a link to one) is written through,
    after every temporary is ready; a symlink to a file keeps being a link, and the file
    it names gets the new bytes. Missing folders are created (`parents`: the files of
    `--out-dir`); `write_output` says when not.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "f").write_bytes(b"")
    >>> write_files([(str(d / "a.json"), b"a"), (str(d / "f" / "b.json"), b"b")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    placement_cli.core.errors.IOFailure: .../f/b.json: cannot create directory .../f: a file is in the way
    >>> (d / "a.json").exists()
    False
    >>> (d / "link").symlink_to(d / "f"); write_files([(str(d / "link"), b"new")])
    >>> (d / "link").is_symlink(), (d / "f").read_bytes()
    (True, b'new')
    """
    umask = os.umask(0)
    os.umask(umask)
    temps: list[tuple[str, str]] = []
    renamed: list[str] = []
    existed: dict[str, bool] = {}
    direct = [(path, data) for path, data in files if _through(path)]
    try:
        for path, data in files:
            if _through(path):
                continue
            tmp, target = _prepare(_resolved(path), data, umask, parents)
            temps.append((tmp, target))
            existed[target] = exists(target)
        for path, data in direct:
            _write_through(path, data)
        for tmp, target in temps:
            try:
                os.replace(tmp, target)
            except OSError as exc:
                raise IOFailure(f"{escape(target)}: {_reason(exc)}") from None
            renamed.append(target)
    except BaseException:
        for tmp, target in temps:
            if target not in renamed:
                _unlink(tmp)
        for target in renamed:
            if not existed.get(target, True):
                _unlink(target)
        raise
