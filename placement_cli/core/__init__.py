"""Layer 1, core: errors and exit codes, problems, limits, diagnostics, bytes in and out."""
