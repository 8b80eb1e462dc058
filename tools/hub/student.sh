#!/bin/sh
# A student's Jupyter server on the shared server, started by JupyterHub as that student
# (installed as <prefix>/bin/ch04-singleuser by tools/hub.sh): the course environment installed
# once under <prefix>, read-only, with the student's nbgrader settings (the shared exchange).
set -eu
prefix=$(dirname "$(dirname "$(readlink -f "$0")")")
# What nbgrader keeps here (fetched assignments, the submissions' cache with their secrets, the
# feedback) is the student's alone: Debian's useradd makes homes readable by everyone.
chmod 700 "$HOME"
# The chapter notebooks, the student's own copy to read and run (once; later changes are theirs).
[ -e "$HOME/ch04-notebooks" ] || cp -r "$prefix/student/notebooks" "$HOME/ch04-notebooks"
export JUPYTER_CONFIG_PATH="$prefix/jupyter-config"
export PATH="$prefix/venv/bin:${PATH:-/usr/bin:/bin}"
exec "$prefix/venv/bin/python" -m jupyterhub.singleuser "$@"
