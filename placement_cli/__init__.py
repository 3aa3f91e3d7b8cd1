"""placement: decide where each block of a compiled query program runs."""

__version__ = "0.1.0"
FORMAT_VERSION = 2  # artifact format; 2: compact plan (named matrices), checked sections
