"""One module per engine, each a subclass of `engines/base.Engine`; `engines/registry.py`
lists them. A module here imports its engine's packages only when a session opens."""
