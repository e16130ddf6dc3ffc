# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test test-fast setup setup-test lint format typecheck check wheel-check model-qwen1.5b

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Installed once, and again when pyproject.toml or the model script changes: a stamp
# file in the virtualenv says it is done (pip asking the registry costs seconds a run).
$(VENV)/.installed: $(BIN)/python pyproject.toml scripts/install-local-model.sh
	$(BIN)/pip install --quiet -e .
	PYTHON=$(BIN)/python bash scripts/install-local-model.sh
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed $(VENV)/.installed-client
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

# The client on its own, as a CI job installs it (no Django, no editable link to this
# checkout): its own virtualenv inside this one, for the tests that run the installed
# `magi` (tests/support/magi_client.py). Again when any of its files changes.
CLIENT_VENV := $(VENV)/magi-client
CLIENT_FILES := $(shell find clients/magi-client -name build -prune -o -name '*.egg-info' -prune -o -type f \( -name '*.py' -o -name '*.json' -o -name '*.toml' \) -print)
$(VENV)/.installed-client: $(BIN)/python $(CLIENT_FILES)
	rm -rf $(CLIENT_VENV) clients/magi-client/build
	$(PYTHON) -m venv $(CLIENT_VENV)
	$(CLIENT_VENV)/bin/pip install --quiet ./clients/magi-client
	touch $@

setup: $(VENV)/.installed

setup-test: $(VENV)/.installed-test

# Qwen2.5-Coder-1.5B-Instruct (1.1 GB) beside the bundled model: a local model that can
# judge, offered as `qwen1.5b` (docs/local-model.md).
model-qwen1.5b: setup
	PYTHON=$(BIN)/python bash scripts/install-local-model.sh qwen1.5b

run: setup
	@bash scripts/run.sh $(BIN) $(HOST) $(PORT)

# Two pytest sessions at once (scripts/run_tests.py): one runs what needs one of a kind
# (the browser session, PostgreSQL, Redis, the llama.cpp server, the fuzzer), one test at
# a time in the order collected; the other runs every other test beside it.
test: setup-test
	$(BIN)/python scripts/run_tests.py $(PYTEST_ARGS)

# Everything that needs no browser, PostgreSQL, Redis or real model and does not fuzz:
# the quick loop, three test processes at once (a third fills the time the others spend
# waiting on their servers, even on two cores).
test-fast: setup-test
	$(BIN)/python -m pytest -n 3 -m "not browser and not postgres and not redis and not real_model and not fuzz" $(PYTEST_ARGS)

# lint-imports: the areas of judgements/ import downward only (pyproject.toml's contracts,
# docs/architecture.md); under a second, so no cache directory.
lint: setup-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache --no-logo

# DEBUG=1: the type checker's Django plugin loads the settings, which want a key.
typecheck: setup-test
	DEBUG=1 $(BIN)/mypy

# What CI runs: the lint, the type check and every test.
check: lint typecheck test

format: setup-test
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .
