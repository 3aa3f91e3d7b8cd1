"""Write a TPC-H database as a DuckDB file: the data of the walkthrough in the README
("Real engines"), made by DuckDB's own TPC-H generator (`CALL dbgen`), offline.

    python examples/tpch/make_data.py tpch.duckdb            # scale factor 0.1, about 3 s
    python examples/tpch/make_data.py tpch.duckdb --sf 0.01  # a tenth of that

Needs the engines extra (`pip install -e '.[engines]'`: DuckDB and its tpch extension
as a wheel). An existing file is replaced, so a run always gives the same tables; the
new file is written next to it and renamed, so a failed run leaves the old one intact.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def make(path: Path, sf: float) -> None:
    """`path` holding the 8 TPC-H tables at scale factor `sf`."""
    import duckdb
    from duckdb_extensions import import_extension

    import_extension("tpch")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        with duckdb.connect(str(tmp)) as con:
            con.execute("LOAD tpch")
            con.execute("CALL dbgen(sf = ?)", [sf])
            con.execute("CHECKPOINT")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        Path(f"{tmp}.wal").unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path, help="the DuckDB file to write")
    parser.add_argument("--sf", type=float, default=0.1, help="TPC-H scale factor (0.1)")
    args = parser.parse_args(argv)
    if not args.sf > 0:
        parser.error("--sf must be > 0")
    try:
        make(args.path, args.sf)
    except ImportError as exc:
        print(f"{exc}: install the engines extra: pip install -e '.[engines]'", file=sys.stderr)
        return 2
    print(f"{args.path}: TPC-H at scale factor {args.sf:g}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
