"""`placement calibrate measure` and `calibrate fit`: time hand-offs between engines,
fit the transfer model to them (docs/calibrate.md). Declared in
`app/engine_commands.py`."""

from __future__ import annotations

import time
from typing import Any

from placement_cli.app.console import say
from placement_cli.app.engine_values import engine_options, need_sources
from placement_cli.core.errors import EXIT_OK, InputError, Problem, UsageError
from placement_cli.core.io import check_output, dumps, read_bytes, source_name, write_output


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


def _pairs(text: str | None, sources: Any) -> list[tuple[str, str]]:
    # Lazy: the engine registry (~1.5 ms, measured), only for `calibrate measure`.
    from placement_cli.engines.connect import available
    from placement_cli.engines.registry import DEFAULT_PAIRS, NAMES

    if text is None:
        have = set(available(sources))
        out = [(s, d) for s, d in DEFAULT_PAIRS if s in have and d in have]
        if not out:
            raise UsageError("calibrate measure: give --db FILE (and --pg DSN for postgres)")
        return out
    out = []
    for item in text.split(","):
        src, sep, dst = item.strip().partition(":")
        if not sep or src not in NAMES or dst not in NAMES or src == dst:
            raise UsageError(
                f"--pairs: {item.strip()!r:.40} is not SRC:DST of two different engines "
                f"({', '.join(NAMES)})"
            )
        out.append((src, dst))
    return out


def measure(name: str, v: dict[str, Any]) -> int:
    """`calibrate measure`: every pair's hand-offs timed, written as CSV."""
    # Lazy: the engines package (~0.3 ms, measured), only for `calibrate measure`.
    from placement_cli.engines.require import need

    need("calibrate measure")
    # Lazy: the engines' hand-off and the CSV reader (~7 ms, measured), only here.
    from placement_cli.engines.handoff import calibration_connections
    from placement_cli.engines.handoff import measure as measure_handoffs
    from placement_cli.frontends.calibrate.measurements import Measurement, write_measurements

    opts = engine_options(v)
    check_output(v["output"])  # before any hand-off is timed
    pairs = _pairs(v["pairs"], opts.sources())
    need_sources(opts, dict.fromkeys(e for p in pairs for e in p), "calibrate measure")
    rows = _ints(v["rows"], "--rows") if v["rows"] else None
    widths = _ints(v["widths"], "--widths")
    conns = calibration_connections(opts.sources(), opts.settings())
    t0 = time.perf_counter()

    def said(src: str, dst: str, r: int, w: int, ms: list[float]) -> None:
        runs = " ".join(f"{x:.2f}" for x in ms)
        _say(f"{src} -> {dst}: {r} rows x {w} B: {runs} ms", v["quiet"])

    try:
        got = measure_handoffs(conns, pairs, rows, widths, opts.repeat, opts.warmup, progress=said)
    finally:
        conns.close()
    out = [
        Measurement(s, d, float(r), float(w), round(x, 4), i)
        for s, d, r, w, ms in got
        for i, x in enumerate(ms, start=1)
    ]
    write_output(write_measurements(out), v["output"])
    _say(
        f"{len(got)} points x {opts.repeat} runs in {time.perf_counter() - t0:.1f} s",
        v["quiet"],
    )
    return EXIT_OK


def fit(name: str, v: dict[str, Any]) -> int:
    """`calibrate fit`: the transfer profile of the measurement files."""
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
    if not points:
        raise InputError(
            [Problem("", "no measurements in any file (only headers)")], source_name(files[0])
        )
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
