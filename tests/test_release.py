"""exercises/ is exactly what nbgrader generates from solutions/, and leaks nothing secret."""

import nbformat
import pytest

from grader import REPO, course
from grader.edition import leaks, secret_passages
from grader.release import generate_release


def test_every_assignment_has_a_source_and_a_release():
    for assignment in course.ASSIGNMENTS:
        assert course.notebook_path(course.SOLUTIONS, assignment).exists(), f"solutions/{assignment} is missing"
        assert course.notebook_path(course.EXERCISES, assignment).exists(), (
            f"exercises/{assignment} is missing: run `make release`"
        )


def test_release_is_in_sync_with_solutions(tmp_path):
    generate_release(release=tmp_path)
    fresh = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(course.EXERCISES) for p in course.EXERCISES.rglob("*") if p.is_file())
    assert fresh == committed, "exercises/ has other files than a fresh release: run `make release`"
    stale = [str(p) for p in fresh if (tmp_path / p).read_bytes() != (course.EXERCISES / p).read_bytes()]
    assert not stale, f"exercises/ is stale (edited by hand or not regenerated): {stale}; run `make release`"


@pytest.mark.parametrize("assignment", course.available())
def test_no_solution_or_hidden_test_leaks(assignment):
    published = list(course.EXERCISES.rglob("*.ipynb")) + list((REPO / "notebooks").glob("*.ipynb"))
    secrets = secret_passages(assignment)
    assert secrets, f"{assignment}: found no solution or hidden-test lines to protect"
    found = leaks(secrets, published)
    assert not found, "secret lines published:\n" + "\n".join(found)


@pytest.mark.parametrize("assignment", course.available())
def test_leak_check_catches_a_pasted_solution(assignment, tmp_path):
    from grader import catalogue

    pasted = catalogue.with_answer(catalogue.release_notebook(assignment), catalogue.reference_answer(assignment))
    nbformat.write(pasted, tmp_path / "leaky.ipynb")
    assert leaks(secret_passages(assignment), [tmp_path / "leaky.ipynb"]), (
        f"{assignment}: a pasted reference solution went unnoticed"
    )
