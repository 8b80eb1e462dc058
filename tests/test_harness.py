"""The harness itself: a raises-exception cell must raise exactly the class it names."""

from pathlib import Path

import nbformat
import pytest

from grader import nbtools

FIXTURES = Path(__file__).parent / "fixtures"


def run(name):
    return nbtools.execute_notebook(FIXTURES / f"{name}.ipynb", timeout=60)


def test_expected_exception_raised_passes():
    assert run("raises_expected").ok


@pytest.mark.parametrize(
    "name, complaint",
    [
        ("raises_nothing", "expected ZeroDivisionError, but the cell raised nothing"),
        ("raises_wrong_class", "expected ZeroDivisionError, but the cell raised KeyError"),
        ("raises_unnamed", "names no exception"),
        ("untagged_error", "cell 1 failed: NameError"),
    ],
)
def test_harness_rejects(name, complaint):
    result = run(name)
    assert not result.ok
    assert any(complaint in p for p in result.problems), result.problems


def exercise_like(tmp_path, *sources):
    """Cells marked as an exercise's (nbgrader metadata) and tagged raises-exception with no class
    named, as every exercise's answer and test cells are, so that a student's Run All goes on."""
    nb = nbformat.v4.new_notebook(metadata=nbtools.KERNEL_METADATA)
    for number, source in enumerate(sources):
        meta = {"nbgrader": {"grade": True, "grade_id": f"test_{number}", "points": 1}, "tags": [nbtools.RAISES_TAG]}
        nb.cells.append(nbformat.v4.new_code_cell(source, metadata=meta))
    nb.cells.append(nbformat.v4.new_code_cell("print('after')"))
    path = tmp_path / "exercise.ipynb"
    nbformat.write(nb, path)
    return nbtools.execute_notebook(path, timeout=60)


def test_an_exercise_cell_tagged_for_run_all_must_raise_nothing_in_the_source(tmp_path):
    """The reference must pass every test: a test cell that fails fails the notebook, though the
    run went on past it (the cell after it ran) as a student's Run All does."""
    assert exercise_like(tmp_path, "assert 1 + 1 == 2", "x = 1").ok
    result = exercise_like(tmp_path, "x = 1", "assert 1 + 1 == 3, '❌ 一加一'", "y = 2")
    assert result.problems == ["cell 1 (test_1) failed: AssertionError: ❌ 一加一"], result.problems
    assert result.notebook.cells[-1].outputs[0]["text"] == "after\n", "the run stopped at the failing test"


def test_tidy_strips_outputs_and_metadata(tmp_path):
    stray = {"widgets": {"state": {}}, "kernelspec": {"name": "other", "display_name": "Other"}}
    nb = nbformat.v4.new_notebook(metadata=stray)
    result = nbformat.v4.new_output("execute_result", {"text/plain": "2"})
    nb.cells.append(nbformat.v4.new_code_cell("1 + 1", execution_count=3, outputs=[result]))
    path = tmp_path / "dirty.ipynb"
    nbformat.write(nb, path)
    assert nbtools.hygiene_problems(path)
    assert nbtools.tidy(path)
    assert nbtools.hygiene_problems(path) == []
    assert not nbtools.tidy(path)  # tidy is idempotent
