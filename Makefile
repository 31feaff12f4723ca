# Everyday commands. PYTHON is the virtual environment's interpreter: `make install`
# creates .venv, and every other target runs inside it.
VENV ?= .venv
PYTHON ?= $(VENV)/bin/python

.PHONY: install test lint format typecheck check screenshots bench demo ci clean

install:  ## a virtual environment with ppp-tui editable and every development tool
	test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install --upgrade pip
	$(PYTHON) -m pip install -e ".[dev]"

test:  ## the whole test suite
	$(PYTHON) -m pytest -q -p no:cacheprovider

lint:  ## ruff's lint rules and its format check
	$(PYTHON) -m ruff check ppp_tui tests
	$(PYTHON) -m ruff format --check ppp_tui tests

format:  ## rewrite the code in ruff's format, fixing what ruff can fix
	$(PYTHON) -m ruff check --fix ppp_tui tests
	$(PYTHON) -m ruff format ppp_tui tests

typecheck:  ## mypy, strict, over the package and the tests
	$(PYTHON) -m mypy

check: lint typecheck test  ## what CI checks, in this environment

screenshots:  ## regenerate screenshots/*.png (needs cairosvg, in the dev extra)
	$(PYTHON) scripts/screenshots.py

bench:  ## every benchmark, one after another (minutes)
	for script in benchmarks/bench_*.py benchmarks/classifier_eval.py; do \
		echo "== $$script"; $(PYTHON) $$script || exit 1; \
	done

demo:  ## the terminal app on the demo database
	$(VENV)/bin/ppp-tui browse --demo

ci:  ## CI as it runs: a fresh .ci-venv, then every check
	.ci/run

clean:  ## the CI environment and build leftovers
	rm -rf .ci-venv build dist
