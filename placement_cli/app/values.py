"""A command's values, typed, as its handler reads them.

Both parsers (typer's, `app/cli.py`, and the fast launcher's, `app/launch.py`) give a
command's values by option key, and `app/dispatch.py`, `app/config.py` and
`app/batch.py` pass them on so, one input at a time. A handler reads them, once, at its
start, as typed records: `Common`, the options the commands share, and its stages'
options models (`model_values`: `SolveOptions`, `LowerOptions`, `TreeOptions`), built
from the same fields the options were derived from (`app/options.py`).

>>> from placement_cli.frontends.lower.options import LowerOptions
>>> v = {"path": "b.mir", "quiet": True, "split": "runs", "size_cap": None, "body_name": "f"}
>>> Common.of(v).quiet, model_values(LowerOptions, v)
(True, LowerOptions(body='f', profile=None, split='runs', size_cap=None))
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import msgspec

from placement_cli.core.errors import InputError, Problem
from placement_cli.core.io import STDIN, parse_document, read_bytes, source_name
from placement_cli.core.option_field import flags_of
from placement_cli.frontends.lower.options import LowerOptions

T = TypeVar("T")


class Common(msgspec.Struct, frozen=True):
    """The options several commands share (`app/options.py`), each as its option
    declares it; a command without one gets the default here."""

    path: str = STDIN  # the one input (a batch runs the handler once per input)
    output: str | None = None  # -o/--output
    format: str = "json"  # --format
    quiet: bool = False  # -q/--quiet
    timings: bool = False  # --timings
    diagnostics: str = "text"  # --diagnostics
    out_dir: str | None = None  # --out-dir
    source: str | None = None  # --from
    tree: str | None = None  # --tree
    config: dict[str, Any] | None = None  # what the project's configuration set

    @classmethod
    def of(cls, v: Mapping[str, Any]) -> Common:
        """The shared options among a command's values."""
        return cls(**{k: v[k] for k in _COMMON if k in v})


_COMMON = Common.__struct_fields__


def model_values(model: type[T], v: Mapping[str, Any], **made: Any) -> T:
    """A stage's options model from a command's values: each field its options give as
    they are, by the option's key; `made`: the fields the handler makes from what the
    command line gave in another form (a file it reads, `BLOCK=TARGET` text). A field
    the command does not have keeps its default."""
    kw = {
        f.name: v[flag.key or f.name]
        for f, flag in flags_of(model)
        if flag.kind is None and (flag.key or f.name) in v
    }
    return model(**kw, **made)


def lower_options(v: Mapping[str, Any]) -> LowerOptions:
    """The front end's settings a command line gave (`--body`, `--targets`, `--split`,
    `--size-cap`), for a body it lowers (first); every field None (the file's own)
    when it gave none.

    >>> lower_options({"split": "intersection", "size_cap": None, "targets": None})
    LowerOptions(body=None, profile=None, split='intersection', size_cap=None)
    """
    targets = v.get("targets")
    if targets is None:
        return model_values(LowerOptions, v)
    # The profile file is read (and checked) only when one is named.
    return model_values(LowerOptions, v, profile=read_profile(targets))


def read_profile(path: str) -> dict[str, Any]:
    """A profile file (`--targets FILE`): a mapping, checked when the body is lowered."""
    source = source_name(path)
    doc = parse_document(path, read_bytes(path))
    if not isinstance(doc, dict):
        raise InputError([Problem("", "a profile file is a mapping at the top level")], source)
    # Lazy: the front end and pydantic (0.2 s, measured), only when --targets names a profile.
    from placement_cli.frontends.lower.profile import load_profile

    try:
        load_profile(doc, "")
    except InputError as exc:
        raise InputError(
            [Problem(p.path.lstrip("."), p.message) for p in exc.problems], source
        ) from None
    return doc
