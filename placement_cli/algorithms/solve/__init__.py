"""The solve pass: its options, the methods (heuristic, complete search, exact) and its result."""
