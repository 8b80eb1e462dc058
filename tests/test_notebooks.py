"""Execute every chapter notebook and every nbgrader source notebook, one test each."""

import pytest

from grader import REPO, nbtools

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb")) + sorted((REPO / "solutions").glob("*/*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(REPO)) for p in NOTEBOOKS])
def test_notebook_runs_clean(path):
    result = nbtools.execute_notebook(path)
    assert result.ok, f"{path.relative_to(REPO)}:\n  " + "\n  ".join(result.problems)
