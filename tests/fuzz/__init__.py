"""The fuzz harness: hostile inputs through the real CLI (`python -m tests.fuzz --help`).

`gen` makes inputs (seeded), `runner` runs one through a child process and judges the
outcome, `__main__` is the campaign (`make fuzz`), `tests/test_fuzz.py` the fast slice.
"""
