"""`make bench`: every benchmark in turn. Pass --quick for the small sizes only."""

from __future__ import annotations

import importlib
import sys

BENCHES = [
    "bench_foundation",
    "bench_solve",
    "bench_exact",
    "bench_tree",
    "bench_pipe",
    "bench_lower",
    "bench_batch",
    "bench_import",
    "bench_engines",
]


def main() -> None:
    args = sys.argv[1:]
    for name in BENCHES:
        try:
            mod = importlib.import_module(f"benchmarks.{name}")
        except ModuleNotFoundError as exc:
            print(f"== {name}: not available ({exc})")
            continue
        print(f"== {name}", flush=True)
        mod.main(args)


if __name__ == "__main__":
    main()
