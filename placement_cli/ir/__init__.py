"""Layer 3, ir: the indexed graph a plan is checked into, its normalised form and graph algorithms."""
