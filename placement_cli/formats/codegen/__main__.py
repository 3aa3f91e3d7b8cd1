"""`python -m placement_cli.formats.codegen` (`make schemas`): write the generated files;
`--check` only says whether the committed files are current."""

from __future__ import annotations

import sys

from placement_cli.formats.codegen import (
    SECTION_OUT,
    TREE_OUT,
    generate_sections,
    generate_tree,
)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    outputs = {
        SECTION_OUT: generate_sections(),
        TREE_OUT: generate_tree(),
    }
    stale = [p for p, text in outputs.items() if not p.exists() or p.read_text() != text]
    if args == ["--check"]:
        for path in stale:
            print(f"{path} is stale: run `make schemas`", file=sys.stderr)
        return 1 if stale else 0
    for path, text in outputs.items():
        path.write_text(text)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
