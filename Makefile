# `make run` sets up and starts Palimpsest's main job on the embedded default;
# `make test` sets up (venv, dev extras, PostgreSQL for the backend tests) and runs the suite,
# one pytest worker per core up to four (pytest-xdist; each worker starts its own PostgreSQL).
# Runtime dependencies install from requirements.lock, pinned by version and hash
# (regenerate: uv pip compile pyproject.toml --generate-hashes --python-version 3.11 -o requirements.lock).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test clean

$(VENV)/.runtime: pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --require-hashes -r requirements.lock
	$(BIN)/pip install --quiet --no-deps -e .
	touch $@

$(VENV)/.dev: $(VENV)/.runtime
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

run: $(VENV)/.runtime
	$(BIN)/palimpsest serve

test: $(VENV)/.dev
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4

clean:
	rm -rf $(VENV) build dist src/*.egg-info
