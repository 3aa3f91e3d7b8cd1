"""The mechanism of the read-only views over a checked document
(`placement_cli.formats.planview`): a view holds the document's dict and reads each
field as the model would hold it, the default where the field is absent. The views'
classes, fields, types and defaults are generated from the models
(`placement_cli.formats.codegen` writes `placement_cli.formats.generated.plan_view`).

`model_construct` and `model_copy` mirror the pydantic methods of the same names, so code
that derives a new plan from a checked one (fusion) builds views the same way.
"""

from __future__ import annotations

from typing import Any, ClassVar

REQUIRED = object()  # `View._fields`: a required field
LIST = object()  # default: a fresh empty list
DICT = object()  # default: a fresh empty dict


class View:
    __slots__ = ("_d",)
    _fields: ClassVar[dict[str, Any]] = {}  # key -> default (REQUIRED, LIST, DICT or the value)

    def __init__(self, data: dict[str, Any]) -> None:
        self._d = data

    @classmethod
    def model_construct(cls, **values: Any) -> Any:
        """A view of the given field values (nothing is checked, as in pydantic)."""
        return cls(values)

    def model_copy(self, update: dict[str, Any] | None = None) -> Any:
        """A view of a copy with some fields replaced."""
        data = dict(self._d)
        data.update(update or {})
        return type(self)(data)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self._fields)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._d!r:.200})"


def wrap(cls: type[View], value: Any) -> Any:
    """A view of plan data; a view, or a block fusion built with the same fields
    (`fuse.FusedBlock`), is already read by attribute."""
    return cls(value) if type(value) is dict else value
