# The README's two commands: `make up` and `make test`. Both create .venv when it is missing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
# uv installs what pip resolves (the same releases) in half the time: 25 s instead of 53 for the dev extras on a
# fresh clone (bench/RESULTS.md, "Test suite"). It compiles the dependencies' bytecode as pip does: without it,
# every process of the suite compiled Dagster, SQLAlchemy and FastAPI again when PYTHONDONTWRITEBYTECODE is set.
UV := $(VENV)/bin/uv
# The project always rebuilt (an edited ingest module is compiled again), the dependencies' bytecode written.
UV_INSTALL := $(UV) pip install --python $(PY) --quiet --compile-bytecode --reinstall-package stacklens
# Three pytest workers (pytest-xdist) on the two cores of the machines we run on: two left the cores about a third
# idle (the suite waits on servers it starts, browsers and minute ticks), three keep them busy — 20.5 min of pytest
# instead of 24 (bench/RESULTS.md, "Test suite"). A file's tests stay on one worker, each worker has a Redis
# database of its own (tests/conftest.py); the files in the collection's order, the longest first
# (tests/scheduling.py), not xdist's default by number of tests.
# `make test PYTEST_ARGS=` runs one process (docs/decisions.md).
PYTEST_ARGS ?= -n 3 --dist loadfile --no-loadscope-reorder

.PHONY: up test lint schema install-server install-dev test-deps bytecode

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(UV): | $(VENV)/bin/python
	$(PIP) install --quiet uv

# Re-install whenever pyproject.toml, setup.py or an ingest module changes (the stamp is older than it): the
# dev install compiles the ingest hot path with Cython (setup.py), and Python loads the compiled module first.
BUILD_INPUTS := pyproject.toml setup.py $(wildcard stacklens/ingest/*.py stacklens/ingest/*/*.py)

# `make up` on a fresh clone skips the compilation (~20 s of a first start that must show a populated
# dashboard within two minutes; the demo's few events a second need no compiled ingest). Its reinstall
# removes compiled modules a dev install left, so an edited module never runs from a stale build.
$(VENV)/.server-installed: $(BUILD_INPUTS) | $(UV)
	rm -f stacklens/ingest/*.so stacklens/ingest/*/*.so
	STACKLENS_PURE_PYTHON=1 $(UV_INSTALL) -e '.[server]'
	touch $@

$(VENV)/.dev-installed: $(BUILD_INPUTS) | $(UV)
	$(UV_INSTALL) -e '.[dev]'
	touch $@ $(VENV)/.server-installed

install-server: $(VENV)/.server-installed
install-dev: $(VENV)/.dev-installed

# The tests drive programs from Debian's packages: chromium (browser tests), Compose (compose.yaml is checked
# with `config`; Debian's docker-compose when no `docker compose` plugin runs) and pdftoppm (exported PDFs are
# rendered to check them). Install the missing ones when we may (root, apt present); skip apt when none is.
test-deps:
	@missing=""; \
	[ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null 2>&1 || missing="$$missing docker-compose"; \
	command -v pdftoppm >/dev/null 2>&1 || missing="$$missing poppler-utils"; \
	if [ -n "$$missing" ] && command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = "0" ]; then \
		echo "Installing Debian's$$missing for the tests..."; \
		apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

# `make up PORT=8080 SHOP_PORT=8081`: the dashboard's and the demo shop's ports (defaults 8000 and 8001; PORT also
# sets STACKLENS_PORT, the port the other commands look for the server on).
PORT ?=
SHOP_PORT ?=
UP_ARGS := $(if $(PORT),--port $(PORT)) $(if $(SHOP_PORT),--shop-port $(SHOP_PORT))

# Python's compiled bytecode of the project's own modules, written ahead (pip's install compiles only the
# dependencies; an editable install's modules are compiled when first imported, and not even written when
# PYTHONDONTWRITEBYTECODE is set, as on our CI machines). Without it every process the service or the suite
# starts (server, ingest workers, pipelines, each CLI call) compiled ~500 modules again: ~1.1 s of CPU each on
# a two-core machine. A module edited later is compiled from its source as usual (its bytecode is stale).
BYTECODE_DIRS := stacklens stacklens_sdk stacklens_contract shipper api dashboards pipelines warehouse_sql \
	demo demo_shop tests

bytecode:
	@$(PY) -m compileall -q -j 0 $(BYTECODE_DIRS)

up: install-server bytecode
	$(if $(PORT),STACKLENS_PORT=$(PORT) )$(PY) -m stacklens.cli.main up $(UP_ARGS)

# The quality gates; the first that fails stops `make test` (and so CI, .ci/run): formatting, lint, then types
# (files and options in pyproject's [tool.mypy]) beside the suite, which a type error stops (tests/typed_suite.py).
# The tests' temporary files (pytest's tmp_path and every data directory, warehouse, spool and SQLite file the tests
# make under it) go to tmpfs where the machine has one: Dagster's SQLite event log commits once per event and the
# front door's spool syncs every accept group, and on a disk those syncs were most of a pipeline test's time (one
# measured 61.5 -> 24.6 s). The crash tests kill processes, not the machine, so what a killed process wrote is
# kept either way. A passed test's directory is removed as it ends (pyproject: tmp_path_retention_policy).
TEST_TMPDIR ?= $(if $(wildcard /dev/shm/.),/dev/shm/stacklens-tests)

test: install-dev test-deps bytecode
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	@$(PY) tests/services_env.py > $(VENV)/.test-env
	@$(if $(TEST_TMPDIR),mkdir -p $(TEST_TMPDIR))
	@$(PY) -m tests.assert_bytecode
	@set -a; . $(VENV)/.test-env; set +a; $(if $(TEST_TMPDIR),TMPDIR=$(TEST_TMPDIR) )$(PY) -m tests.typed_suite $(PYTEST_ARGS)

lint: install-dev
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(PY) -m mypy

# warehouse_sql/schema.sql, the schema the migrations build, written again after adding one (docs/operations.md).
schema: install-dev
	$(PY) -m stacklens.warehouse.schema_file
