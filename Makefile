# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test setup setup-test lint format

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

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format:
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .
