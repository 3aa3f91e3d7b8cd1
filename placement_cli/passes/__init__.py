"""One pass, one module: prune, scc, solve, fuse, islands, tree."""
