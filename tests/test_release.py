"""exercises/ is exactly what nbgrader generates from solutions/, and leaks nothing secret."""

import re

import nbformat
import pytest

from grader import REPO, course, nbtools
from grader.instructor.edition import leaks, secret_passages
from grader.pipeline.release import generate_release


def test_every_folder_in_solutions_is_an_assignment():
    """course.ASSIGNMENTS is every solutions/<a>/<a>.ipynb: a misnamed notebook would be skipped
    silently by release, grading and the self-proof, so it fails here instead."""
    folders = sorted(p.name for p in course.SOLUTIONS.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert folders, "solutions/ holds no exercise"
    assert sorted(course.ASSIGNMENTS) == folders, (
        f"each folder solutions/<a>/ must hold <a>.ipynb; found folders {folders}, assignments {course.ASSIGNMENTS}"
    )
    for assignment in course.ASSIGNMENTS:
        notebooks = sorted(p.name for p in (course.SOLUTIONS / assignment).glob("*.ipynb"))
        assert notebooks == [f"{assignment}.ipynb"], f"solutions/{assignment}/ holds {notebooks}: one notebook only"


def test_the_readme_names_every_assignment():
    """The instructor's guide (docs/grading.md) lists the assignment folders grading expects."""
    readme = (REPO / "docs" / "grading.md").read_text(encoding="utf-8")
    listed = re.search(r"\(assignments: `([a-z_ ]+)`\)", readme)
    assert listed and sorted(listed.group(1).split()) == sorted(course.ASSIGNMENTS), listed


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_every_assignment_has_the_cells_the_pipeline_needs(assignment):
    cells = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4).cells
    meta = [c.metadata.get("nbgrader", {}) for c in cells]
    answer_cells = [m for m in meta if m.get("grade_id") == course.ANSWER_ID]
    assert len(answer_cells) == 1 and answer_cells[0].get("solution"), f"{assignment}: one answer cell, id 'answer'"
    setup = [c for c, m in zip(cells, meta, strict=True) if m.get("locked") and "start_tests(interface=" in c.source]
    assert len(setup) == 1, f"{assignment}: one locked setup cell calling start_tests(interface=[...])"
    tests = [c for c, m in zip(cells, meta, strict=True) if m.get("grade")]
    assert tests, f"{assignment}: no test cells"
    for cell in tests:
        assert cell.source.startswith("%%ch4test\n"), f"{assignment}: a test cell must start with %%ch4test"
    hidden = [c for c in cells if "### BEGIN HIDDEN TESTS" in c.source]
    assert all(c in tests for c in hidden), f"{assignment}: hidden tests only inside test cells"
    assert (course.CATALOGUE / assignment).is_dir(), f"{assignment}: proof/catalogue/{assignment}/ is missing"
    # Run All goes on past a failing test (JupyterLab sends stop_on_error=False for a cell tagged
    # raises-exception) and ends with the summary of what passed and failed (CONTRIBUTING).
    for cell, m in zip(cells, meta, strict=True):
        if m.get("grade") or m.get("grade_id") == course.ANSWER_ID:
            assert nbtools.RAISES_TAG in cell.metadata.get("tags", []), f"{assignment}/{m['grade_id']}: not tagged"
            assert nbtools.RAISES_KEY not in cell.metadata, f"{assignment}/{m['grade_id']}: names an exception"
    summary, last = cells[-1], meta[-1]
    assert last.get("grade_id") == "summary" and last.get("locked") and not last.get("grade"), (
        f"{assignment}: the last cell must be the locked, ungraded summary (grade_id 'summary'), not {last}"
    )
    assert summary.source.splitlines()[-1] == "report_tests()", f"{assignment}: the summary must call report_tests()"


def test_every_assignment_has_a_release():
    for assignment in course.ASSIGNMENTS:  # its source exists by definition: ASSIGNMENTS is read from solutions/
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


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_no_solution_or_hidden_test_leaks(assignment):
    published = list(course.EXERCISES.rglob("*.ipynb")) + list((REPO / "notebooks").glob("*.ipynb"))
    secrets = secret_passages(assignment)
    assert secrets, f"{assignment}: found no solution or hidden-test lines to protect"
    found = leaks(secrets, published)
    assert not found, "secret lines published:\n" + "\n".join(found)


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_leak_check_catches_a_pasted_solution(assignment, tmp_path):
    from proof import answers

    pasted = answers.with_answer(answers.release_notebook(assignment), answers.reference_answer(assignment))
    nbformat.write(pasted, tmp_path / "leaky.ipynb")
    assert leaks(secret_passages(assignment), [tmp_path / "leaky.ipynb"]), (
        f"{assignment}: a pasted reference solution went unnoticed"
    )


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_statement_says_how_it_is_graded_and_links_the_section_that_teaches_it(assignment):
    """Every statement carries the paragraph on grading (export, then the judge; traceable under
    `jax.jit`) and names a chapter section to read first that exists."""
    statement = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4).cells[0].source
    assert "**怎样评分**" in statement and "jax.export" in statement and "jax.jit" in statement, (
        f"{assignment}: the statement lacks the paragraph on how tests are graded"
    )
    read_first = re.search(r"\*\*先读\*\*：\[[^\]]+\]\(\.\./\.\./notebooks/([^)#]+\.ipynb)#[^)]+\)", statement)
    assert read_first, f"{assignment}: the statement names no section to read first"
    assert (REPO / "notebooks" / read_first.group(1)).exists()
