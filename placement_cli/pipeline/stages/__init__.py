"""One module per stage: its `STAGE` (compute, and check a read section)."""
