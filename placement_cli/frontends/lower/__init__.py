"""`lower`: derive a plan from a MIR body (eligibility, splitting, sizes, matrices, premium).

Modules follow the analysis's own parts: `types`, `profile`, `ir` (checked, indexed
bodies), `compile` (a body file checked into `ir`), `flow` (a body's control flow),
`eligibility`, `split`, `sizes` (sizes and liveness), `matrices` (transition matrices),
`premium` (vertex path premium), `emit` (the plan), `planmode` (splitting an existing
plan), `stage` (the order). The body file's model is `formats/body.py`.

The package itself imports nothing: `stage` needs pydantic (a fifth of a second), and
the command line reads `split`'s modes on every pipeline command.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LowerOptions", "lower_to_plan"]


def __getattr__(name: str) -> Any:
    # `from placement_cli.frontends.lower import lower_to_plan` imports `stage` then.
    if name in __all__:
        # Lazy: stage imports pydantic (0.2 s, measured); the package is read on every command.
        from placement_cli.frontends.lower import (
            stage,
        )

        return getattr(stage, name)
    raise AttributeError(name)
