"""The optional `engines` extra: import its packages, or say how to install them."""

from __future__ import annotations

import importlib
from types import ModuleType

from placement_cli.core.errors import UsageError

EXTRA = "placement[engines]"


def need(command: str, *modules: str) -> list[ModuleType]:
    """Import `modules` for `command` (`registry.need_all`: every engine's); a missing
    one is a usage error (exit 2) naming the extra, never a traceback.

    >>> [m.__name__ for m in need("import", "json")]
    ['json']
    """
    out: list[ModuleType] = []
    for name in modules:
        try:
            out.append(importlib.import_module(name))
        except ImportError as exc:
            raise UsageError(
                f"`placement {command}` runs real engines and needs the engines extra, "
                f"which is not installed (no module {exc.name or name!r}): "
                f"pip install '{EXTRA}'"
            ) from None
    return out
