"""`lower`: derive a plan from a MIR body (eligibility, splitting, sizes, matrices, premium).

Modules follow the analysis's own parts: `body` (the file format), `types`, `profile`,
`ir` (checked, indexed bodies), `eligibility`, `split`, `sizes` (sizes and liveness),
`matrices` (transition matrices), `premium` (vertex path premium), `emit` (the plan),
`planmode` (splitting an existing plan), `stage` (the order), `command` (the CLI).
"""

from placement_cli.frontends.lower.stage import LowerOptions, lower_to_plan

__all__ = ["LowerOptions", "lower_to_plan"]
