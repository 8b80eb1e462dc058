"""The graders are proven to tell right from wrong.

* Every catalogue entry (proof/catalogue) is scored the way the grader scores it, one test each,
  spread over the pytest workers: a fresh kernel runs the notebook with that answer and exports
  its functions, and the judge runs the verdicts on the programs (`answers.quick_score`). A
  wrong answer must lose points (the test id names the requirement it violates) and fail at least
  one *visible* test, so that a student who passes the visible tests is not surprised at grading
  (an entry no fixed input can catch carries a reasoned `# visible-exempt:` line, see
  tests/test_visible_coverage.py); a right or natural-style answer must score full marks with no
  flag: an honest student is never accused.
* The real pipeline (`python -m grader grade`: nbgrader, the sandbox, the gradebook) grades the
  reference and the untouched release of every assignment, and a sample of catalogue entries
  (each assignment's first wrong and first natural one). The reference scores full marks, the
  blank 0, and the quick path, given each sampled student's own seed, must reproduce the
  pipeline's score and flags exactly: so what the quick path proves, the pipeline does too.
"""

import csv
import json
import re

import pytest
from helpers import grade_cli

from grader import course
from grader.pipeline import worker
from proof import answers, sample_classes

ENTRIES = answers.entries()
VISIBLE = {a: answers.visible_tests(a) for a in course.ASSIGNMENTS}
SAMPLE = [
    next(e for e in answers.entries(a) if e.kind == kind) for a in course.ASSIGNMENTS for kind in ("wrong", "natural")
]
EXPECTATIONS = [expected for expected, _ in sample_classes.selfproof_cases(SAMPLE)]  # ids only; nothing written
pipeline_run = pytest.mark.xdist_group("selfproof")  # one worker owns the grading run
CJK = re.compile(r"[\u4e00-\u9fff]")
JUDGING_FAILED = "评分程序判定时出错"  # kit/ch4judge.judge: the verdict itself crashed


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    submitted, out = tmp_path_factory.mktemp("class"), tmp_path_factory.mktemp("graded")
    sample_classes.selfproof_class(submitted, SAMPLE)
    done = grade_cli(submitted, out, timeout=1500)
    assert done.returncode == 0, done.stderr[-3000:]
    journal = (out / "course" / course.JOURNAL).read_text(encoding="utf-8").splitlines()
    notes = {f"{o['student']}/{o['assignment']}": o["notes"] for o in map(json.loads, journal)}
    with open(out / "grades.csv", encoding="utf-8") as handle:
        grades = {  # a failure below quotes the grader's own notes, so it says which test and why
            (r["student_id"], r["assignment"]): (
                float(r["score"]),
                float(r["max_score"]),
                r["flags"],
                notes[f"{r['student_id']}/{r['assignment']}"],
            )
            for r in csv.DictReader(handle)
        }
    return {"grades": grades, "course": out / "course"}


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_catalogue_is_complete(assignment):
    entries = answers.entries(assignment)
    wrong = [e for e in entries if e.kind == "wrong"]
    right = [e for e in entries if e.kind == "right"]
    natural = [e for e in entries if e.kind == "natural"]
    assert len(wrong) >= 6, f"{assignment}: {len(wrong)} wrong answers in the catalogue, need at least 6"
    assert len(right) >= 3, f"{assignment}: {len(right)} alternative correct answers, need at least 3"
    assert len(natural) >= 3, f"{assignment}: {len(natural)} natural-style correct answers, need at least 3"
    unnamed = [e.path.name for e in entries if e.claim == "(no docstring)"]
    assert not unnamed, f"{assignment}: entries must say what they violate or which method they use: {unnamed}"


def test_natural_corpus_is_large_enough():
    assert len([e for e in ENTRIES if e.kind == "natural"]) >= 30


@pytest.mark.parametrize("entry", ENTRIES, ids=[f"{e.assignment}:{e.student}: {e.claim}" for e in ENTRIES])
def test_catalogue_answer(entry):
    got = answers.quick_score(entry.assignment, entry.answer)
    assert got.max_points >= 10, f"{entry.assignment}: total points {got.max_points} < 10"
    why = "; ".join(got.notes + got.failed)
    if entry.kind == "wrong":
        assert got.points < got.max_points, f"{entry.claim}: full marks {got.points}; the tests miss it"
        caught = sorted({f.partition(":")[0] for f in got.failed} & VISIBLE[entry.assignment])
        if entry.visible_exemption:
            assert not caught, f"{entry.claim}: exempt from visible coverage, yet {caught} catch it: drop the exemption"
        else:
            assert caught, (
                f"{entry.claim}: passes every visible test, only hidden ones catch it ({why}): "
                "a student who passes the visible tests would lose points unwarned; add a visible test"
            )
        # What the student reads first under each failing test cell: `❌ <test> 未通过：` and this
        # line (kit/ch4check.TestFailed), a Chinese sentence, never a crash of the verdict itself.
        for failure in got.failed:
            test, _, first_line = failure.partition(": ")
            assert CJK.search(first_line) and not first_line.startswith(JUDGING_FAILED), (
                f"{entry.claim}: {test} fails without a Chinese verdict first: {first_line!r}"
            )
        if entry.hints:  # exactly the hinted tests fail, each with its hint: no test blames another cause
            messages = {f.partition(": ")[0]: f.partition(": ")[2] for f in got.failed}
            assert set(messages) == set(entry.hints), f"{entry.claim}: expected {sorted(entry.hints)} to fail: {why}"
            for test, hint in entry.hints.items():
                assert hint in messages[test], f"{entry.claim}: {test} says {messages[test]!r}, not {hint!r}"
    else:
        assert got.points == got.max_points, f"{entry.claim}: scored {got.points}/{got.max_points}: {why}"
        assert not got.flags, f"{entry.claim}: flagged {got.flags}; a correct answer must carry no flag: {why}"


@pipeline_run
@pytest.mark.parametrize("case", EXPECTATIONS, ids=[f"{c.assignment}:{c.student}: {c.why}" for c in EXPECTATIONS])
def test_pipeline_verdict(pipeline, case):
    score, max_score, flags, notes = pipeline["grades"][(case.student, case.assignment)]
    assert max_score >= 10, f"{case.assignment}: total points {max_score} < 10"
    if case.verdict == "full":
        assert score == max_score, f"{case.why}: scored {score}/{max_score}, expected full marks: {notes}"
        assert flags == "", f"{case.why}: flagged {flags!r}; a correct answer must carry no flag"
    elif case.verdict == "zero":
        assert score == 0, f"{case.why}: scored {score}/{max_score}, expected 0"
    else:
        assert score < max_score, f"{case.why}: scored full marks {score}/{max_score}; the tests miss it"


@pipeline_run
@pytest.mark.parametrize("entry", SAMPLE, ids=[f"{e.assignment}:{e.student}" for e in SAMPLE])
def test_quick_path_agrees_with_the_pipeline(pipeline, entry):
    score, max_score, flags, notes = pipeline["grades"][(entry.student, entry.assignment)]
    seed = worker.student_seed(pipeline["course"], entry.student, entry.assignment)
    got = answers.quick_score(entry.assignment, entry.answer, secret=seed)
    quick, full = (got.points, got.max_points, " ".join(got.flags)), (score, max_score, flags)
    assert quick == full, f"quick path {quick} {got.failed}, pipeline {full}: {notes}"
