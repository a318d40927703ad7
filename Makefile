# nclue — two commands do all set-up on a fresh machine:
#   make demo   fetch the real Debian corpus, ingest, index, build the benchmark, run the matrix, report
#   make test   lint (ruff) and run the test suite (real PDFs, real models)
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
NCLUE := $(VENV)/bin/nclue
STAMP := $(VENV)/.installed
DEMO ?= nclue-demo
APT_PACKAGES := tesseract-ocr tesseract-ocr-eng chromium

export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: demo demo-full calibrations test venv system-deps clean-demo

# Debian packages the project needs (Tesseract: OCR fallback; chromium: the browser tests of the audit
# packet and the HTML report), installed only when missing; the package lists are refreshed when
# absent because the corpus recipe uses `apt-get download`.
system-deps:
	@SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1 || $$SUDO apt-get update -qq; \
	missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[neural,dev,ray]'
	touch $(STAMP)

venv: $(STAMP)

test: system-deps $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks
	$(PY) -m pytest -q -p no:cacheprovider --timeout 1200

AUDIT := data/debian-docs/audit

demo: system-deps $(STAMP)
	$(NCLUE) demo --out $(DEMO) --audit $(AUDIT)

# Everything the README reports: the demo plus masking, SourceShift, the semantic (sections) benchmark
# and the two reader-judged benchmarks, rebuilt from the committed replies under data/.
demo-full: system-deps $(STAMP)
	$(NCLUE) demo --out $(DEMO) --full --audit $(AUDIT) --readers data

# Refit the two shipped evidence calibrations (docs/evidence.md) on the reader benchmarks that
# `make demo-full` rebuilt, and print each one's scores on the other corpus's judgments.
CALS := src/nclue/evidence/calibrations
calibrations: $(STAMP)
	$(NCLUE) evidence fit $(DEMO)/bench-reader $(DEMO)/collection -o $(CALS)/reader-debian-docs.json --format markdown
	$(NCLUE) evidence fit $(DEMO)/bench-shift-reader $(DEMO)/shift-collection -o $(CALS)/reader-debian-docs-shift.json --format markdown
	$(NCLUE) evidence score reader-debian-docs-shift $(DEMO)/bench-reader $(DEMO)/collection --format markdown
	$(NCLUE) evidence score reader-debian-docs $(DEMO)/bench-shift-reader $(DEMO)/shift-collection --format markdown

clean-demo:
	rm -rf $(DEMO)
