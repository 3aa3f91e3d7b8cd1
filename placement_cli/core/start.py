"""What a command's start-up imports differently from a library caller's.

msgspec imports `typing_extensions` at its own import (`msgspec._utils`) for three
names only: `get_type_hints`, `Required` and `NotRequired`, and falls back to the
`typing` module's when it is missing. On Python 3.11 and later those are the same:
`typing_extensions.get_type_hints(..., include_extras=True)` is
`typing.get_type_hints(..., include_extras=True)`, and its `Required` and `NotRequired`
are `typing`'s own objects. `typing_extensions` itself is a large module (~5 ms of a
stage's start-up, measured: msgspec after orjson 12.5 ms with it, 7.2 ms without,
medians of 15 processes), so the launcher imports msgspec with it held back, and
then lets it be imported as usual (pydantic, typer and the tests import it).

Standard library only: the launcher calls this before anything imports msgspec.
"""

from __future__ import annotations

import sys


def import_msgspec() -> None:
    """Import msgspec without `typing_extensions` (see the module's docstring); nothing
    when either is imported already (msgspec then keeps what it found)."""
    if "msgspec" in sys.modules or "typing_extensions" in sys.modules:
        return
    sys.modules["typing_extensions"] = None  # type: ignore[assignment]  # an ImportError
    try:
        import msgspec  # noqa: F401  # the import is the point
    finally:
        del sys.modules["typing_extensions"]
