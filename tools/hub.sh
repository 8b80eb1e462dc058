#!/bin/sh
# `sudo make hub`: the course on one shared server, the way nbgrader documents it for JupyterHub.
# Run as root from the instructor's checkout; running it again updates everything it set up.
#
#   <prefix> (/opt/ch04)    read-only for everyone: a Python every user can run, the course
#                           environment (the exact pins, JupyterHub, the kit, not the grader),
#                           the student edition, JupyterHub's proxy (npm, pinned), the students'
#                           Jupyter settings, the hub's configuration and start scripts
#   <state> (/srv/ch04-hub) root only: the hub's user database and cookie secret
#   <exchange>              nbgrader's exchange (/srv/nbgrader/exchange): everyone may write
#                           into it, no one may remove another's files; the course's folder in
#                           it is the instructor's
#   the checkout            the instructor's alone (mode 700): solutions, gradebook, secrets
#
# Settings (environment): HUB_INSTRUCTOR (default: the checkout's owner), HUB_GROUP (the
# students' Unix group, ch04-students), HUB_IP (127.0.0.1) and HUB_PORT (8000) for the hub's
# address, HUB_API_PORT (8081), HUB_PROXY_API_PORT (8001), HUB_PREFIX, HUB_STATE, HUB_EXCHANGE,
# PYTHON (a Python >= 3.12; default: the one the checkout's .venv was built with, else python3.1x
# on PATH), HUB_NO_SERVICE=1 (no systemd unit even where systemd runs).
# `tools/hub.sh python` installs only the Python every user can run, and prints its path.
set -eu
cd "$(dirname "$0")/.."
REPO=$PWD
PREFIX=${HUB_PREFIX:-/opt/ch04}
STATE=${HUB_STATE:-/srv/ch04-hub}
EXCHANGE=${HUB_EXCHANGE:-/srv/nbgrader/exchange}
GROUP=${HUB_GROUP:-ch04-students}
INSTRUCTOR=${HUB_INSTRUCTOR:-$(stat -c %U "$REPO")}
COURSE_ID=ch04  # grader/course.py COURSE_ID: the course's folder in the exchange

say() { echo "hub: $*"; }
die() { echo "hub: $*" >&2; exit 2; }

[ "$(uname -s)" = Linux ] || die "the shared server is Linux (JupyterHub's local users and PAM)"
[ "$(id -u)" = 0 ] || die "run it as root (sudo make hub): it installs for every user, creates the exchange and the hub's service"
[ "$INSTRUCTOR" != root ] || die "the instructor needs a Unix account of their own: clone the course as that user, or set HUB_INSTRUCTOR"
id "$INSTRUCTOR" >/dev/null 2>&1 || die "no such user: $INSTRUCTOR (HUB_INSTRUCTOR)"
[ "$(stat -c %U "$REPO")" = "$INSTRUCTOR" ] || die "$REPO belongs to $(stat -c %U "$REPO"), not to the instructor $INSTRUCTOR"
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 \
    || die "JupyterHub's proxy needs Node.js >= 20 and npm (Debian: apt-get install nodejs npm, or NodeSource's packages)"
[ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ] || die "Node.js $(node --version) is too old for configurable-http-proxy: it needs >= 20"

# Can `nobody` run this? What every student must be able to do with the course's Python.
for_everyone() { runuser -u nobody -- "$@" >/dev/null 2>&1; }

find_python() {
    if [ -n "${PYTHON:-}" ]; then echo "$PYTHON"; return; fi
    if [ -x "$REPO/.venv/bin/python" ]; then "$REPO/.venv/bin/python" -c 'import sys; print(sys._base_executable)'; return; fi
    for candidate in python3.14 python3.13 python3.12; do
        command -v "$candidate" >/dev/null 2>&1 && { "$candidate" -c 'import sys; print(sys.executable)'; return; }
    done
    die "no Python >= 3.12 found: install one (or pass PYTHON=/path/to/python3.12)"
}

# A Python every user can run: $1 itself, or, when it lives in a private home (pyenv under
# /root), a copy in <prefix>/python, without its tests and packages, told where its library now is.
python_for_everyone() {
    python=$1
    if for_everyone "$python" -c pass; then echo "$python"; return; fi
    base=$("$python" -c 'import sys; print(sys.base_prefix)')
    version=$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    copy="$PREFIX/python/bin/python$version"
    if ! [ -x "$copy" ] || [ "$("$copy" -c 'import sys; print(sys.version)')" != "$("$python" -c 'import sys; print(sys.version)')" ]; then
        say "$python is not runnable by other users; copying it to $PREFIX/python" >&2
        rm -rf "$PREFIX/python" && mkdir -p "$PREFIX/python"
        tar -C "$base" --exclude="./lib/python$version/test" --exclude="./lib/python$version/site-packages/*" -cf - . \
            | tar -C "$PREFIX/python" -xf -
        command -v patchelf >/dev/null 2>&1 || apt-get install -y -qq patchelf >/dev/null \
            || die "patchelf is needed to move $python (apt-get install patchelf)"
        for exe in "$PREFIX/python/bin/python$version"; do
            case "$(patchelf --print-rpath "$exe" 2>/dev/null)" in "$base"*) patchelf --set-rpath '$ORIGIN/../lib' "$exe" ;; esac
        done
        chmod -R a+rX,go-w "$PREFIX/python"
    fi
    echo "$copy"
}

python=$(find_python)
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null || die "$python is not Python >= 3.12 (JAX 0.12 needs it)"
mkdir -p "$PREFIX"
chmod 755 "$PREFIX"
python=$(python_for_everyone "$python")
# `tools/hub.sh python`: only that, and say which (the instructor's `make setup PYTHON=...` may need it)
if [ "${1:-}" = python ]; then echo "$python"; exit 0; fi

# The course environment: the exact pins (JupyterHub, JupyterLab, nbgrader, JAX, ...) and the
# kit from the student edition, installed (not editable: nothing of it points into the checkout).
venv="$PREFIX/venv"
if ! [ -x "$venv/bin/python" ] || ! for_everyone "$venv/bin/python" -c pass; then
    say "creating the course environment in $venv with $python"
    rm -rf "$venv"
    "$python" -m venv "$venv"
fi
say "installing the pinned packages into $venv (first time: a few minutes)"
sh tools/install_pins.sh "$venv/bin/python"
say "building the student edition into $PREFIX/student and installing its kit"
rm -rf "$PREFIX/student.new"
# the grader from this checkout, run by the new environment; as root, it leaves no bytecode behind in the instructor's files
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m grader edition --out "$PREFIX/student.new" >/dev/null
rm -rf "$PREFIX/student" "$PREFIX/student.zip" && mv "$PREFIX/student.new" "$PREFIX/student" && mv "$PREFIX/student.new.zip" "$PREFIX/student.zip"
# its build backend (setuptools) is one of the pins: nothing more to download
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation --force-reinstall "$PREFIX/student"

say "installing JupyterHub's proxy (configurable-http-proxy, pinned in tools/hub/package-lock.json)"
mkdir -p "$PREFIX/proxy"
cp tools/hub/package.json tools/hub/package-lock.json "$PREFIX/proxy/"
(cd "$PREFIX/proxy" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)

mkdir -p "$PREFIX/bin" "$PREFIX/hub"
install -m 755 tools/hub/student.sh "$PREFIX/bin/ch04-singleuser"
install -m 755 tools/hub/instructor.sh "$PREFIX/bin/ch04-instructor"
install -m 755 tools/hub/start.sh "$PREFIX/bin/ch04-hub"
install -m 644 tools/hub/jupyterhub_config.py "$PREFIX/hub/jupyterhub_config.py"
rm -rf "$PREFIX/jupyter-config" && cp -r tools/hub/jupyter-config "$PREFIX/jupyter-config"
cat > "$PREFIX/hub/settings.json" <<JSON
{
  "prefix": "$PREFIX",
  "state": "$STATE",
  "exchange": "$EXCHANGE",
  "group": "$GROUP",
  "instructor": "$INSTRUCTOR",
  "repository": "$REPO",
  "ip": "${HUB_IP:-127.0.0.1}",
  "port": ${HUB_PORT:-8000},
  "hub_port": ${HUB_API_PORT:-8081},
  "proxy_api_port": ${HUB_PROXY_API_PORT:-8001}
}
JSON
chown -R root:root "$PREFIX"
chmod -R a+rX,go-w "$PREFIX"
for_everyone "$venv/bin/python" -c "import ch4check, jupyterhub, nbgrader" \
    || die "other users cannot run $venv/bin/python or import the kit from it: is $PREFIX under a private folder?"

mkdir -p "$STATE" && chmod 700 "$STATE"

# nbgrader's exchange: world-writable with the sticky bit (like /tmp), so students submit into it
# but cannot rename or remove what others put there; the course's folder is the instructor's, so
# no one else can create its outbound/, inbound/ or feedback/ first.
mkdir -p "$EXCHANGE/$COURSE_ID"
chown root:root "$EXCHANGE" && chmod 1777 "$EXCHANGE"
chown "$INSTRUCTOR" "$EXCHANGE/$COURSE_ID" && chmod 755 "$EXCHANGE/$COURSE_ID"

getent group "$GROUP" >/dev/null || { groupadd "$GROUP" && say "created the group $GROUP: add each student with usermod -aG $GROUP NAME"; }

# Solutions, hidden tests, the gradebook and the grading secret live in the checkout.
chmod 700 "$REPO"

if [ -d /run/systemd/system ] && [ -z "${HUB_NO_SERVICE:-}" ]; then
    cat > /etc/systemd/system/ch04-hub.service <<UNIT
[Unit]
Description=JupyterHub for the course ch04 (tools/hub.sh)
After=network.target

[Service]
ExecStart=$PREFIX/bin/ch04-hub
WorkingDirectory=$STATE
Restart=on-failure

[Install]
WantedBy=multi-user.target
UNIT
    systemctl daemon-reload && systemctl enable ch04-hub >/dev/null 2>&1 && systemctl restart ch04-hub
    started="running as the systemd service ch04-hub (systemctl status ch04-hub)"
else
    started="start it with: $PREFIX/bin/ch04-hub (as root, in the foreground)"
fi
say "ready: http://${HUB_IP:-127.0.0.1}:${HUB_PORT:-8000}/ ($started)"
say "students: the members of $GROUP (usermod -aG $GROUP NAME); instructor: $INSTRUCTOR"
if ! [ -x "$REPO/.venv/bin/python" ] || ! runuser -u "$INSTRUCTOR" -- "$REPO/.venv/bin/python" -c pass 2>/dev/null; then
    say "the instructor's own environment is still missing: as $INSTRUCTOR, run  make setup PYTHON=$python  in $REPO"
fi
