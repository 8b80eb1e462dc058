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
