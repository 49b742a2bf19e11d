# Everything a fresh machine needs: `make test` and `make demo` build .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DEMO_PORT ?= 8000
DEMO_FIRST_PORT ?= 8001
# pytest workers (0: one process). Four, twice the cores of a small machine, more than halve
# the run: most tests wait on servers and sockets, and those waits overlap.
TEST_WORKERS ?= 4
JS_PEER := tests/js/node_modules/.package-lock.json

.PHONY: install test lint typecheck pytest demo bench clean protos

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

# The browser tests drive Debian's chromium (Playwright never downloads a browser here).
# Bytecode is cached even where the environment says PYTHONDONTWRITEBYTECODE: without it each
# xdist worker compiles and assertion-rewrites every module it collects (16.9 s CPU instead of
# 10.3 s), and every `accord` subprocess compiles accord's modules again.
pytest: $(STAMP) $(JS_PEER)
	@command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium; }
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -n $(TEST_WORKERS)

# The official JS SDK as a test peer (tests/test_interop_js_*.py); without node or npm the
# tests skip, or fail under ACCORD_REQUIRE_SERVICES=1.
$(JS_PEER): tests/js/package-lock.json
	@if command -v npm >/dev/null; then npm ci --prefix tests/js --no-audit --no-fund; \
	else echo "npm not found: the JS SDK interop tests will not run"; fi

test: lint typecheck pytest

# The gRPC stubs (committed): proto/accord/a2a/<version>/a2a.proto -> src/accord/grpc/generated,
# their messages in accord's own descriptor pool (accord.grpc.pool) and imports made absolute.
PROTO_ROOT := proto/accord/a2a
PROTO_OUT := src/accord/grpc/generated
PROTO_VERSIONS := v1_0 v0_3

protos: $(STAMP)
	cd $(PROTO_ROOT) && ../../../$(BIN)/python -m grpc_tools.protoc -I . \
		--python_out=../../../$(PROTO_OUT) --pyi_out=../../../$(PROTO_OUT) \
		--grpc_python_out=../../../$(PROTO_OUT) $(addsuffix /a2a.proto,$(PROTO_VERSIONS))
	for v in $(PROTO_VERSIONS); do \
		touch $(PROTO_OUT)/$$v/__init__.py; \
		sed -i -e 's/^from google.protobuf import descriptor_pool as _descriptor_pool$$/from accord.grpc.pool import POOL/' \
			-e 's/_descriptor_pool.Default()/POOL/' $(PROTO_OUT)/$$v/a2a_pb2.py; \
		sed -i -e "s/^from $$v import/from accord.grpc.generated.$$v import/" $(PROTO_OUT)/$$v/a2a_pb2_grpc.py; \
	done

# The sample agents, the multi-agent host and the web UI on loopback; Ctrl-C stops them all.
demo: $(STAMP)
	$(BIN)/accord demo --port $(DEMO_PORT) --first-port $(DEMO_FIRST_PORT)

# Benchmarks (docs/benchmarks.md): wrk and valgrind from Debian, the peer SDK in its own venv,
# ~12 minutes.
BENCH_VENV := bench/.venv-peer
BENCH_STAMP := $(BENCH_VENV)/.installed-stamp

$(BENCH_STAMP): bench/requirements-peer.txt
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(BENCH_VENV)/bin/python -m pip install --quiet -r bench/requirements-peer.txt
	touch $(BENCH_STAMP)

bench: $(STAMP) $(BENCH_STAMP) $(JS_PEER)
	@command -v wrk >/dev/null && command -v valgrind >/dev/null || \
		{ apt-get update -qq && apt-get install -y -qq wrk valgrind; }
	$(BIN)/python bench/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) tests/js/node_modules .mypy_cache .ruff_cache .pytest_cache

# The UI's screenshot baselines (tests/ui_baselines/) taken anew, after a change of layout.
.PHONY: ui-baselines
ui-baselines: $(STAMP)
	ACCORD_UI_BASELINES=update $(BIN)/pytest tests/test_ui_layout.py -k baseline -p no:cacheprovider
