# Thin entry points over tools/setup.sh, the `grader` package and the pytest suite.
# `make help` lists the targets. Everything runs inside .venv, created on first use.

PY      := .venv/bin/python
# pytest-xdist workers: one per core (the machines we target have 2). Each notebook test starts
# its own kernel, so workers share no state.
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
# A class of your own lives in classes/NAME/ (README; ignored by git, ruff and make clean): its
# submissions in classes/NAME/submitted/<student>/<assignment>/, its grades in classes/NAME/graded/.
CLASS   ?= my-class
SUBMISSIONS ?= classes/$(CLASS)/submitted
OUT     ?= classes/$(CLASS)/graded
EX      ?=
# Formgrader shows the demo unless a class is named (CLASS=NAME) or a graded folder given (GRADES=DIR)
GRADES  ?= $(if $(filter command line environment,$(origin CLASS)),classes/$(CLASS)/graded,build/demo)

# CPU-only JAX everywhere (the course claims are made on CPU). The test harness and the grader
# also select matplotlib's Agg backend for their kernels; JupyterLab keeps its inline plots.
export JAX_PLATFORMS := cpu


.DEFAULT_GOAL := help
.PHONY: help setup ready test lab check student release book grade demo formgrader hub lint tidy messages pins clean

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

# The edition command regenerates exercises/ itself (quietly) and ends by saying what to hand out.
student: ready  ## build the student edition to hand out: build/student.zip (and build/student/; no answers)
	@$(PY) -m grader edition --out build/student

# The website renders the notebooks `make test` executed (build/executed/); a missing or stale
# one is executed here. Warnings and broken links fail the build (docs/book.md).
book: ready  ## the course as a website, offline and searchable: build/book/index.html
	$(PY) -m book

release: ready  ## regenerate exercises/ from solutions/ with nbgrader
	$(PY) -m grader release

grade: ready  ## grade a class: make grade [CLASS=my-class]: classes/CLASS/submitted/ into classes/CLASS/graded/
	@test -d "$(SUBMISSIONS)" || { echo "make grade: no folder $(SUBMISSIONS): put the class's submissions there as <student>/<assignment>/<assignment>.ipynb (classes/ is ignored by git, lint and make clean), or say CLASS=NAME, or SUBMISSIONS=DIR OUT=DIR" >&2; exit 2; }
	@$(if $(and $(filter command line environment,$(origin SUBMISSIONS)),$(filter file,$(origin OUT)),$(filter file,$(origin CLASS))),\
	    echo "make grade: SUBMISSIONS=$(SUBMISSIONS) needs OUT=DIR too: the folder its grades go to (without it they would go to $(OUT))" >&2; exit 2)
	$(PY) -m grader grade "$(SUBMISSIONS)" --out "$(OUT)" --jobs $(JOBS)

demo: ready  ## grade the built-in demo class (exercises/ as committed), print the score table
	$(PY) -m proof demo --out build/demo --jobs $(JOBS)

# Formgrader opens the course's files through the server, which serves this folder only. `exec`:
# the server is make's own child, so a SIGTERM to make (which make passes on to its children)
# stops it, and it stops its kernels; through an extra shell it went on running.
formgrader: ready  ## nbgrader's Formgrader on a graded class: make formgrader [CLASS=NAME | GRADES=build/demo]
	@test -n "$(GRADES)" || { echo "make formgrader: GRADES is empty: give a graded folder (GRADES=build/demo) or a class (CLASS=NAME)" >&2; exit 2; }
	@case "$$(realpath -m "$(GRADES)")/" in "$$(pwd -P)/"*) ;; *) \
	    echo "make formgrader: $(GRADES) is outside this checkout, which is all the server shows; grade into a folder here (make grade CLASS=NAME grades into classes/NAME/graded) and pass that" >&2; exit 2;; esac
	@test -d "$(GRADES)/course" || { echo "make formgrader: $(GRADES) holds no graded class: grade one first (make demo, or make grade CLASS=NAME, which grades into classes/NAME/graded)" >&2; exit 2; }
	@CH4_GRADES="$(GRADES)" exec sh tools/lab.sh --LabApp.default_url=/formgrader

# Not `ready`: root runs it in the instructor's checkout, whose .venv stays the instructor's own.
hub:  ## the class on a shared server: JupyterHub, the exchange, students as Unix users (as root: sudo make hub)
	@sh tools/hub.sh

lint: ready  ## ruff: the lint rules, and the formatting of every Python file
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

tidy: ready  ## strip outputs and editor metadata from every notebook
	$(PY) -m grader tidy notebooks/*.ipynb solutions/*/*.ipynb tests/fixtures/*.ipynb

# The instructor's text in Chinese (grader/i18n.py): Babel extracts every message marked in the
# grader, the demo and the class report's page, merges them into the catalogue, where a new one
# waits for its translation (tests/test_locale.py fails until it has one), and compiles it.
messages: ready  ## extract the instructor's messages, update grader/locale/zh's catalogue and compile it
	@mkdir -p build
	.venv/bin/pybabel -q extract -F grader/locale/babel.cfg -k N_ --no-location --sort-output --project ch04-grader -o build/grader.pot grader proof
	.venv/bin/pybabel -q update -i build/grader.pot -d grader/locale -D grader -l zh --init-missing --ignore-obsolete --ignore-pot-creation-date --no-wrap
	.venv/bin/pybabel -q compile -d grader/locale -D grader -l zh --use-fuzzy

# pip-tools lives in a throwaway venv under build/, so it is not one of the course's own pins.
# requirements-student.txt takes every version from requirements.txt (its .in says -c requirements.txt), less
# what its .in leaves out (tools/student_pins.py).
pins:  ## recompile requirements.txt and requirements-student.txt (exact pins) from their .in files
	$(PY) -m venv build/pip-tools && build/pip-tools/bin/pip install --quiet pip-tools==7.6.2
	for name in requirements requirements-student; do \
	    CUSTOM_COMPILE_COMMAND="make pins" build/pip-tools/bin/pip-compile --quiet --allow-unsafe --strip-extras \
	        --no-emit-index-url --no-emit-find-links --annotation-style=line --output-file $$name.txt $$name.in \
	    || exit 1; done
	$(PY) tools/student_pins.py

clean:  ## remove build products and caches (keeps .venv; rm -rf .venv to rebuild it)
	rm -rf build .pytest_cache .ruff_cache
	find . -name __pycache__ -not -path './.venv/*' -prune -exec rm -rf {} +
