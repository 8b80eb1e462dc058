"""Execute every chapter notebook and every nbgrader source notebook, one test each.

A chapter notebook that passes is kept, executed, under build/executed/ with the hash of its
source: the website (`make book`) renders those copies instead of running the chapter again.
Solutions are never kept there: nothing published may be built from them."""

import pytest

from grader import REPO, nbtools

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb")) + sorted((REPO / "solutions").glob("*/*.ipynb"))
# The chapter notebooks run on the worker that builds the website (test_book.py's group, which
# conftest.py puts last): the book then finds every copy made, instead of executing on one worker
# the notebooks the other has not reached yet, which then ran twice.
PARAMS = [
    pytest.param(
        p, id=str(p.relative_to(REPO)), marks=[pytest.mark.xdist_group("book")] if p.parent.name == "notebooks" else []
    )
    for p in NOTEBOOKS
]


@pytest.mark.parametrize("path", PARAMS)
def test_notebook_runs_clean(path):
    keep = nbtools.executed_copy(path) if path.parent.name == "notebooks" else None
    result = nbtools.execute_notebook(path, keep_at=keep)
    assert result.ok, f"{path.relative_to(REPO)}:\n  " + "\n  ".join(result.problems)
