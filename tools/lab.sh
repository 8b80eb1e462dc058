#!/bin/sh
# Start JupyterLab on this folder with the course's environment (`make lab`; in an activated
# conda environment, `sh tools/lab.sh`).
# Works as root (containers, CI, lab machines: Jupyter refuses root without --allow-root) and
# on a machine with no display (it prints the address with its token instead of opening a
# browser). LAB_PORT (default 8888; the next free one if taken) and LAB_IP (default 127.0.0.1;
# 0.0.0.0 to reach it from another machine, e.g. through an SSH tunnel or a container port).
# A notebook as the first argument (`make lab` gives notebooks/00_intro.ipynb) is what the printed
# address opens; without a browser to open, Jupyter's own file argument would print the Launcher's.
set -eu
cd "$(dirname "$0")/.."
python=.venv/bin/python
[ -x "$python" ] || python=python  # an activated conda environment
flags="--ip=${LAB_IP:-127.0.0.1} --port=${LAB_PORT:-8888} --ServerApp.root_dir=."
if [ "$(id -u)" = 0 ]; then flags="$flags --allow-root"; fi
case "${1:-}" in
    *.ipynb) [ -f "$1" ] && flags="$flags --LabApp.default_url=/lab/tree/$1"; shift ;;
esac
if [ "$(uname -s)" = Linux ] && [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then flags="$flags --no-browser"; fi
# The student edition turns off nbgrader's instructor tools and its Assignment List (there is
# no shared exchange on a student's own machine); Validate stays.
if [ -d jupyter-config ]; then export JUPYTER_CONFIG_PATH="$PWD/jupyter-config${JUPYTER_CONFIG_PATH:+:$JUPYTER_CONFIG_PATH}"; fi
# The instructor's checkout (not the student edition): Formgrader's pages fitted to this course.
if [ -d tools/instructor-config ]; then export JUPYTER_CONFIG_PATH="$PWD/tools/instructor-config${JUPYTER_CONFIG_PATH:+:$JUPYTER_CONFIG_PATH}"; fi
# Everyone's: no first-start question about fetching Jupyter's news (JupyterLab's announcements);
# and Validate's success message in Chinese, naming the hidden tests it did not run (an extension
# of the course's own, tools/jupyter-share/labextensions/ch4-validate-note).
export JUPYTER_CONFIG_PATH="$PWD/tools/jupyter-config${JUPYTER_CONFIG_PATH:+:$JUPYTER_CONFIG_PATH}"
export JUPYTER_PATH="$PWD/tools/jupyter-share${JUPYTER_PATH:+:$JUPYTER_PATH}"
export JAX_PLATFORMS=cpu  # the course's claims are made on CPU
# shellcheck disable=SC2086  # $flags is a list of words on purpose
exec "$python" -m jupyterlab $flags "$@"  # the module, not `jupyter lab`: that one runs whichever jupyter-lab is first on PATH
