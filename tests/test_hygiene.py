"""Source hygiene: committed notebooks carry no outputs and clean metadata; ruff passes."""

import subprocess
import sys

import pytest

from grader import REPO, nbtools

COMMITTED = sorted(
    p
    for folder in ("notebooks", "solutions", "exercises", "tests/fixtures")
    for p in (REPO / folder).rglob("*.ipynb")
    if ".ipynb_checkpoints" not in p.parts
)


@pytest.mark.parametrize("path", COMMITTED, ids=[str(p.relative_to(REPO)) for p in COMMITTED])
def test_notebook_is_tidy(path):
    problems = nbtools.hygiene_problems(path)
    assert not problems, f"{path.relative_to(REPO)} (fix with `make tidy`): " + "; ".join(problems)


def test_ruff_passes_on_python_and_notebooks():
    ruff = [sys.executable, "-m", "ruff", "check", "--no-cache", str(REPO)]
    done = subprocess.run(ruff, capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr


def test_python_files_are_formatted():
    """What `make lint` checks beside the rules: ruff's formatting (notebooks and the answer texts
    of the catalogue and the attacks are excluded in pyproject.toml, with the reason)."""
    ruff = [sys.executable, "-m", "ruff", "format", "--check", "--no-cache", str(REPO)]
    done = subprocess.run(ruff, capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, "run `.venv/bin/ruff format` (or see `make lint`):\n" + done.stdout + done.stderr


BAD_PY = "import os\nx=undefined_name\n"  # an unused import, an undefined name, and not formatted


def test_a_class_in_its_documented_home_is_ignored_by_git_lint_and_make_clean():
    """#45 item 6: a class's submissions and grades go in classes/NAME/ (README); students' text
    there never breaks `make lint`, git never offers to commit it, `make clean` keeps it, and
    `make grade CLASS=NAME` / `make formgrader CLASS=NAME` use it."""
    import json
    import shutil
    import uuid

    name = f"test-{uuid.uuid4().hex[:8]}"
    home = REPO / "classes" / name
    cell = {"cell_type": "code", "execution_count": None, "id": "a1", "metadata": {}, "outputs": [], "source": BAD_PY}
    notebook = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    files = [
        home / "submitted" / "alice" / "softplus" / "softplus.ipynb",
        home / "submitted" / "alice" / "softplus" / "helper.py",
        home / "graded" / "course" / "autograded" / "alice" / "softplus" / "softplus.ipynb",
        home / "graded" / "grades.csv",
    ]
    try:
        for path in files:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(BAD_PY if path.suffix == ".py" else notebook if path.suffix == ".ipynb" else "x\n")
        isolated = [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", str(files[1]), str(files[0])]
        assert subprocess.run(isolated, capture_output=True, cwd=REPO).returncode == 1, "the files would pass anyway"
        shown = subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--show-files", "--no-cache", "."],
            capture_output=True,
            text=True,
            cwd=REPO,
        )
        assert "classes/" not in shown.stdout and "notebooks/00_intro.ipynb" in shown.stdout, shown.stdout[-2000:]
        formatting = subprocess.run(
            [sys.executable, "-m", "ruff", "format", "--check", "--no-cache", "."],
            capture_output=True,
            text=True,
            cwd=REPO,
        )
        assert "classes/" not in formatting.stdout + formatting.stderr, formatting.stdout[-2000:]
        ignored = subprocess.run(["git", "check-ignore", *map(str, files)], capture_output=True, text=True, cwd=REPO)
        assert ignored.stdout.splitlines() == [str(p) for p in files], ignored.stdout + ignored.stderr
        clean = subprocess.run(["make", "-n", "clean"], capture_output=True, text=True, cwd=REPO, check=True).stdout
        assert "classes" not in clean and "rm -rf build" in clean, clean
        grade = subprocess.run(
            ["make", "-n", "grade", f"CLASS={name}"], capture_output=True, text=True, cwd=REPO
        ).stdout
        assert f'grade "classes/{name}/submitted" --out "classes/{name}/graded"' in grade, grade
        shown_in = subprocess.run(
            ["make", "-n", "formgrader", f"CLASS={name}"], capture_output=True, text=True, cwd=REPO
        )
        assert f'CH4_GRADES="classes/{name}/graded" ' in shown_in.stdout, shown_in.stdout + shown_in.stderr
    finally:
        shutil.rmtree(home, ignore_errors=True)
