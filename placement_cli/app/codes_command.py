"""`placement codes [CODE]`: every diagnostic code with its title, or one code's
paragraph (as `ruff rule` and `rustc --explain` do), from `core/codes.py`.

Plain text on stdout, never through rich: it is read in pipes and by scripts as often
as on a terminal.
"""

from __future__ import annotations

import difflib
import sys
from typing import Any

import orjson

from placement_cli.core.codes import CODES, explain, listing
from placement_cli.core.errors import EXIT_OK, UsageError


def suggestions(code: str) -> list[str]:
    """The known codes closest to `code`, closest first.

    >>> suggestions("pin-infeasable")[:1], suggestions("budget")
    (['pin-infeasible'], ['budget-clamped', 'budget-too-small'])
    """
    close = difflib.get_close_matches(code, CODES, n=3, cutoff=0.6)
    # A part of the name (`budget`, `domain`) names the codes that contain it.
    close += [c for c in CODES if code and code in c and c not in close]
    return close[:3]


def command(name: str, v: dict[str, Any]) -> int:
    """No code: the listing; a code: its paragraph; an unknown code: exit 2 with the
    closest known codes."""
    code = v.get("code")
    as_json = v.get("format") == "json"
    if code is None:
        if as_json:
            data: Any = [c.to_json() for c in CODES.values()]
            sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
        else:
            sys.stdout.write(listing())
        return EXIT_OK
    if code not in CODES:
        close = suggestions(code)
        quoted = [repr(c) for c in close]
        hint = ", ".join(quoted[:-1]) + " or " + quoted[-1] if len(quoted) > 1 else "".join(quoted)
        hint = f"; did you mean {hint}?" if close else ""
        raise UsageError(f"unknown diagnostic code {code!r}{hint} (`placement codes` lists them)")
    if as_json:
        sys.stdout.write(orjson.dumps(CODES[code].to_json(), option=orjson.OPT_INDENT_2).decode())
        sys.stdout.write("\n")
    else:
        sys.stdout.write(explain(code))
    return EXIT_OK
