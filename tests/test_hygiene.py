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
