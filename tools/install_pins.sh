#!/bin/sh
# Install requirements.txt's exact pins with the given Python (`sh tools/install_pins.sh
# .venv/bin/python`), then remove the pins that are there only to satisfy an optional extra and
# that every process would pay for on import. Run from the checkout's top folder.
#
# --no-deps: requirements.txt is a complete list compiled by `make pins`, so pip need not resolve
# anything; and the student edition's list (requirements-student.txt) leaves out on purpose a few
# packages that others declare but no student process imports (requirements-student.in says
# which), which pip must then not fetch. The student edition has neither rfc3987-syntax nor lark:
# the uninstall below is then silent (-qq) and does nothing.
#
# rfc3987-syntax (and lark, which only it uses) comes with jsonschema[format-nongpl], which
# jupyter-events asks for. jsonschema imports it whenever it is installed, and it builds a Lark
# grammar on import: about 2.5 core-seconds in every process that imports nbformat (nbgrader,
# the grader, `make check`, every Jupyter server). It checks only the `iri` and `iri-reference`
# string formats, which no schema in this environment uses; jsonschema skips those formats when it
# is absent, and `pip check` stays clean. tests/test_pins.py holds both facts.
set -eu
python=$1
"$python" -m pip install --quiet --disable-pip-version-check --no-deps -r requirements.txt
"$python" -m pip uninstall -qq --disable-pip-version-check -y rfc3987-syntax lark
