#!/bin/sh
# Start the course's JupyterHub in the foreground (installed as <prefix>/bin/ch04-hub by
# tools/hub.sh; the systemd unit ch04-hub runs it). As root: it logs users in with PAM and
# starts each one's server as that user.
set -eu
prefix=$(dirname "$(dirname "$(readlink -f "$0")")")
export PATH="$prefix/venv/bin:${PATH:-/usr/bin:/bin}"
exec "$prefix/venv/bin/python" -m jupyterhub -f "$prefix/hub/jupyterhub_config.py" "$@"
