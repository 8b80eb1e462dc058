"""tools/setup.sh: refuses a too-old Python with one clear line; a re-run is a quick no-op."""

import os
import shutil
import subprocess

from grader import REPO

SETUP = REPO / "tools" / "setup.sh"


def run_setup(**env):
    return subprocess.run(["sh", str(SETUP)], capture_output=True, text=True, env={**os.environ, **env}, timeout=120)


def test_too_old_python_is_refused_in_one_line(tmp_path):
    old = shutil.which("python3.11")
    if old is None:  # build a stand-in that reports itself as 3.11
        old = tmp_path / "python3.11"
        old.write_text("#!/bin/sh\nexit 1\n")
        old.chmod(0o755)
    done = run_setup(PYTHON=str(old))
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "3.12" in lines[0] and "PYTHON=" in lines[0], done.stderr


def test_rerun_with_nothing_changed_is_a_no_op():
    done = run_setup()
    assert done.returncode == 0 and "up to date" in done.stdout, done.stdout + done.stderr
