# Thin entry points over tools/setup.sh, the `grader` package and the pytest suite.
# `make help` lists the targets. Everything runs inside .venv, created on first use.

PY      := .venv/bin/python
# pytest-xdist workers: one per core (the machines we target have 2). Each notebook test starts
# its own kernel, so workers share no state.
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
SUBMISSIONS ?=
OUT     ?= build/grades
EX      ?=
GRADES  ?= build/demo

# CPU-only JAX everywhere (the course claims are made on CPU). The test harness and the grader
# also select matplotlib's Agg backend for their kernels; JupyterLab keeps its inline plots.
export JAX_PLATFORMS := cpu


.DEFAULT_GOAL := help
.PHONY: help setup ready test lab check student release book grade demo formgrader hub lint tidy pins clean

help:  ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

setup:  ## create .venv with Python >= 3.12 and the exact pins (PYTHON=... to choose)
	@sh tools/setup.sh

# Every target checks the environment first (a quick no-op when nothing changed); that is also
# how a moved or copied checkout is noticed and its .venv rebuilt.
ready:
	@sh tools/setup.sh

test: ready  ## run every notebook, solution and grader check (what CI runs)
	$(PY) -m pytest -n $(JOBS) --dist loadgroup --durations=30

lab: ready  ## JupyterLab on the course (LAB_PORT=8888 LAB_IP=127.0.0.1; works as root and headless)
	@sh tools/lab.sh notebooks/00_intro.ipynb

check: ready  ## run an exercise's visible tests from a terminal: make check [EX=softplus]
	$(PY) -m ch4validate $(if $(EX),exercises/$(EX)/$(EX).ipynb,exercises/*/*.ipynb)

student: release  ## build the student edition: build/student/ and build/student.zip (no answers)
	$(PY) -m grader edition --out build/student

# The website renders the notebooks `make test` executed (build/executed/); a missing or stale
# one is executed here. Warnings and broken links fail the build (docs/book.md).
book: ready  ## the course as a website, offline and searchable: build/book/index.html
	$(PY) -m book

release: ready  ## regenerate exercises/ from solutions/ with nbgrader
	$(PY) -m grader release

grade: ready  ## grade a class: make grade SUBMISSIONS=dir [OUT=build/grades]
	@test -n "$(SUBMISSIONS)" || { echo "make grade: say which folder, e.g. make grade SUBMISSIONS=path/to/submitted OUT=build/grades"; exit 2; }
	$(PY) -m grader grade "$(SUBMISSIONS)" --out "$(OUT)" --jobs $(JOBS)

demo: ready  ## grade the built-in demo class (exercises/ as committed), print the score table
	$(PY) -m proof demo --out build/demo --jobs $(JOBS)

# Formgrader opens the course's files through the server, which serves this folder only.
formgrader: ready  ## nbgrader's Formgrader on a graded class: make formgrader [GRADES=build/demo]
	@case "$$(realpath -m "$(GRADES)")/" in "$$(pwd -P)/"*) ;; *) \
	    echo "make formgrader: $(GRADES) is outside this checkout, which is all the server shows; grade into a folder here (make grade ... OUT=build/grades) and pass that" >&2; exit 2;; esac
	@CH4_GRADES=$(GRADES) sh tools/lab.sh --LabApp.default_url=/formgrader

# Not `ready`: root runs it in the instructor's checkout, whose .venv stays the instructor's own.
hub:  ## the class on a shared server: JupyterHub, the exchange, students as Unix users (as root: sudo make hub)
	@sh tools/hub.sh

lint: ready  ## ruff: the lint rules, and the formatting of every Python file
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

tidy: ready  ## strip outputs and editor metadata from every notebook
	$(PY) -m grader tidy notebooks/*.ipynb solutions/*/*.ipynb tests/fixtures/*.ipynb

# pip-tools lives in a throwaway venv under build/, so it is not one of the course's own pins.
# requirements-student.txt takes every version from requirements.txt (its .in says -c requirements.txt).
pins:  ## recompile requirements.txt and requirements-student.txt (exact pins) from their .in files
	$(PY) -m venv build/pip-tools && build/pip-tools/bin/pip install --quiet pip-tools==7.6.2
	for name in requirements requirements-student; do \
	    CUSTOM_COMPILE_COMMAND="make pins" build/pip-tools/bin/pip-compile --quiet --allow-unsafe --strip-extras \
	        --no-emit-index-url --no-emit-find-links --annotation-style=line --output-file $$name.txt $$name.in \
	    || exit 1; done

clean:  ## remove build products and caches (keeps .venv; rm -rf .venv to rebuild it)
	rm -rf build .pytest_cache .ruff_cache
	find . -name __pycache__ -not -path './.venv/*' -prune -exec rm -rf {} +
