# Two commands on a fresh machine: `make run` serves the memory on embedded defaults,
# `make test` runs the whole suite. Both use .venv in the checkout, created when missing.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PORT ?= 8000

.PHONY: run test test-slow install migrate lint format clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11+ is required, found " + sys.version' 
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	@touch $(STAMP)

install: $(STAMP)

migrate: install
	$(PY) manage.py migrate --noinput

run: migrate
	PORT=$(PORT) $(PY) manage.py memory_run

test: install
	$(PY) -m pytest $(PYTEST_ARGS)

test-slow: install
	$(PY) -m pytest -m slow $(PYTEST_ARGS)

lint: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

format: install
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

clean:
	rm -rf $(VENV) var .pytest_cache
