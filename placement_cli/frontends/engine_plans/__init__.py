"""What engines print about a query they ran (or planned), read without the engine.

`placement import FORMAT FILE...` (docs/import.md) turns each file into a `Plan`
(`model.py`): one node per operator, in pre-order, with its exclusive time in
milliseconds, its output rows and its bytes per row. `postgres.py` reads `EXPLAIN
(ANALYZE, FORMAT JSON)`, `duckdb.py` DuckDB's JSON profile, `datafusion.py` the metrics
dump `engines/datafusion_dump.py` writes; `tree_file.py` lines up the plans of one query
on several engines into one tree file for `placement tree`.

Pure: the standard library and the tool's core only, so reading a plan never needs an
engine installed.
"""
