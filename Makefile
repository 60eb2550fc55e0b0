# tokspeed — `make run` starts everything on this machine; `make test` runs the test suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PORT ?= 8000
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/tokspeed
TEST_WORKERS ?= 3

.PHONY: run test test-preflight test-clocks lint format bench venv dev-venv docs docs-build

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Installed once, and again only when requirements.txt changes: `make run` does not ask pip
# to check every package at each start.
$(VENV)/.requirements-installed: requirements.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

venv: $(VENV)/.requirements-installed

dev-venv: $(BIN)/python
	$(BIN)/pip install --quiet -r requirements-dev.txt

run: venv
	DEBUG=1 $(BIN)/python manage.py up --port $(PORT)

# The preflight runs first (before the venv), so a missing service is named within a second.
# The suite runs in TEST_WORKERS pytest-xdist processes, each with a test database of its own
# (most tests wait on real processes, so more workers than cores: bench/results/
# 2026-12-04-suite-time.md); tests marked `serial` (they restart a server every worker shares)
# run afterwards, alone.
test: test-preflight
	@$(MAKE) --no-print-directory dev-venv
	DATABASE_URL=$${DATABASE_URL:-$(TEST_DATABASE_URL)} $(BIN)/python -m pytest \
	  -n $(TEST_WORKERS) -m "not serial"
	DATABASE_URL=$${DATABASE_URL:-$(TEST_DATABASE_URL)} $(BIN)/python -m pytest -m serial tests/faults

test-preflight:
	@DATABASE_URL=$${DATABASE_URL:-$(TEST_DATABASE_URL)} bin/test-preflight

# The clock-sensitive tests under fixed fake clocks and a DST change (see bin/fake-clock-tests).
test-clocks: test-preflight
	@$(MAKE) --no-print-directory dev-venv
	DATABASE_URL=$${DATABASE_URL:-$(TEST_DATABASE_URL)} PYTHON=$(BIN)/python bin/fake-clock-tests

lint: dev-venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: dev-venv
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The documentation site (docs/, mkdocs.yml): served at http://127.0.0.1:8001/ while you edit;
# the strict build fails on a broken link or a page missing from the nav (CI runs it).
docs: dev-venv
	$(BIN)/mkdocs serve

docs-build: dev-venv
	$(BIN)/mkdocs build --strict

bench: dev-venv
	$(BIN)/python bench/accuracy.py
	$(BIN)/python bench/scheduler.py
	$(BIN)/python bench/detector.py
	$(BIN)/python bench/read_side.py
