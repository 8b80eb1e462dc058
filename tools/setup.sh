#!/bin/sh
# Create .venv with a Python >= 3.12 (JAX 0.12 needs it), install the exact pins, then this
# project itself (editable: `import ch4check` and `python -m grader` work from any folder).
# Fast when nothing changed: a stamp records the pins and their installer (tools/install_pins.sh),
# pyproject.toml, the interpreter and the checkout's path (a moved or copied checkout gets a fresh
# .venv: its scripts and the editable install point at the old path). The same script sets up the
# student edition (no grader/).
# Interpreter choice: $PYTHON if given, else python3.14/3.13/3.12 on PATH, else pyenv's newest.
set -eu
cd "$(dirname "$0")/.."

NEED="Python >= 3.12"
VENV=.venv
STAMP=$VENV/.requirements-installed

is_new_enough() {
    "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1
}

find_python() {
    if [ -n "${PYTHON:-}" ]; then
        if is_new_enough "$PYTHON"; then echo "$PYTHON"; return 0; fi
        echo "setup: PYTHON=$PYTHON is not $NEED (JAX 0.12 needs it); install Python 3.12+ and pass PYTHON=/path/to/python3.12" >&2
        return 1
    fi
    for candidate in python3.14 python3.13 python3.12; do
        if command -v "$candidate" >/dev/null 2>&1 && is_new_enough "$candidate"; then
            command -v "$candidate"; return 0
        fi
    done
    if command -v pyenv >/dev/null 2>&1; then
        root=$(pyenv root)
        for dir in $(ls -d "$root"/versions/3.* 2>/dev/null | sort -t. -k2,2nr -k3,3nr); do
            for exe in "$dir"/bin/python3.1[2-9]; do
                if [ -x "$exe" ] && is_new_enough "$exe"; then echo "$exe"; return 0; fi
            done
        done
    fi
    echo "setup: no $NEED found (looked for python3.14/3.13/3.12 on PATH and in pyenv); install Python 3.12+ or pass PYTHON=/path/to/python3.12" >&2
    return 1
}

python=$(find_python)
version=$("$python" -c 'import sys; print(sys.version.split()[0])')
want="$(cksum < requirements.txt) $(cksum < tools/install_pins.sh) $(cksum < pyproject.toml) $version $PWD"

# apt-get install PACKAGE as root (refreshing the package index once if needed); false if not possible.
apt_install() {
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || return 1
    apt-get install -y -qq "$1" >/dev/null 2>&1 \
        || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "$1" >/dev/null 2>&1; }
}

# The grader runs each student's kernel inside bubblewrap (grader/README.md). Students and
# notebooks do not need it, so a missing sandbox is a loud warning here, and an error in grading.
ensure_sandbox() {
    command -v bwrap >/dev/null 2>&1 && return 0
    echo "setup: installing bubblewrap (the grader's sandbox for student kernels)"
    apt_install bubblewrap && return 0
    echo "setup: WARNING: bubblewrap (bwrap) is not installed, so 'make grade' cannot sandbox student kernels; install it with: sudo apt-get install bubblewrap" >&2
}

# The browser tests use Debian's Chromium: a feedback page (tests/test_feedback.py) and JupyterLab
# on the student edition (tests/test_student_edition.py). CI installs it as root with apt;
# elsewhere those checks are skipped with a note.
ensure_browser() {
    command -v chromium >/dev/null 2>&1 && return 0
    if [ -n "${CI:-}" ]; then
        echo "setup: installing chromium (the browser tests drive it)"
        apt_install chromium && return 0
    fi
    echo "setup: note: chromium is not installed, so the browser tests are skipped (apt-get install chromium)" >&2
}

# Chinese text and the course's emoji markers need fonts; without them JupyterLab and the
# feedback pages show empty boxes. Only Linux is checked (macOS and Windows ship both).
check_fonts() {
    [ "$(uname -s)" = Linux ] || return 0
    if ! command -v fc-list >/dev/null 2>&1 || [ -z "$(fc-list :lang=zh 2>/dev/null)" ]; then
        echo "setup: WARNING: no Chinese font found, so the course text shows as boxes; install one, e.g. sudo apt-get install fonts-noto-cjk fonts-noto-color-emoji" >&2
    fi
}

check_fonts
if [ -d grader ]; then  # the instructor's checkout; the student edition has no grader
    ensure_sandbox
    ensure_browser
fi
if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; then
    echo "setup: .venv is up to date ($("$VENV/bin/python" --version))"
    exit 0
fi

built_at=$(cut -d' ' -f8- "$STAMP" 2>/dev/null || true)
if [ -n "$built_at" ] && [ "$built_at" != "$PWD" ]; then
    echo "setup: this checkout was moved or copied from $built_at; rebuilding .venv here"
    rm -rf "$VENV"
fi
if ! [ -x "$VENV/bin/python" ] || ! is_new_enough "$VENV/bin/python" \
   || [ "$("$VENV/bin/python" -c 'import sys; print(sys.version.split()[0])')" != "$version" ]; then
    echo "setup: creating .venv with $python ($("$python" --version 2>&1))"
    rm -rf "$VENV"
    "$python" -m venv "$VENV"
fi
echo "setup: installing the pinned packages from requirements.txt (first time: about 2 minutes)"
sh tools/install_pins.sh "$VENV/bin/python"
echo "setup: installing the course itself (editable)"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -e .
echo "$want" > "$STAMP"
echo "setup: done ($("$VENV/bin/python" --version); jax $("$VENV/bin/python" -c 'import jax; print(jax.__version__)'))"
