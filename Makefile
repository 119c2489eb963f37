# The two commands: `make run` and `make test`. Each installs what it needs into .venv first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
BENCH_STAMP := $(VENV)/.bench-stamp
# make test runs the suite in this many processes (pytest-xdist): most of its time is spent waiting on servers, drills
# and browsers, so more processes than cores pay; at least 5, at most 8 (each starts servers of its own)
TEST_JOBS ?= $(shell $(PYTHON) -c "import os; print(max(5, min(8, os.cpu_count() or 1)))")

.PHONY: install run test soak bench demo clean chromium

# the client package (client/, its own distribution) goes in too, editable: tests/client use it. pip's direct
# references take absolute paths only, so pyproject.toml's [test] extra cannot name ./client itself
$(STAMP): pyproject.toml client/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]' -e ./client
	touch $(STAMP)

# The browser tests (tests/web) drive Debian's Chromium through Playwright; no browser is ever downloaded.
chromium:
	@[ -x /usr/bin/chromium ] || (apt-get update -qq && apt-get install -y -qq chromium chromium-driver) \
	  || echo "make: could not install chromium (not root?): tests/web will be skipped outside CI" >&2

install: $(STAMP) chromium

run: $(STAMP)
	$(PY) -m service $(ARGS)

# make test stays within 8 minutes here (tests/conftest.py prints the wall time, and every test over 20 s, at its end)
test: $(STAMP) chromium
	$(PY) -m pytest -n $(TEST_JOBS) --dist worksteal --durations=15 $(ARGS)

# the same suite with the long randomised runs at release depth (tests/depth.py; docs/testing.md): an hour or more
soak: $(STAMP) chromium
	FREE_PARKING_SOAK=1 $(PY) -m pytest -n $(TEST_JOBS) --dist worksteal --durations=30 $(ARGS)

# py-spy (bench/stages.py: where a request's CPU goes) only for the benchmarks
$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(PY) -m bench $(ARGS)

clean:
	rm -rf $(VENV) .venv-openapi .pytest_cache .hypothesis
