# `make run` sets up and starts Palimpsest's main job on the embedded default;
# `make test` sets up (venv, dev extras, PostgreSQL for the backend tests) and runs the suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run test bench clean

$(BIN)/palimpsest: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

run: $(BIN)/palimpsest
	$(BIN)/palimpsest serve

test: $(BIN)/palimpsest
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) build dist src/*.egg-info
