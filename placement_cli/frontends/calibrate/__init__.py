"""Calibrating the transfer model: reading measured hand-offs (`measurements`) and
applying a fitted transfer profile to a tree file (`transfer`). The fit itself is
`algorithms/transfer_fit.py`; measuring needs real engines (`engines/handoff.py`)."""
