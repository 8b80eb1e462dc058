"""A new exercise added the way CONTRIBUTING.md says ("Adding an exercise") is picked up by the
release, the grading command and the self-proof with no other edit.

In a copy of the repository, a throwaway exercise is made from an existing one (its source
notebook and its catalogue folder under a new name, nothing else touched); the copy's own
grader then releases it, grades a class that hands it in, and its test suite collects it.
"""

import os
import shutil
import subprocess
import sys

import pytest
from helpers import read_csv

from grader import REPO

pytestmark = pytest.mark.xdist_group("new_exercise")
TEMPLATE, NEW = "safe_norm", "zz_throwaway"
SKIP = shutil.ignore_patterns(".git", ".venv", "build", "__pycache__", ".pytest_cache", ".ruff_cache", "*.egg-info")


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    root = tmp_path_factory.mktemp("repo") / "course"
    shutil.copytree(REPO, root, ignore=SKIP)
    (root / "solutions" / NEW).mkdir()
    shutil.copy(REPO / "solutions" / TEMPLATE / f"{TEMPLATE}.ipynb", root / "solutions" / NEW / f"{NEW}.ipynb")
    shutil.copytree(REPO / "proof" / "catalogue" / TEMPLATE, root / "proof" / "catalogue" / NEW)
    return root


def run(root, *args, timeout=600):
    """`python ...` with the copy's grader and kit, as if this were its own checkout."""
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{root / 'kit'}"}
    done = subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def released(copy):
    run(copy, "-m", "grader", "release")
    return copy


def test_the_release_includes_it(released):
    notebook = released / "exercises" / NEW / f"{NEW}.ipynb"
    assert notebook.is_file(), "make release did not release the new exercise"
    assert "### BEGIN SOLUTION" not in notebook.read_text(encoding="utf-8")


def test_the_grading_command_grades_it(released, tmp_path):
    build = f"""
from pathlib import Path
from proof import answers, sample_classes
nb = sample_classes.answered("{NEW}", answers.reference_answer("{NEW}"))
sample_classes.write(Path("{tmp_path / "class"}"), "ada", "{NEW}", nb)
sample_classes.write(Path("{tmp_path / "class"}"), "bo", "{NEW}", answers.release_notebook("{NEW}"))
"""
    run(released, "-c", build)
    run(released, "-m", "grader", "grade", str(tmp_path / "class"), "--out", str(tmp_path / "out"), "--jobs", "2")
    rows = {student: row for (student, _), row in read_csv(tmp_path / "out").items()}
    assert rows["ada"]["assignment"] == NEW and rows["ada"]["score"] == rows["ada"]["max_score"], rows["ada"]
    assert float(rows["bo"]["score"]) == 0, rows["bo"]


def test_the_self_proof_and_the_structure_checks_collect_it(released):  # the self-proof reads the release
    listed = run(released, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests/test_selfproof.py",
                 "tests/test_release.py")  # fmt: skip
    for test in ("test_catalogue_answer", "test_pipeline_verdict", "test_catalogue_is_complete",
                 "test_every_assignment_has_the_cells_the_pipeline_needs", "test_no_solution_or_hidden_test_leaks",
                 "test_statement_says_how_it_is_graded_and_links_the_section_that_teaches_it"):  # fmt: skip
        assert any(test in line and NEW in line for line in listed.splitlines()), f"{test} does not cover {NEW}"
