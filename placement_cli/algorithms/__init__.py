"""Layer 4, algorithms: the passes (prune, scc, solve, fuse, islands, tree) as functions on the graph."""
