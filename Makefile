# Every target creates the virtual environment and installs what it needs first,
# so each works on a fresh clone with nothing but python3 (>= 3.11) and make.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
RSTAMP := $(VENV)/.installed-run
BSTAMP := $(VENV)/.installed-bench
EXAMPLE ?= examples/three_targets.yaml

.PHONY: run test lint goldens schemas bench clean fuzz

# Editable installs use setuptools' `compat` mode: a plain path entry, where the default
# mode installs an import hook that every Python process runs at start-up (about 22 ms,
# paid by each stage of a pipe; docs/startup.md). setuptools calls the mode transitional:
# when it is gone, the default mode is used.
EDITABLE := --config-settings editable_mode=compat

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]' $(EDITABLE) || $(PY) -m pip install -q -e '.[dev]'
	touch $@

# `make run` needs only the package itself, not the test and lint tools.
$(RSTAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e . $(EDITABLE) || $(PY) -m pip install -q -e .
	touch $@

$(BSTAMP): $(STAMP)
	$(PY) -m pip install -q -e '.[dev,bench]' $(EDITABLE) || $(PY) -m pip install -q -e '.[dev,bench]'
	touch $@

run: $(RSTAMP)
	$(BIN)/placement run $(EXAMPLE) --out-dir out

# Two workers or more: the suite is hundreds of independent property and CLI tests.
test: $(STAMP)
	$(PY) -m pytest -n auto

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

goldens: $(STAMP)
	$(PY) -m tests.goldens --write
	$(PY) -m tests.views_goldens --write

schemas: $(STAMP)
	$(BIN)/placement schema --out-dir schemas

# The long fuzz campaign (10k inputs per command, 2 workers); FUZZ_ARGS adds options.
fuzz: $(STAMP)
	$(PY) -m tests.fuzz --long --workers 2 $(FUZZ_ARGS)

bench: $(BSTAMP)
	$(PY) -m benchmarks.run

clean:
	rm -rf out .pytest_cache .mypy_cache .ruff_cache .hypothesis
