"""The hand-written data the generator reads (docs/load.md): what the models' own
validators mean (`VALIDATORS`)."""

from __future__ import annotations

# What the models' own validators mean for the fast checks: the one hand-written part of
# the formats' definition beside the models (a validator not listed here fails the
# generation). `int64`: an integer within 64 bits, the range every fast check of an
# integer keeps to anyway; `extra`: a model's extra fields (`extra="allow"`) must be
# writable again; `writable`: a free-form value must be writable again (what the
# section checks require of every free-form value, `columns.writable_map`).
VALIDATORS = {
    "_writable_number": "int64",
    "_extras_writable": "extra",
    "_stats_writable": "writable",
    "_lower_writable": "writable",
    "_settings_writable": "writable",
}
