"""Layer 7, app: the command line (typer commands, the fast launcher, console output)."""
