# Everything a fresh machine needs: `make test` and `make demo` build .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DEMO_PORT ?= 8001

.PHONY: install test lint typecheck pytest demo bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest

test: lint typecheck pytest

demo: $(STAMP)
	@echo "Echo agent on http://127.0.0.1:$(DEMO_PORT) — in another terminal:"
	@echo "  $(BIN)/accord chat http://127.0.0.1:$(DEMO_PORT)"
	$(BIN)/accord serve accord.samples.echo:agent --host 127.0.0.1 --port $(DEMO_PORT)

# Benchmarks (docs/benchmarks.md): wrk from Debian, the peer SDK in its own venv, ~8 minutes.
BENCH_VENV := bench/.venv-peer
BENCH_STAMP := $(BENCH_VENV)/.installed-stamp

$(BENCH_STAMP): bench/requirements-peer.txt
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(BENCH_VENV)/bin/python -m pip install --quiet -r bench/requirements-peer.txt
	touch $(BENCH_STAMP)

bench: $(STAMP) $(BENCH_STAMP)
	@command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }
	$(BIN)/python bench/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
