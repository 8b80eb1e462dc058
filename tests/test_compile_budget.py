"""Each test cell compiles no more than its budget, so a later test cannot quietly add a hundred
XLA compilations (every student pays them each time they run the tests, and the grader for every
submission).

The budget sits beside the cell's points in its metadata: `{"ch4": {"compile_budget": N}}`
(`grader.compiles.BUDGET_KEY`). The reference answer runs in a kernel with a recorder
(`grader.compiles.measure`: JAX's monitoring events, one per backend compilation) and with a fresh
secret, so the hidden tests draw new inputs each run: a budget holds for every draw (hidden sizes
come from small fixed sets, and the budget is the count when the size is new to the kernel, plus a
margin). Every verdict must compile nothing in the grader: references come from NumPy and the
inputs are NumPy until the evidence part hands them to JAX. `python -m grader.benchmark --compiles`
prints the counts per cell.
"""

import nbformat
import pytest

from grader import compiles, course, verdict


def graded_cells(assignment):
    nb = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
    return [c for c in nb.cells if verdict.is_test(c)]


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_every_test_cell_has_a_budget(assignment):
    missing = [c.metadata["nbgrader"]["grade_id"] for c in graded_cells(assignment) if compiles.budget(c) is None]
    assert not missing, f"{assignment}: no ch4.compile_budget in the metadata of {missing}"


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_reference_stays_within_the_compile_budget(assignment):
    tests = {c.metadata["nbgrader"]["grade_id"] for c in graded_cells(assignment)}
    cells = [c for c in compiles.measure(assignment) if c.cell in tests]
    assert {c.cell for c in cells} == tests, f"{assignment}: not every test cell ran"
    over = [f"{c.cell}: {c.count} > {c.budget}" for c in cells if c.budget is not None and c.count > c.budget]
    assert not over, (
        f"{assignment}: XLA compilations over budget ({'; '.join(over)}). Share shapes with the other tests, "
        "batch eager calls into one jit/vmap, compute references in NumPy; raise a budget only with a reason"
    )
    compiled = [f"{c.cell}: {c.verdict_compiles}" for c in cells if c.verdict_compiles]
    assert not compiled, f"{assignment}: verdicts compiled in the grader ({'; '.join(compiled)}): use NumPy there"
