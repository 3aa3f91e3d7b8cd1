"""Layer 4, front ends: programs turned into plans (`lower` for MIR body files)."""
