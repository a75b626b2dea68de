# Two commands for a fresh machine: `make run` and `make test` (see README.md).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PORT   ?= 8000
# The suite runs on real PostgreSQL and Redis, as CI does.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/condor
TEST_REDIS_URL    ?= redis://127.0.0.1:6379/0

.PHONY: run test install services browser node tools clean

$(VENV)/.installed: requirements.txt clients/python/pyproject.toml
	@scripts/install-venv.sh $(PYTHON) $(VENV)
	touch $@

install: $(VENV)/.installed

tests/node_modules/.installed: tests/package.json tests/package-lock.json
	cd tests && npm ci --no-audit --no-fund --loglevel=error
	touch $@

node: tests/node_modules/.installed

browser:
	@scripts/ensure-chromium.sh

tools:
	@scripts/ensure-curl-jq.sh

services:
	@scripts/ensure-services.sh

# The one-process embedded default; the production layout is `make prod`.
# Serve everything (HTTP, websockets, SSE) from one daphne process on SQLite with
# in-process fallbacks, unless DATABASE_URL / REDIS_URL say otherwise; the demo agent
# (manage.py demo_agent) plays sessions beside it unless DEMO_AGENT=0. Ctrl-C stops both.
run: $(VENV)/.installed
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput -v0
	$(PY) manage.py seed_tools
	$(PY) manage.py seed_demo
	PY=$(PY) PORT=$(PORT) scripts/serve.sh

test: $(VENV)/.installed node browser tools proxy services
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(PY) -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) tests/node_modules db.sqlite3 staticfiles test-artifacts

# The production layout on this machine (README "Production layout"): gunicorn, daphne,
# celery worker and beat behind nginx on $(PORT), started by honcho from the Procfile.
# Needs DATABASE_URL (PostgreSQL) and REDIS_URL; Ctrl-C stops every process.
.PHONY: prod proxy
prod: $(VENV)/.installed proxy
	$(PY) scripts/prod.py --port $(PORT)

proxy:
	@scripts/ensure-nginx.sh
