# make run  — set everything up, index the sample library, answer a sample question (embedded model)
# make test — set everything up and run lint, types, tests and the evaluation gates (retrieval and answer stage)
# make test-fast — the tests that need no real model, browser, embeddings, tesseract or PostgreSQL (a quick loop)

VENV ?= .venv
BIN := $(VENV)/bin
PYTHON ?= python3
SAMPLE_QUESTION := What is the loan limit for EQ-314, when does the desk accept maps for the community map exchange, and how many days does a standard book loan last?

.PHONY: setup tesseract chromium emulator run test test-fast lint eval-gates package-check bench clean

setup: $(VENV)/.installed tesseract chromium

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,embedded,semantic,serve,postgres,mcp]'
	touch $@

tesseract:
	@command -v tesseract >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "Installing tesseract-ocr (apt-get)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr >/dev/null; \
	  else \
	    echo "tesseract-ocr is missing: run 'sudo apt-get install tesseract-ocr' and try again" >&2; exit 1; \
	  fi; }

# Debian's chromium and its driver, for the browser test of `localqa serve` (nothing downloads a browser).
chromium:
	@{ command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; } || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "Installing chromium and chromium-driver (apt-get)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
	  else \
	    echo "chromium is missing: run 'sudo apt-get install chromium chromium-driver' and try again" >&2; exit 1; \
	  fi; }

# Debian's qemu-user, for the test that embeds the same texts under emulated older processors
# (tests/test_embeddings_machines.py: a text's vector must not depend on the processor). Without
# it that test is skipped, so another user is only told.
emulator:
	@command -v qemu-x86_64 >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "Installing qemu-user (apt-get)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user >/dev/null; \
	  else \
	    echo "qemu-user is missing: the test on emulated processors will be skipped ('sudo apt-get install qemu-user' runs it)" >&2; \
	  fi; }

run: setup
	$(BIN)/localqa index
	$(BIN)/localqa ask "$(SAMPLE_QUESTION)" --as-of 2026-11-14 --model embedded

lint: setup
	$(BIN)/ruff check localqa tests benchmarks pdfs evals
	$(BIN)/ruff format --check localqa benchmarks
	$(BIN)/mypy

# Retrieval, leaks and unverified quotes; then the answer stage held to its own suites with the
# extractive backend (deterministic, no model): no no-answer case shown a quote as its answer, no
# stated value wrong, outside the cases marked known_failure (localqa/evaluate/records.py).
eval-gates: setup
	$(BIN)/localqa index
	$(BIN)/localqa eval evals/library
	$(BIN)/localqa eval evals/tenants
	$(BIN)/localqa eval evals/library --model extractive
	$(BIN)/localqa eval evals/tenants --model extractive

# --durations=25: the slowest tests, printed with every run, so that a slow one is seen when it lands.
# WORKERS=2: every test but the embedded model's in two pytest-xdist workers, then the model's alone
# (it computes on every core); measured in docs/development.md.
WORKERS ?= 1
test: lint emulator
ifeq ($(WORKERS),1)
	$(BIN)/pytest --durations=25
else
	$(BIN)/pytest --durations=25 -m "not embedded" -n $(WORKERS)
	$(BIN)/pytest --durations=25 -m embedded
endif
	$(MAKE) --no-print-directory eval-gates

# The edit loop, meant to take under two minutes on two cores (docs/development.md): two pytest-xdist
# workers, each property test at a fifth of its examples (tests/properties.py), and the tests marked
# `slow` (seconds each: bounded work on oversized input, a killed build) left out; `make test` runs
# them all, with every example.
FAST_WORKERS ?= 2
test-fast: setup
	LOCALQA_QUICK_PROPERTIES=1 $(BIN)/pytest --durations=25 -n $(FAST_WORKERS) \
	    -m "not embedded and not browser and not semantic and not tesseract and not postgres and not slow"

# Build the wheel as a user would install it and check that it carries every template, static
# file and py.typed (package data is easy to lose, and nothing else would notice).
package-check: setup
	$(BIN)/python .ci/check_package.py

bench: setup
	$(BIN)/python -m benchmarks.ingest
	$(BIN)/python -m benchmarks.beir
	$(BIN)/python -m benchmarks.growth

clean:
	rm -rf $(VENV) index *.egg-info
