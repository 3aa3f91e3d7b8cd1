"""Running real engines: DuckDB and DataFusion in-process, PostgreSQL through a server.

Everything here needs the optional `engines` extra (`pip install 'placement[engines]'`)
and is imported only by the commands that run an engine (`import sql --probe`,
`calibrate measure`, `execute`); `require.need` turns a missing package into a usage
error (exit 2) that names the extra. Reading what an engine printed (`import
postgres-explain`, `duckdb-profile`, `datafusion-metrics`) needs no engine: that is
`frontends/engine_plans/`.
"""
