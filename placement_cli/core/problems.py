"""Turning pydantic validation errors into `Problem`s, and showing a bad value briefly.

A value in an error message is formatted only as far as it is printed: the input
may be a huge list, a deeply nested mapping or (through YAML aliases) a structure
shared a million times over, and building its full `repr` first costs the time,
memory or recursion that the cut was meant to save.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from placement_cli.core.errors import Problem, format_loc

if TYPE_CHECKING:  # only callers that caught one import pydantic
    from pydantic import ValidationError

BRIEF_CHARS = 40


def brief(value: Any, limit: int = BRIEF_CHARS) -> str:
    """A `repr` of `value` cut to about `limit` characters, built without formatting
    more than that (iterative, so depth cannot exhaust the stack).

    >>> brief("abc")
    "'abc'"
    >>> brief(list(range(10**6)), 12)
    '[0, 1, 2, 3…'
    >>> nested = []
    >>> for _ in range(100000): nested = [nested]
    >>> brief(nested, 8)
    '[[[[[[[…'
    """
    out: list[str] = []
    size = 0
    # A stack of pending work: values to render and literal strings to emit.
    stack: list[tuple[bool, Any]] = [(False, value)]
    while stack and size <= limit:
        literal, item = stack.pop()
        if literal:
            piece = item
        elif isinstance(item, dict):
            parts: list[tuple[bool, Any]] = [(True, "{")]
            for i, (k, v) in enumerate(item.items()):
                if i:
                    parts.append((True, ", "))
                if i * 2 > limit:  # more entries than could ever be printed
                    parts.append((True, "…"))
                    break
                parts += [(False, k), (True, ": "), (False, v)]
            parts.append((True, "}"))
            stack.extend(reversed(parts))
            continue
        elif isinstance(item, (list, tuple)):
            open_, close = ("[", "]") if isinstance(item, list) else ("(", ")")
            parts = [(True, open_)]
            for i, v in enumerate(item):
                if i:
                    parts.append((True, ", "))
                if i * 2 > limit:
                    parts.append((True, "…"))
                    break
                parts.append((False, v))
            parts.append((True, close))
            stack.extend(reversed(parts))
            continue
        elif isinstance(item, (str, bytes)):
            piece = repr(item[: limit + 2])
            if len(item) > limit + 2:
                piece = piece[:-1]  # the cut string has no closing quote
        elif isinstance(item, (int, float, bool)) or item is None:
            # A 10**100000 int would take long to print and is cut anyway.
            piece = (
                repr(item)
                if not isinstance(item, int) or item.bit_length() < 512
                else "<a huge integer>"
            )
        else:
            piece = f"<{type(item).__name__}>"
        out.append(piece)
        size += len(piece)
    text = "".join(out)
    return text if len(text) <= limit and not stack else text[: limit - 1] + "…"


_TYPE_ERRORS = ("string_type", "float_type", "int_type", "dict_type", "list_type", "bool_type")


def validation_problems(exc: ValidationError, prefix: str = "") -> list[Problem]:
    """One `Problem` per pydantic error, with a field path and a short message.

    >>> from pydantic import BaseModel, ValidationError
    >>> class M(BaseModel):
    ...     id: str
    >>> try:
    ...     M.model_validate({"id": list(range(10**5))})
    ... except ValidationError as e:
    ...     print(validation_problems(e)[0].message)
    Input should be a valid string (got list [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, …)
    """
    out = []
    # include_input=False would lose the value we show; the inputs are references,
    # not copies, and are formatted only through `brief`.
    for err in exc.errors(include_url=False, include_context=True):
        loc = format_loc(tuple(err["loc"]))
        msg = err["msg"]
        if err["type"] == "json_invalid":
            msg = f"invalid JSON: {err.get('ctx', {}).get('error', msg)}"
        elif err["type"] == "missing":
            msg = "required field is missing"
        elif err["type"] == "extra_forbidden":
            msg = "unknown field"
        elif err["type"] in _TYPE_ERRORS:
            value = err.get("input")
            msg = f"{msg} (got {type(value).__name__} {brief(value)})"
        out.append(Problem(prefix + loc if loc else prefix.rstrip("."), msg))
    return out
