# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test test-fast setup setup-test lint format typecheck check wheel-check

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

setup: $(BIN)/python
	$(BIN)/pip install --quiet -e .
	PYTHON=$(BIN)/python bash scripts/install-local-model.sh

setup-test: setup
	$(BIN)/pip install --quiet -e '.[test]'

run: setup
	@bash scripts/run.sh $(BIN) $(HOST) $(PORT)

test: setup-test
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Everything that needs no browser, PostgreSQL, Redis or real model: the quick loop.
test-fast: setup-test
	$(BIN)/python -m pytest -m "not browser and not postgres and not redis and not real_model" $(PYTEST_ARGS)

lint: setup-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# DEBUG=1: the type checker's Django plugin loads the settings, which want a key.
typecheck: setup-test
	DEBUG=1 $(BIN)/mypy

# What CI runs: the lint, the type check and every test.
check: lint typecheck test

format: setup-test
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .
