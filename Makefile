# Thin entry points over tools/setup.sh, the `grader` package and the pytest suite.
# `make help` lists the targets. Everything runs inside .venv, created on first use.

PY      := .venv/bin/python
STAMP   := .venv/.requirements-installed
# pytest-xdist workers: one per core (the machines we target have 2). Each notebook test starts
# its own kernel, so workers share no state.
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
SUBMISSIONS ?=
OUT     ?= build/grades

# CPU-only JAX everywhere (the course claims are made on CPU). The test harness and the grader
# also select matplotlib's Agg backend for their kernels; JupyterLab keeps its inline plots.
export JAX_PLATFORMS := cpu


.DEFAULT_GOAL := help
.PHONY: help setup test lab release grade demo tidy clean

help:  ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

setup:  ## create .venv with Python >= 3.12 and the exact pins (PYTHON=... to choose)
	@./tools/setup.sh

$(STAMP): requirements.txt tools/setup.sh
	@./tools/setup.sh

test: $(STAMP)  ## run every notebook, solution and grader check (what CI runs)
	$(PY) -m pytest -n $(JOBS) --dist loadgroup

lab: $(STAMP)  ## open JupyterLab on the course
	$(PY) -m jupyter lab --notebook-dir=. notebooks/00_intro.ipynb

release: $(STAMP)  ## regenerate exercises/ from solutions/ with nbgrader
	$(PY) -m grader release

grade: $(STAMP)  ## grade a class: make grade SUBMISSIONS=dir [OUT=build/grades]
	@test -n "$(SUBMISSIONS)" || { echo "make grade: say which folder, e.g. make grade SUBMISSIONS=path/to/submitted OUT=build/grades"; exit 2; }
	$(PY) -m grader grade "$(SUBMISSIONS)" --out "$(OUT)" --jobs $(JOBS)

demo: release  ## build the release, grade the built-in demo class, print the score table
	$(PY) -m grader demo --out build/demo --jobs $(JOBS)

tidy: $(STAMP)  ## strip outputs and editor metadata from every notebook
	$(PY) -m grader tidy notebooks/*.ipynb solutions/*/*.ipynb tests/fixtures/*.ipynb

clean:  ## remove build products and caches (keeps .venv; rm -rf .venv to rebuild it)
	rm -rf build .pytest_cache .ruff_cache
	find . -name __pycache__ -not -path './.venv/*' -prune -exec rm -rf {} +
