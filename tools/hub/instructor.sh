#!/bin/sh
# The instructor's Jupyter server on the shared server, started by JupyterHub as the instructor
# (installed as <prefix>/bin/ch04-instructor by tools/hub.sh): from their checkout, so nbgrader
# reads its nbgrader_config.py (Formgrader on build/grades, the shared exchange) and runs its .venv.
set -eu
cd "$CH4_REPOSITORY"
export PATH="$CH4_REPOSITORY/.venv/bin:${PATH:-/usr/bin:/bin}"
exec .venv/bin/python -m jupyterhub.singleuser "$@"
