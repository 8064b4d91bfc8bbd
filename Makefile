# make run  — set everything up, index the sample library, answer a sample question (embedded model)
# make test — set everything up and run lint, types, tests and the retrieval evaluation gates
# make test-fast — the tests that need no real model, browser, embeddings, tesseract or PostgreSQL (a quick loop)

VENV ?= .venv
BIN := $(VENV)/bin
PYTHON ?= python3
SAMPLE_QUESTION := What is the loan limit for EQ-314, when does the desk accept maps for the community map exchange, and how many days does a standard book loan last?

.PHONY: setup tesseract chromium run test test-fast lint eval-gates package-check bench clean

setup: $(VENV)/.installed tesseract chromium

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,embedded,semantic,serve,postgres]'
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

run: setup
	$(BIN)/localqa index
	$(BIN)/localqa ask "$(SAMPLE_QUESTION)" --as-of 2026-11-14 --model embedded

lint: setup
	$(BIN)/ruff check localqa tests benchmarks pdfs evals
	$(BIN)/ruff format --check localqa benchmarks
	$(BIN)/mypy

eval-gates: setup
	$(BIN)/localqa index
	$(BIN)/localqa eval evals/library
	$(BIN)/localqa eval evals/tenants

# --durations=25: the slowest tests, printed with every run, so that a slow one is seen when it lands.
test: lint
	$(BIN)/pytest --durations=25
	$(MAKE) --no-print-directory eval-gates

test-fast: setup
	$(BIN)/pytest --durations=25 -m "not embedded and not browser and not semantic and not tesseract and not postgres"

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
