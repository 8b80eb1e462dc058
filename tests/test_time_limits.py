"""Each test has its own time limit (grader/course.py `time_limit`): an endless loop costs the tests it
hangs, each named on the feedback page with its limit, not the submission's ceiling.

An endless loop can sit in three places. In the answer cell, the per-cell timeout stops it
(tests/test_grading.py, `infinite-loop`). While a test cell traces the student's function, that
cell is stopped at its limit in the kernel (kernels/execute.TestTimeLimit). In an exported program,
the verdict is stopped at its limit in the judge, and the judge starts again on the tests after it
(judging/verdict.judge; tests/test_verdicts.py stops four in a row). The fixture
tests/fixtures/endless/residuals.py has the last two, each in one test; here it is graded with
limits of a few seconds, so the test costs seconds, not the real limits (every right_ and natural_
catalogue answer scores full marks under the real ones: tests/test_selfproof.py).
"""

import html
import re
from pathlib import Path

import nbformat
import pytest

from grader import course, messages
from grader.judging import quick, verdict
from grader.kernels import execute
from grader.pipeline import staging, worker
from proof import sample_classes

ASSIGNMENT = "residuals"
ENDLESS = Path(__file__).parent / "fixtures" / "endless" / f"{ASSIGNMENT}.py"
HANGS_IN_KERNEL, HANGS_IN_JUDGE = "test_visible_residuals", "test_hidden_residuals"
POINTS = {HANGS_IN_KERNEL: 2, HANGS_IN_JUDGE: 3}  # of 12
SHORT = 5  # seconds: a correct residuals test cell needs 0.4 s at most, its verdict 0.9 s of CPU


def page_text(page: bytes) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page.decode()))


def test_a_test_that_hangs_costs_its_own_points_and_the_page_names_it_with_its_limit(monkeypatch):
    monkeypatch.setitem(course.SLOWER_TESTS, ASSIGNMENT, course.TimeLimit(export=SHORT, verdict=SHORT))
    notebook = nbformat.writes(sample_classes.answered(ASSIGNMENT, ENDLESS.read_text(encoding="utf-8"))).encode()
    ceiling = course.CEILING_SECONDS
    task = worker.Task("endless", ASSIGNMENT, notebook, "0" * 64, staging.source_digest(ASSIGNMENT), 60, ceiling)
    graded = worker.grade_task(task)

    assert graded.result.succeeded, graded.result.notes
    assert messages.ceiling_reached(ceiling) not in graded.result.notes
    lost = {test for test, points in graded.scores.items() if points == 0}
    assert lost == {HANGS_IN_KERNEL, HANGS_IN_JUDGE} and sum(graded.scores.values()) == 12 - sum(POINTS.values()), (
        graded.scores
    )
    text = page_text(graded.feedback[f"{ASSIGNMENT}.html"])
    for test in (HANGS_IN_KERNEL, HANGS_IN_JUDGE):
        said = messages.verdict_line(False, 0, POINTS[test], messages.test_timed_out(test, SHORT)).strip()
        assert said in text and f"测试 {test} 超过了它的时间上限 {SHORT} 秒" in said, text[-3000:]
    assert text.count("评分程序判定：✅ 通过") == len(graded.scores) - len(POINTS), text[-3000:]
    # the kernel's stop shows as one line, not the interrupt's traceback through the kit
    assert text.count(messages.test_stopped(SHORT)) == 1 and "KeyboardInterrupt" not in text, text[-3000:]


def test_the_quick_path_stops_a_test_cell_at_its_limit_and_runs_the_rest(monkeypatch):
    """`python -m proof try` and the self-proof run test cells as grading does (their own client)."""
    monkeypatch.setitem(course.SLOWER_TESTS, f"{ASSIGNMENT}/loops", course.TimeLimit(export=2, verdict=2))
    test_cell = nbformat.v4.new_code_cell("while True:\n    pass")
    test_cell.metadata["nbgrader"] = {"grade": True, "grade_id": "loops", "points": 1}
    nb = nbformat.v4.new_notebook(cells=[test_cell, nbformat.v4.new_code_cell("print('after')")])
    quick.run_in_kernel(nb, ASSIGNMENT)
    assert [(o.output_type, o.get("ename"), o.get("evalue")) for o in nb.cells[0].outputs] == [
        ("error", execute.TIMED_OUT, "2")
    ]
    assert nb.cells[1].outputs[0]["text"] == "after\n"
    programs, anomalies = verdict.read_programs(nb)
    assert programs.stopped == {"loops": 2.0} and not programs and not anomalies


@pytest.mark.parametrize("key", sorted(course.SLOWER_TESTS))
def test_each_longer_limit_names_a_test_that_exists(key):
    """A renamed test or exercise would silently lose the time its correct answers need."""
    assignment, _, test = key.partition("/")
    assert assignment in course.ASSIGNMENTS, key
    assert not test or test in {t["id"] for t in verdict.test_cells(assignment)}, key
