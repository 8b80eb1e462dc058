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
  demo class once (`demo_run`, tests/demo_run.py, shared with the class report's tests): the
  reference and the untouched release of every assignment, and each assignment's first wrong,
  right and natural catalogue answer (proof/demo.py `picks`). The reference scores full marks,
  the blank 0, each pick as its kind. A picked entry's catalogue test scores it with the key of
  the student who handed it in, so its quick score must equal the pipeline's, flags included:
  what the quick path proves, the pipeline does too.
"""

import re

import pytest
from demo_run import GROUP, in_its_group
from helpers import unexplained_numbers

from grader import course
from grader.judging import verdict
from grader.pipeline import worker
from proof import answers, demo

ENTRIES = answers.entries()
VISIBLE = {a: answers.visible_tests(a) for a in course.ASSIGNMENTS}
HANDED_IN_BY = {(e.assignment, e.student): s for a in course.ASSIGNMENTS for s, e in demo.picks(a).items()}
EXPECTATIONS = demo.expectations()
CJK = re.compile(r"[\u4e00-\u9fff]")
JUDGING_FAILED = "评分程序判定时出错"  # kit/ch4judge.judge: the verdict itself crashed


def graded(demo_run, student: str, assignment: str):
    """(score, max_score, flags, notes) of a demo-class hand-in; a failure quotes the grader's
    own notes, so it says which test and why."""
    row = demo_run.long[(student, assignment)]
    notes = demo_run.journal[(student, assignment)]["notes"]
    return float(row["score"]), float(row["max_score"]), row["flags"], notes


def _entry_param(entry):
    picked = (entry.assignment, entry.student) in HANDED_IN_BY
    return pytest.param(entry, id=f"{entry.assignment}:{entry.student}: {entry.claim}", marks=[in_its_group] * picked)


CATALOGUE = [_entry_param(e) for e in ENTRIES]


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


@pytest.mark.parametrize("entry", CATALOGUE)
def test_catalogue_answer(entry, request):
    student = HANDED_IN_BY.get((entry.assignment, entry.student))
    demo_run = request.getfixturevalue("demo_run") if student else None
    seed = worker.student_seed(demo_run.out / "course", student, entry.assignment) if student else None
    got = answers.quick_score(entry.assignment, entry.answer, secret=seed)
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
        if entry.hints:  # the hinted tests fail, each with its hint, and no visible test blames another cause
            messages = {f.partition(": ")[0]: f.partition(": ")[2] for f in got.failed}
            # A hidden test's inputs come from the secret, which is new in every run (the demo class's
            # grading secret): whether it also meets the wrong stretch is a draw, so only the visible
            # tests must fail exactly as hinted (softplus's σ = 1 above 4 meets the five-call test's
            # points in about 4 draws of 10).
            extra = sorted((set(messages) - set(entry.hints)) & VISIBLE[entry.assignment])
            assert set(entry.hints) <= set(messages) and not extra, (
                f"{entry.claim}: expected {sorted(entry.hints)} to fail (and no other visible test): {why}"
            )
            for test, hint in entry.hints.items():
                assert hint in messages[test], f"{entry.claim}: {test} says {messages[test]!r}, not {hint!r}"
    else:
        assert got.points == got.max_points, f"{entry.claim}: scored {got.points}/{got.max_points}: {why}"
        assert not got.flags, f"{entry.claim}: flagged {got.flags}; a correct answer must carry no flag: {why}"
    # No number in a hidden test's message but what the course wrote, a count or a power of ten
    # (tests/test_hidden_values.py): nothing the judge computed from a hidden input.
    bodies = {t["id"]: t["body"] for t in verdict.test_cells(entry.assignment) if t["hidden"]}
    for test, message in got.messages.items():
        if test in bodies:
            assert not unexplained_numbers(message, bodies[test]), f"{entry.claim}: {test} says {message!r}"
    if student:  # the same answer, graded by the pipeline with the same key
        score, max_score, flags, notes = graded(demo_run, student, entry.assignment)
        quick, full = (got.points, got.max_points, " ".join(got.flags)), (score, max_score, flags)
        assert quick == full, f"{student} hands it in: quick path {quick} {got.failed}, pipeline {full}: {notes}"


@in_its_group
@pytest.mark.parametrize("case", EXPECTATIONS, ids=[f"{c.assignment}:{c.student}: {c.why}" for c in EXPECTATIONS])
def test_pipeline_verdict(demo_run, case):
    score, max_score, flags, notes = graded(demo_run, case.student, case.assignment)
    assert max_score >= 10, f"{case.assignment}: total points {max_score} < 10"
    if case.verdict == "full":
        assert score == max_score, f"{case.why}: scored {score}/{max_score}, expected full marks: {notes}"
        assert flags == "", f"{case.why}: flagged {flags!r}; a correct answer must carry no flag"
    elif case.verdict == "zero":
        assert score == 0, f"{case.why}: scored {score}/{max_score}, expected 0"
    else:
        assert score < max_score, f"{case.why}: scored full marks {score}/{max_score}; the tests miss it"


def test_every_test_that_reads_the_demo_run_is_in_its_group():
    """A test reading `demo_run` from another pytest-xdist group would grade the class a second
    time on another worker (minutes), and silently; a test in the group that does not read it only
    waits for it. Read from the parameters, so it holds whichever tests a run selects."""

    def groups(marks):
        return {mark.args[0] for mark in marks if mark.name == "xdist_group"}

    picked = [p.values[0] for p in CATALOGUE if groups(p.marks)]
    assert {(e.assignment, e.student) for e in picked} == set(HANDED_IN_BY), "a picked entry outside the group"
    assert len(picked) == len(HANDED_IN_BY) == 3 * len(course.ASSIGNMENTS)
    assert all(groups(p.marks) == {GROUP} for p in CATALOGUE if p.values[0] in picked)
    assert groups(test_pipeline_verdict.pytestmark) == {GROUP}
