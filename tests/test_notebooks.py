"""Execute every chapter notebook and every nbgrader source notebook, one test each.

A chapter notebook that passes is kept, executed, under build/executed/ with the hash of its
source: the website (`make book`) renders those copies instead of running the chapter again.
Solutions are never kept there: nothing published may be built from them."""

import pytest

from grader import REPO, nbtools

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb")) + sorted((REPO / "solutions").glob("*/*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(REPO)) for p in NOTEBOOKS])
def test_notebook_runs_clean(path):
    keep = nbtools.executed_copy(path) if path.parent.name == "notebooks" else None
    result = nbtools.execute_notebook(path, keep_at=keep)
    assert result.ok, f"{path.relative_to(REPO)}:\n  " + "\n  ".join(result.problems)
