"""placement: decide where each block of a compiled query program runs."""

__version__ = "0.1.0"
# Format of the pipeline's artifacts (prune, scc, solve, fuse, islands): 2 since the
# compact plan with named matrices and checked sections (docs/format.md).
ARTIFACT_FORMAT_VERSION = 2
# Format of the operator-tree artifact (`placement tree`), unchanged.
FORMAT_VERSION = 1


def version_line() -> str:
    """What `placement --version` prints (typer's `--version` and the launcher's alike).

    >>> version_line() == f"placement {__version__}\\n"
    True
    """
    return f"placement {__version__}\n"
