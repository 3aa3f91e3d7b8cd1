"""What a stage's `check` uses to report: the problems of one section (`Problems`), and
the first place a read section differs from the recomputed one (`compare`)."""

from __future__ import annotations

from typing import Any

from placement_cli.core.errors import InputError, Problem
from placement_cli.pipeline.registry import section_model


class Problems:
    """Collects problems of one section; `raise_if_any` raises them together."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.items: list[Problem] = []

    def add(self, path: str, message: str) -> None:
        self.items.append(Problem(f"{self.prefix}.{path}" if path else self.prefix, message))

    def raise_if_any(self) -> None:
        if self.items:
            raise InputError(self.items)


def first_difference(given: Any, expected: Any, path: str = "") -> tuple[str, str] | None:
    """The first place (path, message) where `given` differs from `expected`, walking
    both in order; numbers compare by value (4 == 4.0).

    >>> first_difference({"a": [1, 2]}, {"a": [1, 3]})
    ('a[1]', 'is 2, but the plan gives 3')
    >>> first_difference({"a": 1.0}, {"a": 1}) is None
    True
    """
    if isinstance(expected, dict) and isinstance(given, dict):
        for k, v in expected.items():
            sub = f"{path}.{k}" if path else str(k)
            if k not in given:
                return sub, "missing"
            d = first_difference(given[k], v, sub)
            if d is not None:
                return d
        for k in given:
            if k not in expected:
                return (f"{path}.{k}" if path else str(k)), "unexpected field"
        return None
    if isinstance(expected, list) and isinstance(given, list):
        for i, (a, b) in enumerate(zip(given, expected, strict=False)):
            d = first_difference(a, b, f"{path}[{i}]")
            if d is not None:
                return d
        if len(given) != len(expected):
            return path, f"has {len(given)} entries, but the plan gives {len(expected)}"
        return None
    if isinstance(given, bool) or isinstance(expected, bool):
        same = given is expected
    else:
        same = given == expected
    if same:
        return None
    return path, f"is {given!r:.60}, but the plan gives {expected!r:.60}"


def compare(pr: Problems, sec: Any, expected: dict[str, Any]) -> None:
    """Add the first difference between a read section and the recomputed one."""
    given = dump(sec)
    if given == expected:  # checked types: no 1 == True confusion in declared fields
        return
    if isinstance(sec, dict):
        # Reported as the section's model reads it (fields in declaration order, so the
        # first unexpected field named is the same whichever order the file has).
        given = dump(section_model(pr.prefix).model_validate(sec))
    diff = first_difference(given, expected)
    pr.add(*(diff or ("", "does not match the section recomputed from the plan")))


def dump(section: Any) -> dict[str, Any]:
    """A read section as JSON data (only the fields it had, aliases restored): the data
    itself, or a pydantic section model dumped."""
    if isinstance(section, dict):
        return section
    return section.model_dump(by_alias=True, exclude_unset=True)  # type: ignore[no-any-return]
