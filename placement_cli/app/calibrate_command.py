"""`placement calibrate measure|fit`: time hand-offs between engines, fit the transfer
model to them (docs/calibrate.md). The command is declared here; `app/commands.py`
lists it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from placement_cli.app.console import say
from placement_cli.app.options import DEBUG, OUTPUT, QUIET, Arg, Command, Opt
from placement_cli.core.errors import EXIT_OK, UsageError
from placement_cli.core.io import dumps, read_bytes, source_name, write_output

PAIRS = "duckdb:datafusion,datafusion:duckdb,duckdb:postgres,postgres:duckdb"


def calibrate() -> Command:
    return Command(
        "calibrate",
        "Measure hand-offs between engines (measure), or fit the transfer model "
        "a + b*R + c*W + d*R*W to measurements (fit); docs/calibrate.md.",
        (
            Arg(
                "action",
                "ACTION",
                "measure: time hand-offs into a CSV; fit: CSV files -> a transfer profile.",
            ),
            Arg(
                "files",
                "[CSV...]",
                "fit: the measurement CSV files (src,dst,rows,width,ms[,repeat]), fitted together.",
                gather=True,
            ),
        ),
        (
            Opt(
                "pairs",
                ("--pairs",),
                "measure: the directions, SRC:DST,... (engines: duckdb, datafusion, postgres).",
                default=PAIRS,
            ),
            Opt(
                "db",
                ("--db",),
                "measure: the DuckDB database file (DuckDB and DataFusion run on it).",
                metavar="FILE",
            ),
            Opt("pg", ("--pg",), "measure: the PostgreSQL connection string.", metavar="DSN"),
            Opt(
                "rows",
                ("--rows",),
                "measure: row counts, N,N,... (default: per direction, docs/calibrate.md).",
                metavar="N,...",
            ),
            Opt(
                "widths",
                ("--widths",),
                "measure: bytes per row, W,W,...",
                default="16,64,256",
                metavar="W,...",
            ),
            Opt(
                "repeat",
                ("--repeat",),
                "measure: timed runs per point (each written; fit takes their median), in "
                "rounds, after one warm-up.",
                kind="int",
                default=5,
                minimum=1,
            ),
            Opt(
                "weights",
                ("--weights",),
                "fit: relative (each point by 1/T: the relative error is minimised) or none.",
                default="relative",
                choices=("relative", "none"),
            ),
            Opt(
                "reduce",
                ("--reduce",),
                "fit: the runs of one point (same src, dst, rows, width) become one point: their median, their min (contention only adds time), or none (every run a point).",
                default="median",
                choices=("median", "min", "none"),
            ),
            Opt("name", ("--name",), "fit: the profile's name."),
            OUTPUT,
            QUIET,
            DEBUG,
        ),
        "placement_cli.app.calibrate_command:command",
    )


def command(name: str, v: dict[str, Any]) -> int:
    if v["action"] == "fit":
        return _fit(v)
    if v["action"] == "measure":
        return _measure(v)
    raise UsageError(f"unknown action {v['action']!r:.40}: measure or fit")


def _ints(text: str, what: str) -> list[int]:
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(
            f"{what}: expected whole numbers separated by commas, got {text!r:.60}"
        ) from None
    if not out or any(x < 1 for x in out):
        raise UsageError(f"{what}: expected whole numbers >= 1, got {text!r:.60}")
    return out


def _pairs(text: str) -> list[tuple[str, str]]:
    # Lazy: the engines package (~1.5 ms, measured), only for `calibrate measure`; this
    # module is read by every command (`app/commands.py`).
    from placement_cli.engines.connect import ENGINES

    out = []
    for item in text.split(","):
        src, sep, dst = item.strip().partition(":")
        if not sep or src not in ENGINES or dst not in ENGINES or src == dst:
            raise UsageError(
                f"--pairs: {item.strip()!r:.40} is not SRC:DST of two different engines "
                f"({', '.join(ENGINES)})"
            )
        out.append((src, dst))
    return out


def _measure(v: dict[str, Any]) -> int:
    # Lazy: the engines package (~0.3 ms, measured), only for `calibrate measure`.
    from placement_cli.engines.require import need

    need("calibrate measure")
    # Lazy: the engines' hand-off and the CSV reader (~7 ms, measured), only here.
    from placement_cli.engines.connect import Sources
    from placement_cli.engines.handoff import calibration_connections, measure
    from placement_cli.frontends.calibrate.measurements import Measurement, write_measurements

    if v["files"]:
        raise UsageError("calibrate measure takes no files: it writes its CSV to -o FILE or stdout")
    pairs = _pairs(v["pairs"])
    used = {e for p in pairs for e in p}
    if used & {"duckdb", "datafusion"} and v["db"] is None:
        raise UsageError("calibrate measure: duckdb and datafusion need --db FILE")
    if "postgres" in used and v["pg"] is None:
        raise UsageError("calibrate measure: postgres needs --pg DSN")
    if v["db"] is not None and not Path(v["db"]).is_file():
        raise UsageError(f"--db: no such file {v['db']!r:.200}")
    rows = _ints(v["rows"], "--rows") if v["rows"] else None
    widths = _ints(v["widths"], "--widths")
    conns = calibration_connections(Sources(db=Path(v["db"]) if v["db"] else None, pg=v["pg"]))
    t0 = time.perf_counter()

    def said(src: str, dst: str, r: int, w: int, ms: list[float]) -> None:
        runs = " ".join(f"{x:.2f}" for x in ms)
        _say(f"{src} -> {dst}: {r} rows x {w} B: {runs} ms", v["quiet"])

    try:
        got = measure(conns, pairs, rows, widths, v["repeat"], progress=said)
    finally:
        conns.close()
    out = [
        Measurement(s, d, float(r), float(w), round(x, 4), i)
        for s, d, r, w, ms in got
        for i, x in enumerate(ms, start=1)
    ]
    write_output(write_measurements(out), v["output"])
    _say(
        f"{len(got)} points x {v['repeat']} runs in {time.perf_counter() - t0:.1f} s",
        v["quiet"],
    )
    return EXIT_OK


def _fit(v: dict[str, Any]) -> int:
    # Lazy: numpy, the fit and the profile's pydantic model (~270 ms, measured), only for
    # `calibrate fit`.
    import numpy as np

    from placement_cli.algorithms.transfer_fit import COEFFICIENTS, fit
    from placement_cli.formats.transfer_profile import TransferProfile
    from placement_cli.frontends.calibrate.measurements import read_measurements, reduce_repeats

    files = v["files"] or []
    if not files:
        raise UsageError("calibrate fit: give the measurement CSV file(s)")
    points = [m for f in files for m in read_measurements(read_bytes(f), source_name(f))]
    by: dict[tuple[str, str], list[Any]] = {}
    for m in reduce_repeats(points, v["reduce"]):
        by.setdefault((m.src, m.dst), []).append(m)
    directions = []
    for (src, dst), ms in by.items():
        f = fit(
            np.array([m.rows for m in ms]),
            np.array([m.width for m in ms]),
            np.array([m.ms for m in ms]),
            relative=v["weights"] == "relative",
        )
        d: dict[str, Any] = {
            "src": src,
            "dst": dst,
            "model": f.coefficients,
            "n": f.n,
            "r2": f.r2,
            "rmse_ms": f.rmse,
            "held_out": f.held_out,
            "held_out_median_error": f.held_out_median_error,
            "identified": f.identified,
        }
        if all(np.isfinite(f.intervals[c]).all() for c in COEFFICIENTS):
            d["interval95"] = {c: list(f.intervals[c]) for c in COEFFICIENTS}
        directions.append(d)
        _say(_line(src, dst, f), v["quiet"])
    doc = {
        "version": 1,
        "kind": "transfer-profile",
        "unit": "ms",
        "name": v["name"],
        "measured": None,
        "weights": v["weights"],
        "reduce": v["reduce"],
        "directions": directions,
    }
    TransferProfile.model_validate(doc)  # what is written reads back
    write_output(dumps({k: x for k, x in doc.items() if x is not None}), v["output"])
    return EXIT_OK


def _line(src: str, dst: str, f: Any) -> str:
    """One direction for people: quality, then each coefficient with its flag."""
    r2 = "n/a" if f.r2 is None else f"{f.r2:.3f}"
    ho = (
        "no held-out check (fewer than 8 distinct points)"
        if f.held_out_median_error is None
        else f"held-out median error {100 * f.held_out_median_error:.1f}% ({f.held_out} points)"
    )
    names = {"fixed": "a", "per_row": "b", "per_width": "c", "per_byte": "d"}
    parts = []
    for c, letter in names.items():
        flag = {
            "yes": "",
            "at-zero": " (at 0: not identified)",
            "uncertain": " (95% interval includes 0: not identified)",
        }[f.identified[c]]
        parts.append(f"{letter}={f.coefficients[c]:.4g}{flag}")
    return f"{src} -> {dst}: n={f.n}, R² {r2}, RMSE {f.rmse:.3g} ms, {ho}; " + ", ".join(parts)


def _say(text: str, quiet: bool) -> None:
    say(text, quiet, always=True)
