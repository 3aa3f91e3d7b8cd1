"""POSIX paths spelled and tested as `pathlib` spells and tests them, without importing it.

`pathlib` costs every command that writes a file or looks for a configuration file
~2.7 ms of start-up on Python 3.11 (with `urllib.parse`, `ipaddress`, `fnmatch`:
median of 9 processes after orjson and msgspec), for a handful of lexical operations.
These functions give the same strings: a path is normalised as `PurePosixPath` does
(empty and `.` components dropped, `..` kept, exactly two leading slashes kept as the
root `//`), so that every path a message names, and every path written to, is the one
`pathlib` gave before. `is_dir`, `is_file` and `exists` test as `Path`'s methods do:
a missing file, a file in the way, a bad descriptor or a loop of links is "no", any
other error (permission denied) is raised. `tests/test_paths.py` holds each function to
`pathlib` on generated paths.

>>> pure("a//b/./c/"), parent("a/b"), parent("a"), parent("/"), name("a/b.json/")
('a/b/c', 'a', '.', '/', 'b.json')
>>> joined("out/", "prune.json"), joined("a", "/abs"), suffix("x/p.JSON"), suffix(".yaml")
('out/prune.json', '/abs', '.JSON', '')
>>> lineage("//x/y")
['//x/y', '//x', '//']
"""

from __future__ import annotations

import errno
import os
import stat

# The errors `pathlib` reads as "no such file" in its tests (its `_ignore_error`).
_IGNORED = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def _split(path: str) -> tuple[str, list[str]]:
    """The root ("", "/" or "//") and the components of `path`, as `PurePosixPath`."""
    if path[:1] == "/":
        rest = path.lstrip("/")
        root = "//" if len(path) - len(rest) == 2 else "/"
    else:
        root, rest = "", path
    return root, [x for x in rest.split("/") if x and x != "."]


def _format(root: str, parts: list[str]) -> str:
    return (root + "/".join(parts)) or "."


def pure(path: str) -> str:
    """`str(PurePosixPath(path))`."""
    return _format(*_split(path))


def joined(path: str, other: str) -> str:
    """`str(PurePosixPath(path) / other)`: an absolute `other` replaces `path`."""
    root, parts = _split(other)
    if root:
        return _format(root, parts)
    base_root, base = _split(path)
    return _format(base_root, base + parts)


def parent(path: str) -> str:
    """`str(PurePosixPath(path).parent)`: a root and `.` are their own parents."""
    root, parts = _split(path)
    return _format(root, parts[:-1])


def name(path: str) -> str:
    """`PurePosixPath(path).name`: the last component, "" for a root or `.`."""
    parts = _split(path)[1]
    return parts[-1] if parts else ""


def suffix(path: str) -> str:
    """`PurePosixPath(path).suffix`: from the last dot of the name, not a leading or
    trailing one."""
    last = name(path)
    i = last.rfind(".")
    return last[i:] if 0 < i < len(last) - 1 else ""


def absolute(path: str) -> str:
    """`str(Path(path).absolute())`: joined to the working directory, not resolved (a
    `..` stays, a link is not followed)."""
    root, parts = _split(path)
    if root:
        return _format(root, parts)
    cwd_root, cwd = _split(os.getcwd())
    return _format(cwd_root, cwd + parts)


def lineage(path: str) -> list[str]:
    """`path` then its parents, as `[str(p) for p in (P, *P.parents)]`."""
    root, parts = _split(path)
    out = [_format(root, parts[:i]) for i in range(len(parts), 0, -1)]
    if root or not out:
        out.append(_format(root, []))
    elif out[-1] != ".":
        out.append(".")
    return out


def _mode(path: str) -> int | None:
    """The mode `stat` gives (links followed), or None where `pathlib` says no file."""
    try:
        return os.stat(path).st_mode
    except OSError as exc:
        if exc.errno not in _IGNORED:
            raise
        return None
    except ValueError:  # a NUL in the name
        return None


def exists(path: str) -> bool:
    """`Path(path).exists()`."""
    return _mode(path) is not None


def is_dir(path: str) -> bool:
    """`Path(path).is_dir()`."""
    mode = _mode(path)
    return mode is not None and stat.S_ISDIR(mode)


def is_file(path: str) -> bool:
    """`Path(path).is_file()`."""
    mode = _mode(path)
    return mode is not None and stat.S_ISREG(mode)


def mkdirs(path: str) -> None:
    """`Path(path).mkdir(parents=True, exist_ok=True)`, step for step: the same
    directories made in the same order, the same error raised where one fails."""
    try:
        os.mkdir(path)
    except FileNotFoundError:
        up = parent(path)
        if up == pure(path):
            raise
        mkdirs(up)
        try:
            os.mkdir(path)
        except OSError:
            if not is_dir(path):
                raise
    except OSError:
        if not is_dir(path):
            raise
