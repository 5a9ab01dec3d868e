# Weft: `make run` serves the embedded default, `make test` runs the whole suite.
PYTHON ?= python3.13
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test test-sqlite test-postgres check lint typecheck structure audit-hints fuzz bench bench-quick bench-mcp bench-board bench-redact faults faults-quick mutate mutate-quick venv clean

$(STAMP): requirements/base.txt requirements/dev.txt pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV) || (command -v pyenv >/dev/null && $$(pyenv root)/versions/$$(cat .python-version)/bin/python -m venv $(VENV))
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements/dev.txt
	# The project itself, editable, for the `weft` console script (.venv/bin/weft; docs/cli.md).
	$(PY) -m pip install -q --no-deps -e .
	@touch $(STAMP)

venv: $(STAMP)

# The embedded default runs in debug mode (development key, debug pages); production leaves it off.
run: export WEFT_DEBUG ?= true
run: $(STAMP)
	$(PY) manage.py migrate --noinput
	$(PY) -m uvicorn weft.asgi:application --host 127.0.0.1 --port 8000 --lifespan on

# The whole suite on the embedded SQLite default, then again on a throwaway PostgreSQL
# cluster with a throwaway Redis beside it.
test: test-sqlite test-postgres

test-sqlite: $(STAMP)
	$(PY) -m pytest -q $(PYTEST_ARGS)

test-postgres: $(STAMP)
	$(PY) -m tests.servers --postgres --redis -- $(PY) -m pytest -q $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy .

# The layering, template, size and copy rules of docs/architecture.md (tools/check_structure.py).
structure: $(STAMP)
	$(PY) tools/check_structure.py

check: lint typecheck structure test

audit-hints: $(STAMP)
	$(PY) -m pytest -q tests/mcp/test_hint_audit.py --audit-report

# The MCP fuzz test at length (CI runs it with a small fixed budget); FUZZ_EXAMPLES=N to change.
FUZZ_EXAMPLES ?= 2000
fuzz: $(STAMP)
	WEFT_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) WEFT_FUZZ_SHRINK=1 $(PY) -m tests.servers --postgres -- $(PY) -m pytest -q tests/mcp/test_fuzz.py

# The benchmarks (docs/performance.md): Weft beside the bare MCP SDK, pgqueuer, procrastinate and
# the raw claim SQL on one throwaway PostgreSQL and Redis, interleaved rounds, tables and JSON
# under artifacts/bench/. The peers live in their own environment, .venv-bench. bench-quick is
# CI's (under 3 minutes, 20k tasks): it fails on errors only, never on a ratio.
BENCH_VENV := .venv-bench
BENCH_STAMP := $(BENCH_VENV)/.installed
BENCH_ARGS ?=

$(BENCH_STAMP): bench/requirements.txt
	@test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV) || (command -v pyenv >/dev/null && $$(pyenv root)/versions/$$(cat .python-version)/bin/python -m venv $(BENCH_VENV))
	$(BENCH_VENV)/bin/python -m pip install -q -r bench/requirements.txt
	@touch $(BENCH_STAMP)

bench: $(STAMP) $(BENCH_STAMP)
	$(PY) -m bench.run --profile $(BENCH_ARGS)

bench-quick: $(STAMP) $(BENCH_STAMP)
	$(PY) -m bench.run --quick $(BENCH_ARGS)

bench-mcp: $(STAMP) $(BENCH_STAMP)
	$(PY) -m bench.run --only mcp $(BENCH_ARGS)

# The board's load time with 200 tasks on the embedded default, beside an empty board and the
# sign-in page, in Debian's Chromium (bench/board_load.py); exit 1 when it is 1 s or more.
bench-board: $(STAMP)
	$(PY) -m bench.board_load $(BENCH_ARGS)

# Redaction of a 1 MB issue body against one email re.sub (docs/redaction.md); no database.
bench-redact: $(STAMP)
	$(PY) bench/redact.py

# The claim guarantee under faults (docs/guarantees.md): agents as processes against Weft on a
# throwaway PostgreSQL and Redis, one fault per scenario, the history checker over the records.
# faults-quick (CI, under 5 minutes) runs each scenario once at small scale; faults runs them
# longer (about 45 minutes). Both fail on any violation; results in artifacts/faults/.
faults-quick: $(STAMP)
	$(PY) -m bench.faults.run --quick

faults: $(STAMP)
	$(PY) -m bench.faults.run

# Mutation testing of the rule modules (tests/mutation/run.py; docs/mutation.md). Each fails when
# a module scores below tests/mutation/thresholds.toml; mutate-quick is the CI subset.
mutate: $(STAMP)
	$(PY) -m tests.mutation.run --workers 2

mutate-quick: $(STAMP)
	$(PY) -m tests.mutation.run --quick --workers 2

clean:
	rm -rf $(VENV) $(BENCH_VENV) db.sqlite3 db.sqlite3-* staticfiles artifacts
