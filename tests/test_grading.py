"""The grading command on a class of broken submissions next to correct ones.

One real run of `python -m grader grade` (module fixture), then one test per submission: the
score it must get and the reason its feedback and the score table must give.
"""

import csv
import hashlib
import html
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader import REPO, sample_classes

ASSIGNMENT = "safe_norm"  # quick to grade; the broken cases do not depend on the assignment
CELL_TIMEOUT, CEILING = 20, 60  # small limits keep the loop and slow cases short
pytestmark = pytest.mark.xdist_group("grading")  # one worker owns the run below


def grade_cli(submitted, out, *extra):
    # The crashing cases need os and ctypes, which the tampering scan would stop before they run
    # (tests/test_tampering.py covers that); here the kernels must really crash.
    command = [sys.executable, "-m", "grader", "grade", str(submitted), "--out", str(out), "--jobs", "2"]
    command += ["--cell-timeout", str(CELL_TIMEOUT), "--ceiling", str(CEILING), "--no-code-scan", *extra]
    return subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=900)


def checksums(folder: Path) -> dict:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def read_grades(out: Path) -> dict:
    with open(out / "grades.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return {(r["student_id"], r["assignment"]): (float(r["score"]), float(r["max_score"])) for r in rows}


CASES = [expectation for expectation, _ in sample_classes.broken_cases(ASSIGNMENT)]  # test ids; nothing written


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    submitted = tmp_path_factory.mktemp("submitted")
    sample_classes.broken_class(submitted, ASSIGNMENT)
    (submitted / "ok-1" / "no_such_assignment").mkdir()
    (submitted / "ok-1" / "no_such_assignment" / "x.ipynb").write_text("{}")
    before = checksums(submitted)
    out = tmp_path_factory.mktemp("out")
    done = grade_cli(submitted, out)
    return {"submitted": submitted, "out": out, "done": done, "before": before}


def test_run_completes_and_leaves_submissions_untouched(graded):
    assert graded["done"].returncode == 0, graded["done"].stderr[-3000:]
    assert checksums(graded["submitted"]) == graded["before"], "the grader changed SUBMITTED_DIR"
    assert "unknown assignment" in graded["done"].stdout


def test_csv_has_the_contract_header_and_a_row_per_submission(graded):
    header = (graded["out"] / "grades.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header == "student_id,assignment,score,max_score,flags"  # flags: added after the contract's four
    assert set(read_grades(graded["out"])) == {(c.student, c.assignment) for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=[c.student for c in CASES])
def test_each_submission_gets_its_score_and_reason(graded, case):
    score, max_score = read_grades(graded["out"])[(case.student, case.assignment)]
    assert max_score >= 10
    expected = {"full": max_score, "zero": 0.0}.get(case.verdict)
    if expected is not None:
        assert score == expected, f"{case.why}: scored {score}/{max_score}"
    feedback = list((graded["out"] / "feedback" / case.student / case.assignment).glob("*.html"))
    assert feedback, f"{case.why}: no feedback page"
    if case.note:
        assert case.note in feedback[0].read_text(encoding="utf-8"), f"{case.why}: feedback lacks '{case.note}'"
        table_line = next(line for line in graded["done"].stdout.splitlines() if line.startswith(case.student + " "))
        assert case.note in table_line, f"{case.why}: score table lacks '{case.note}'"


def test_rerun_is_idempotent_and_grades_only_new_work(graded, tmp_path):
    first = read_grades(graded["out"])
    again = grade_cli(graded["submitted"], graded["out"])
    assert again.returncode == 0 and "0 to autograde" in again.stdout, again.stdout[-2000:]
    assert read_grades(graded["out"]) == first
    extended = tmp_path / "submitted"
    shutil.copytree(graded["submitted"], extended, symlinks=True)  # links stay links, never followed
    shutil.copytree(extended / "ok-1", extended / "ok-2")
    third = grade_cli(extended, graded["out"])
    assert third.returncode == 0 and "1 to autograde" in third.stdout, third.stdout[-2000:]
    grades = read_grades(graded["out"])
    assert grades[("ok-2", ASSIGNMENT)] == grades[("ok-1", ASSIGNMENT)]


@pytest.mark.parametrize(
    "layout, message",
    [
        ("missing", "no such folder"),
        ("empty", "nothing to grade"),
        ("unknown", "nothing to grade"),
    ],
)
def test_unusable_input_is_one_line_and_nonzero(tmp_path, layout, message):
    submitted = tmp_path / "submitted"
    if layout != "missing":
        submitted.mkdir()
    if layout == "unknown":
        (submitted / "s1" / "not_an_assignment").mkdir(parents=True)
    done = grade_cli(submitted, tmp_path / "out")
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_feedback_hides_hidden_test_code(graded):
    from grader.edition import secret_passages

    page = next((graded["out"] / "feedback" / "ok-1" / ASSIGNMENT).glob("*.html")).read_text(encoding="utf-8")
    assert "BEGIN HIDDEN TESTS" not in page
    hidden = [p for p in secret_passages(ASSIGNMENT, kinds=("HIDDEN TESTS",)) if "\n" not in p]
    assert hidden, "found no hidden-test lines to look for"
    shown = [line for line in hidden if html.escape(line) in page or line in page]
    assert not shown, f"feedback shows hidden-test lines: {shown[:3]}"
