"""A graded kernel compiles nothing for the tests, and each verdict compiles little in the judge.

Test cells only export the student's functions (`jax.export` traces and lowers; XLA compiles
nothing), so the student's kernel pays no compilation for a test, and neither does a graded
kernel. The judge compiles each program it runs once per shape; the budget of each verdict sits
beside the cell's points in its metadata: `{"ch4": {"compile_budget": N}}`
(`proof.compiles.BUDGET_KEY`), so a later test cannot quietly add a hundred compilations to
every submission's grading. The reference runs with a recorder in its kernel (`proof.compiles.
measure`: JAX's monitoring events, one per backend compilation) and its programs go through a
judge in this process with JAX's caches cleared, with a fresh secret, so the hidden tests draw new
inputs each run and a budget holds for every draw. `python -m proof.benchmark --compiles`
prints the counts per cell.
"""

import nbformat
import pytest

from grader import course
from grader.judging import verdict
from proof import compiles


def graded_cells(assignment):
    nb = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
    return [c for c in nb.cells if verdict.is_test(c)]


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_every_test_cell_has_a_budget(assignment):
    missing = [c.metadata["nbgrader"]["grade_id"] for c in graded_cells(assignment) if compiles.budget(c) is None]
    assert not missing, f"{assignment}: no ch4.compile_budget in the metadata of {missing}"


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_kernel_compiles_nothing_and_verdicts_stay_within_budget(assignment):
    tests = {c.metadata["nbgrader"]["grade_id"] for c in graded_cells(assignment)}
    cells = [c for c in compiles.measure(assignment) if c.cell in tests]
    assert {c.cell for c in cells} == tests, f"{assignment}: not every test cell ran"
    in_kernel = [f"{c.cell}: {c.count}" for c in cells if c.count]
    assert not in_kernel, f"{assignment}: test cells compiled in the kernel ({'; '.join(in_kernel)}): export only"
    over = [f"{c.cell}: {c.verdict_compiles} > {c.budget}" for c in cells if c.verdict_compiles > (c.budget or 0)]
    assert not over, (
        f"{assignment}: the judge compiled more than the budget ({'; '.join(over)}). Export fewer shapes, run a "
        "program on a batch instead of point by point, compute references in NumPy; raise a budget only with a reason"
    )
