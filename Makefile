# Every target creates the virtual environment and installs what it needs first,
# so each works on a fresh clone with nothing but python3 (>= 3.11) and make.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
RSTAMP := $(VENV)/.installed-run
BSTAMP := $(VENV)/.installed-bench
ESTAMP := $(VENV)/.installed-engines
EXAMPLE ?= examples/three_targets.yaml

.PHONY: run test test-fast lint format docs goldens schemas bench bench-compare bench-startup bench-race bench-decisions bench-models clean fuzz tpch-demo

# Editable installs use setuptools' `compat` mode: a plain path entry, where the default
# mode installs an import hook that every Python process runs at start-up (about 22 ms,
# paid by each stage of a pipe; docs/startup.md). setuptools calls the mode transitional:
# when it is gone, the default mode is used.
EDITABLE := --config-settings editable_mode=compat
# setuptools prints a banner that this mode is transitional on every install; it says
# nothing a user of `make run` can act on (PYTHONWARNINGS reaches the build backend).
PIP := PYTHONWARNINGS=ignore $(PY) -m pip install -q

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PIP) -e '.[dev,engines]' $(EDITABLE) || $(PIP) -e '.[dev,engines]'
	touch $@

# `make run` needs only the package itself, not the test and lint tools.
$(RSTAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PIP) -e . $(EDITABLE) || $(PIP) -e .
	touch $@

$(BSTAMP): $(STAMP)
	$(PIP) -e '.[dev,engines,bench]' $(EDITABLE) || $(PIP) -e '.[dev,engines,bench]'
	touch $@

# `make tpch-demo` needs the package and the engines (DuckDB with TPC-H, DataFusion).
$(ESTAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PIP) -e '.[engines]' $(EDITABLE) || $(PIP) -e '.[engines]'
	touch $@

run: $(RSTAMP)
	$(BIN)/placement run $(EXAMPLE) --out-dir out

# Two workers or more: the suite is hundreds of independent property and CLI tests.
# The tests of the real engines share one PostgreSQL server and one TPC-H database,
# started and stopped around the run by tests/servers.py; a missing engine fails them.
test: $(STAMP)
	PLACEMENT_TEST_ENGINES=required $(PY) -m tests.servers -- $(PY) -m pytest -n auto

# The inner loop: a tenth of the property examples, and without the tests marked `slow`
# (whole-process fuzzing, scale and timing runs; `make test` and CI run them).
test-fast: $(STAMP)
	HYPOTHESIS_PROFILE=fast $(PY) -m pytest -n auto -m "not slow" -p no:cacheprovider

# Style, types and the architecture: `lint-imports` fails on an import that goes up a
# layer or closes a cycle (contracts in pyproject.toml, [tool.importlinter]).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-logo
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Generated documents: the command line's option tables and the diagnostic codes.
docs: $(STAMP)
	$(PY) -m placement_cli.app.commands > docs/cli.md
	$(PY) -m placement_cli.core.diagnostics > docs/diagnostics.md

goldens: $(STAMP)
	$(PY) -m tests.goldens --write
	$(PY) -m tests.views_goldens --write

# Generated from the models: the JSON Schemas (tests fail when they are stale).
schemas: $(STAMP)
	$(BIN)/placement schema --out-dir schemas

# The long fuzz campaigns (10k inputs per command, 2 workers; FUZZ_ARGS adds options),
# then the MIR reader's (mutated real .mir files through lower and run).
fuzz: $(STAMP)
	$(PY) -m tests.fuzz --long --workers 2 $(FUZZ_ARGS)
	$(PY) -m tests.fuzz.mir --long --workers 2

bench: $(BSTAMP)
	$(PY) -m benchmarks.run

# Whole processes of this checkout against revision BASE (a worktree made for it and
# removed after), alternating run by run: `make bench-compare BASE=main~5`.
BASE ?= HEAD
bench-compare: $(BSTAMP)
	rm -rf .bench-base && git worktree add --detach -q .bench-base $(BASE)
	$(PY) -m benchmarks.compare --base .bench-base $(COMPARE_ARGS); s=$$?; \
	  git worktree remove --force .bench-base; exit $$s

# Start-up: whole processes (`--version`, `--help`, small solves, the 10k pipe against
# `run`) of this checkout against revision BASE, interleaved, medians of 15 rounds
# (docs/startup.md): `make bench-startup BASE=main~5`.
bench-startup: $(STAMP)
	rm -rf .bench-base && git worktree add --detach -q .bench-base $(BASE)
	$(PY) -m benchmarks.bench_startup --base .bench-base $(STARTUP_ARGS); s=$$?; \
	  git worktree remove --force .bench-base; exit $$s

# The whole-process race: `placement solve --method exact` against HiGHS and toulbar2, each
# a process as a user runs it, on 85 plans of benchmarks/families.py, every optimum checked
# (docs/startup.md): `make bench-race RACE_ARGS="--rounds 7"`.
bench-race: $(BSTAMP)
	$(PY) -m benchmarks.bench_race $(RACE_ARGS)

# The decision flow (probe, tree, execute --verify) on every TPC-H query, judged by an
# independent interleaved run against the fastest single-engine way (README, "What the
# choice promises"); on a quiet machine, about 30 minutes. DECISION_ARGS=--in-pipeline
# probes in-pipeline (then `tree`'s model is `measured`; docs/probe.md); "--threads 1"
# gives every engine one thread, "--forks 3" verifies and judges in three processes each
# (docs/execute.md; about three times the verify's cost).
bench-decisions: $(STAMP)
	$(PY) -m benchmarks.bench_decision --sf 0.1 $(DECISION_ARGS)
	$(PY) -m benchmarks.bench_decision --sf 1 $(DECISION_ARGS)

# Which latency model ranks the placements as the engines do (docs/tree.md, "Latency
# models"): every one-cut placement of TPC-H run twice against each model's prediction.
# MODELS_ARGS=--in-pipeline probes in-pipeline; "--threads 1 --forks 3" as for
# bench-decisions (the probe in three processes too); on a quiet machine, about 25 minutes.
bench-models: $(STAMP)
	$(PY) -m benchmarks.bench_models --sf 0.1 --queries $$(seq -s, 1 22) $(MODELS_ARGS)
	$(PY) -m benchmarks.bench_models --sf 1 $(MODELS_ARGS)

# The README's walkthrough from TPC-H Q3 to a placement, its commands read from the
# README (examples/tpch/walkthrough.py), run in out/tpch/ on SF 0.1 made there; the
# placed tree's picture becomes the README's (docs/img/tpch-q3-placed.svg).
tpch-demo: $(ESTAMP)
	@command -v dot >/dev/null || { echo "tpch-demo draws with Graphviz: install it (apt-get install graphviz)" >&2; exit 2; }
	$(PY) examples/tpch/walkthrough.py --dir out/tpch
	cp out/tpch/q3.placed.svg docs/img/tpch-q3-placed.svg

clean:
	rm -rf out .pytest_cache .mypy_cache .ruff_cache .hypothesis
