"""The fuzz harness: hostile inputs through the real CLI (`python -m tests.fuzz --help`).

`gen` makes inputs (seeded) and `inputs` picks one per job; `child` runs it through the
CLI in a child process under limits, `judge` tells what rules the run broke, `campaign`
is one job of the campaign from input to outcome; `__main__` is the campaign (`make
fuzz`), `report` its tables and findings, `mir` the MIR reader's own campaign,
`tests/test_fuzz.py` the fast slice.
"""
