"""Views of a placement for people: `show` (DOT, Mermaid, text), `explain`, `diff`.

Everything here reads plans and artifacts through the in-memory API
(`placement_cli.pipeline.run.load` and `Run`), never through the artifact bytes, and
writes views, not artifacts: a view is for reading, it is never read back.
"""
