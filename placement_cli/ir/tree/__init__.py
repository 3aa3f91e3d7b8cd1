"""The operator tree `placement tree` places, as the DP reads it: `read` (a tree file or
a `tree` artifact's input, parsed and type-checked into `formats.tree_structs`), `check`
(names resolved, one root, no cycle, no overflow: the indexed `TreeInput`), `build` (the
tree under the root, shared sub-plans rejected or duplicated, transfers as coefficient
matrices), `model` (those indexed forms and the limits) and `options` (the command's
options). See `docs/tree.md`.

Import from the modules themselves: this package imports nothing, so that building the
command line (which reads `options`) does not import numpy with `model`.
"""
