"""Solvers behind `solve`: the seed heuristic and the exact method, sharing one objective."""
