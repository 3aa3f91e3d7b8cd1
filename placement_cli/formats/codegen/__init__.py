"""Generate the fast checks from the models: `python -m placement_cli.formats.codegen`
(`make schemas`; `--check` only says whether the committed files are current).

The pydantic models (`placement_cli.formats.plan`, `placement_cli.formats.sections`,
`placement_cli.formats.tree`) are the one definition of the input formats and the
source of every error message. This walks them (field names and aliases, types,
`Literal` values, `Field` constraints, required fields and defaults, `extra`) and
writes, into
`placement_cli/formats/generated/` (committed; `tests/test_codegen.py` fails when a file
differs from what this writes today):

- `plan_check.py`: plain Python, no pydantic: one specialised accept-or-`Reject`
  function per *part* of a plan (`PLAN_PARTS`) and `check_plan`, the whole plan;
- `plan_view.py`: the read-only views over a checked plan document (`planview`), one
  class per model with its fields, types and defaults;
- `section_check.py`: the artifact and its sections as tables of column checks
  (`placement_cli.formats.columns`, the runtime that checks a list of 100k objects a
  field at a time);
- `tree_check.py`: a tree file's explicit transfers (`placement_cli.formats.tree`) as
  a column check that also hands over the columns (`algorithms.tree.load`).

Written by hand in `spec`, as data the generator reads: the parts (which fields of which
model each generated function checks, so that the graph builder can check a block's
parts where it reads them and a repeated part once per distinct serialisation;
`_coverage` proves at generation time that they check every field of every model
exactly once), and what each of the models' own validators means (`VALIDATORS`; a
validator not listed, or a constraint or type the generator does not know, fails the
generation instead of being skipped).

What "certainly accepted" means for each type (the models' strict mode, read through
orjson or `yaml_core`): `str`, `list`, `dict` with `str` keys are their exact types;
`float` is an exact `float`, finite and below `BIG_FLOAT`, or an exact `int` a float
holds exactly (never `bool`); `int` an exact `int` within 64 bits; `Literal` values
by exact type and value; `Any` nested no deeper than `MAX_FREE_DEPTH`
(`placement_cli.formats.checking`). Anything else is left to the models: the checks
may refuse what the models accept (the models then accept it, more slowly), never the
other way round.

The parts: `spec` (the hand-written data: `VALIDATORS`, `PLAN_PARTS`), `typeir` (the
type IR read from the models' annotations and constraints), `coverage` (the proof that
the parts check every field once), `emit_plan` (the straight-line plan checks),
`emit_view` (the plan views), `emit_columns` (the section and tree column-check tables)
and `__main__` (writes the files).
"""

from __future__ import annotations

from pathlib import Path

from placement_cli.formats.codegen.coverage import _coverage
from placement_cli.formats.codegen.emit_columns import Columns, generate_sections, generate_tree
from placement_cli.formats.codegen.emit_plan import RUNTIME, Emitter, generate
from placement_cli.formats.codegen.emit_view import generate_views
from placement_cli.formats.codegen.spec import PLAN_PARTS, VALIDATORS, WHOLE, Part
from placement_cli.formats.codegen.typeir import T, _check_model, field_t, key_of, models_of, to_t

OUT = Path(__file__).resolve().parent.parent / "generated" / "plan_check.py"
VIEW_OUT = OUT.parent / "plan_view.py"
SECTION_OUT = OUT.parent / "section_check.py"
TREE_OUT = OUT.parent / "tree_check.py"

__all__ = [
    "OUT",
    "PLAN_PARTS",
    "RUNTIME",
    "SECTION_OUT",
    "TREE_OUT",
    "VALIDATORS",
    "VIEW_OUT",
    "WHOLE",
    "Columns",
    "Emitter",
    "Part",
    "T",
    "_check_model",
    "_coverage",
    "field_t",
    "generate",
    "generate_sections",
    "generate_tree",
    "generate_views",
    "key_of",
    "models_of",
    "to_t",
]
