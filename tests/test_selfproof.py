"""The graders are proven to tell right from wrong, through nbgrader's real autograde.

For every assignment: the reference scores full marks, the untouched release scores 0, every
wrong answer in grader/catalogue loses points (the test id names the requirement it violates)
and every alternative or natural-style correct answer scores full marks with no flag: an honest
student is never accused. All of it is one run of the grading
command over a class whose students are the catalogue entries.
"""

import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from grader import REPO, catalogue, classes, course

pytestmark = pytest.mark.xdist_group("selfproof")  # one worker owns the grading run
with tempfile.TemporaryDirectory() as scratch:  # the files are not needed, only the names for test ids
    EXPECTATIONS = classes.selfproof_class(Path(scratch))


@pytest.fixture(scope="module")
def grades(tmp_path_factory):
    submitted, out = tmp_path_factory.mktemp("class"), tmp_path_factory.mktemp("graded")
    classes.selfproof_class(submitted)
    command = [sys.executable, "-m", "grader", "grade", str(submitted), "--out", str(out), "--jobs", "2"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=1500)
    assert done.returncode == 0, done.stderr[-3000:]
    notes = {
        key: outcome["notes"] for key, outcome in json.loads((out / "course" / "outcomes.json").read_text()).items()
    }
    with open(out / "grades.csv", encoding="utf-8") as handle:
        return {  # a failure below quotes the grader's own notes, so it says which test and why
            (r["student_id"], r["assignment"]): (
                float(r["score"]),
                float(r["max_score"]),
                r["flags"],
                notes[f"{r['student_id']}/{r['assignment']}"],
            )
            for r in csv.DictReader(handle)
        }


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_catalogue_is_complete(assignment):
    entries = catalogue.entries(assignment)
    wrong = [e for e in entries if e.kind == "wrong"]
    right = [e for e in entries if e.kind == "right"]
    natural = [e for e in entries if e.kind == "natural"]
    assert len(wrong) >= 6, f"{assignment}: {len(wrong)} wrong answers in the catalogue, need at least 6"
    assert len(right) >= 3, f"{assignment}: {len(right)} alternative correct answers, need at least 3"
    assert len(natural) >= 3, f"{assignment}: {len(natural)} natural-style correct answers, need at least 3"
    unnamed = [e.path.name for e in entries if e.claim == "(no docstring)"]
    assert not unnamed, f"{assignment}: entries must say what they violate or which method they use: {unnamed}"


def test_natural_corpus_is_large_enough():
    assert len([e for e in catalogue.entries() if e.kind == "natural"]) >= 30


@pytest.mark.parametrize("case", EXPECTATIONS, ids=[f"{c.assignment}:{c.student}: {c.why}" for c in EXPECTATIONS])
def test_grader_verdict(grades, case):
    score, max_score, flags, notes = grades[(case.student, case.assignment)]
    assert max_score >= 10, f"{case.assignment}: total points {max_score} < 10"
    if case.verdict == "full":
        assert score == max_score, f"{case.why}: scored {score}/{max_score}, expected full marks: {notes}"
        assert flags == "", f"{case.why}: flagged {flags!r}; a correct answer must carry no flag"
    elif case.verdict == "zero":
        assert score == 0, f"{case.why}: scored {score}/{max_score}, expected 0"
    else:
        assert score < max_score, f"{case.why}: scored full marks {score}/{max_score}; the tests miss it"
