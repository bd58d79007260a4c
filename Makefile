# One command per chore. Each target creates the virtual env on first use
# (only python3 is needed on the machine) and reinstalls when pyproject changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install serve test lint typecheck bench check clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

serve: $(STAMP)  ## start the server on the embedded defaults (http://127.0.0.1:8765)
	$(BIN)/tooldeck serve

test: $(STAMP)  ## the whole test suite; pytest's exit 5 (no tests ran) fails too
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python benchmarks/overhead.py
	$(BIN)/python benchmarks/providers.py
	$(BIN)/python benchmarks/python_exec.py

check: lint typecheck test

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache
