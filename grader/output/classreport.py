"""The class report (#33): what the whole class got right and wrong, for the instructor.

Written into OUT/report/ at the end of every grading run and by `python -m grader report OUT_DIR`,
always from what the run left on disk, so both give the same report:

* which submissions: the rows of OUT/grades.csv, with their notes and flags from the run's
  journal (OUT/course/outcomes.jsonl);
* whether each test passed: the gradebook (a grade Formgrader changed counts as changed; one
  still waiting for a person is left out);
* why it failed: the verdict the grader wrote under each test cell of the autograded notebook,
  and what was answered: its nbgrader solution cells;
* what was found and not graded (grader/pipeline/discovery.py): the rows of grades.csv flagged
  `not-graded`, with the reason and the likely fix;
* what changed since the run before: the history in the gradebook's database
  (grader/output/history.py): scores before and after, and pairs no longer listed as copied.

What it reads is summarised here into the numbers class.json keeps; the page, tests.csv and the
figures are drawn from them by grader/output/classreport_page.py, which treats everything a student
wrote as data. A notebook that cannot be read is skipped with a note on the page. The report never
changes a score.
"""

from __future__ import annotations

import csv
import functools
import io
import itertools
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from grader import course, i18n, messages
from grader.i18n import _
from grader.judging import verdict
from grader.output import classreport_page, history, report

FOLDER = "report"  # OUT/report/
# A verdict's message with its numbers (tolerances, sizes, values a student's inputs gave) blanked:
# the same failure of two students is one group.
NUMBER = re.compile(r"[-+]?\d[\d.]*(?:[eE][-+]?\d+)?|\b(?:nan|inf)\b", re.IGNORECASE)
NO_VERDICT = "（评分后的 notebook 里没有这个测试的判定）"
HARDEST = 3  # tests named as the hardest of an assignment

# Copied answers: copydetect (Stanford MOSS's winnowing, on Pygments tokens with every name
# replaced by one letter and comments dropped). k-grams of NOISE_CHARS filtered characters,
# copydetect's default; every k-gram kept (window 1): winnowing picks by Python's per-process
# string hash, so the same answers could score differently run to run, and answers are small.
# A pair is listed when one answer has SIMILAR_AT of its k-gram characters in the other:
# docs/class-report.md has the measurements behind the number.
NOISE_CHARS = 25
SIMILAR_AT = 0.93
MIN_ANSWER_CHARS = 2 * NOISE_CHARS  # a shorter answer is all common skeleton: nothing to compare


@dataclass
class Submission:
    student: str
    assignment: str
    score: float
    max_score: float
    graded: bool
    flags: list[str]
    notes: list[str]
    passed: dict[str, bool] = field(default_factory=dict)  # test -> passed, for grades no person awaits
    messages: dict[str, str] = field(default_factory=dict)  # test -> the grader's message, for failed ones
    answer: str = ""
    extra_notebooks: list[str] = field(default_factory=list)  # handed in beside the graded one, not graded
    not_graded: str = ""  # not a submission (a reason of grader/pipeline/discovery.py): no score
    fix: str = ""  # then the assignment it most likely is


def write(out: Path) -> Path:
    """OUT/report/index.html with its figures, tests.csv and class.json; returns the page."""
    return _write(Path(out))[0]


def write_after_grading(out: Path, echo=print) -> list[dict]:
    """#33: OUT/report/ at the end of a grading run, and the pairs it lists as looking copied
    ({"assignment", "students", "similarity"}: the run keeps them in its history). The grades are
    written by then: a report that cannot be made is one line on stderr, never a failed run."""
    import sys

    try:
        page, summary = _write(Path(out))
    except Exception as err:  # noqa: BLE001 - any failure of the report leaves the grades as they are
        reason = report.escaped(str(err))[:300]  # it may quote a student's id
        failed = _("grader grade: the class report was not written: {error}: {reason}")
        print(failed.format(error=type(err).__name__, reason=reason), file=sys.stderr)
        return []
    echo(_("  class report: {page}").format(page=page))
    return listed_pairs(summary)


def listed_pairs(summary: dict) -> list[dict]:
    return [
        {"assignment": a["assignment"], "students": pair["students"], "similarity": pair["similarity"]}
        for a in summary["assignments"]
        for pair in a["similar"]
    ]


def _write(out: Path) -> tuple[Path, dict]:
    folder = out / FOLDER
    shutil.rmtree(folder / "figures", ignore_errors=True)  # no figure of an earlier report stays behind
    (folder / "figures").mkdir(parents=True)
    skipped: list[str] = []
    everything = recorded_submissions(out)
    submissions = [s for s in everything if not s.not_graded]
    _read_gradebook(out / "course", submissions, skipped)
    for submission in submissions:
        _read_autograded(out / "course", submission, skipped)
    assignments = []
    for name in course.ASSIGNMENTS:
        mine = [s for s in submissions if s.assignment == name]
        if mine:
            assignments.append(summarise(name, mine))
            classreport_page.draw_figures(folder / "figures", assignments[-1])
    summary = {
        "assignments": assignments,
        "students": students(everything),
        "not_graded": [
            {"student": s.student, "found": s.assignment, "reason": s.not_graded, "fix": s.fix}
            for s in everything
            if s.not_graded
        ],
        "history": _history(out / "course", assignments),
        "skipped": skipped,
    }
    report.write_whole(folder / "class.json", json.dumps(summary, ensure_ascii=False, indent=1))
    classreport_page.write_tests_csv(folder / "tests.csv", assignments)
    page = folder / "index.html"
    # figures drawn with Chinese labels and no Chinese font: boxes (English labels need none)
    boxes = bool(assignments) and i18n.language() == "zh" and classreport_page.cjk_font() is None
    redraw = f".venv/bin/python -m grader report {out.resolve()}" if boxes else ""
    report.write_whole(page, classreport_page.render(summary, redraw))
    return page, summary


def _has_gradebook(root: Path) -> bool:
    return (root / "gradebook.db").exists() or (root / course.DB_URL_FILE).exists()


def _history(root: Path, assignments: list[dict]) -> dict | None:
    """What changed since the run before (history.changes), None when there is no history."""
    if not _has_gradebook(root):
        return None
    now = [{"assignment": a["assignment"], **pair} for a in assignments for pair in a["similar"]]
    return history.changes(course.db_url(root), now)


# —— reading the graded class ——


def recorded_submissions(out: Path) -> list[Submission]:
    """The submissions of OUT/grades.csv (the last run), as the run's journal recorded them."""
    with open(out / "grades.csv", encoding="utf-8", newline="") as handle:
        rows = {(row["student_id"], row["assignment"]) for row in csv.DictReader(handle)}
    found = {}
    for line in (out / "course" / course.JOURNAL).read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # the last line of a run killed mid-write
        key = (report.spreadsheet_cell(entry["student"]), report.spreadsheet_cell(entry["assignment"]))
        if key in rows:  # grades.csv holds ids as a spreadsheet must see them
            found[(entry["student"], entry["assignment"])] = entry
    fields = ("student", "assignment", "score", "max_score", "graded", "flags", "notes")
    later = ("extra_notebooks", "not_graded", "fix")  # journals of earlier versions may lack them
    return [
        Submission(
            **{name: found[key][name] for name in fields}, **{k: found[key][k] for k in later if k in found[key]}
        )
        for key in sorted(found)
    ]


def _read_gradebook(root: Path, submissions: list[Submission], skipped: list[str]) -> None:
    if not _has_gradebook(root):
        skipped.append({"submission": "", "reason": "no_gradebook", "error": ""})
        return
    from nbgrader.api import SubmittedAssignment

    wanted = {(s.student, s.assignment): s for s in submissions}
    with course.gradebook(root) as gb:
        for row in gb.db.query(SubmittedAssignment):
            submission = wanted.get((row.student.id, row.assignment.name))
            for grade in [g for notebook in row.notebooks for g in notebook.grades] if submission else []:
                if not grade.needs_manual_grade:  # one that waits for a person says nothing yet
                    submission.passed[grade.name] = grade.score >= grade.max_score


def _read_autograded(root: Path, submission: Submission, skipped: list[str]) -> None:
    """The failed tests' messages and the answer cells; a notebook that cannot be read is skipped."""
    path = course.notebook_path(root / "autograded" / submission.student, submission.assignment)
    if not (submission.graded or path.exists()):
        return  # a result refused from a worker: nothing was kept, the notes say why
    points = dict(release_tests(submission.assignment))
    try:
        nb = nbformat.read(path, as_version=4)
        answer = []
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader")
            meta = meta if isinstance(meta, dict) else {}
            test = meta.get("grade_id")
            if cell.cell_type == "code" and meta.get("solution"):
                answer.append(cell.source)
            elif verdict.is_test(cell) and isinstance(test, str) and test in points:
                found = failure_message(cell, points[test])
                if found is not None:
                    submission.messages[test] = found
        submission.answer = "\n".join(answer)
    except Exception as err:  # noqa: BLE001 - one broken notebook never stops the report
        where = f"{submission.student}/{submission.assignment}"
        skipped.append({"submission": where, "reason": "unreadable", "error": type(err).__name__})


def failure_message(cell, points: float) -> str | None:
    """The message of the grader's verdict under a test cell (the last one there) if it failed, else None."""
    passed = messages.verdict_line(True, points, points, "")
    head, _, tail = messages.verdict_line(False, 0.0, points, "\0").partition("\0")
    for out in reversed(cell.get("outputs", [])):
        text = out.get("text") if out.get("output_type") == "stream" else None
        if text == passed:
            return None
        if isinstance(text, str) and text.startswith(head) and text.endswith(tail):
            return text[len(head) : len(text) - len(tail)]
    return None


@functools.cache
def release_tests(assignment: str) -> tuple[tuple[str, float], ...]:
    """(grade id, points) of each test cell, in the order students see them."""
    nb = nbformat.read(course.notebook_path(course.EXERCISES, assignment), as_version=4)
    tests = [c.metadata["nbgrader"] for c in nb.cells if verdict.is_test(c)]
    return tuple((meta["grade_id"], float(meta["points"])) for meta in tests)


def released_answer(assignment: str) -> str:
    nb = nbformat.read(course.notebook_path(course.EXERCISES, assignment), as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code" and verdict._meta(c).get("solution"))


# —— the numbers ——


def summarise(assignment: str, submissions: list[Submission]) -> dict:
    """One assignment's numbers, as class.json keeps them and the page shows them."""
    hidden = verdict.hidden_tests(assignment)
    tests = []
    for test, points in release_tests(assignment):
        decided = [s for s in submissions if test in s.passed]
        failed = [s for s in decided if not s.passed[test]]
        rate = round((len(decided) - len(failed)) / len(decided), 4) if decided else None
        failures = [(s.student, s.messages.get(test, NO_VERDICT)) for s in failed]
        tests.append(
            {
                "test": test,
                "points": points,
                "hidden": test in hidden,
                "passed": len(decided) - len(failed),
                "failed": len(failed),
                "pass_rate": rate,
                "messages": common_messages(failures),
            }
        )
    rated = sorted((t for t in tests if t["pass_rate"] is not None and t["pass_rate"] < 1), key=_pass_rate)
    scores = sorted(s.score for s in submissions)
    return {
        "assignment": assignment,
        "max_score": max(s.max_score for s in submissions),
        "submissions": len(submissions),
        "graded": sum(s.graded for s in submissions),
        "mean": round(sum(scores) / len(scores), 2),
        "scores": scores,
        "tests": tests,
        "hardest": [{"test": t["test"], "pass_rate": t["pass_rate"]} for t in rated[:HARDEST]],
        "needs_person": [_needs_person(s) for s in submissions if _reasons(s)],
        "flagged": sorted(s.student for s in submissions if _flags(s)),
        "extra_notebooks": [
            {"student": s.student, "notebooks": s.extra_notebooks, "score": s.score, "max_score": s.max_score}
            for s in submissions
            if s.extra_notebooks
        ],
        "similar": similar_pairs({s.student: s.answer for s in submissions}, released_answer(assignment)),
    }


def _pass_rate(test: dict) -> float:
    return test["pass_rate"]


def common_messages(failures: list[tuple[str, str]]) -> list[dict]:
    """Failures grouped by their message with the numbers blanked, the biggest group first."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for student, message in sorted(failures):
        groups.setdefault(NUMBER.sub("#", message), []).append((student, message))
    found = [{"count": len(g), "example": g[0][1], "students": [s for s, _ in g]} for g in groups.values()]
    return sorted(found, key=lambda group: -group["count"])


def _flags(s: Submission) -> list[str]:
    """The flags a person should look at ("unsandboxed" is about the machine, not the student)."""
    return [f for f in s.flags if f != "unsandboxed"]


def _reasons(s: Submission) -> list[str]:
    """Why a person should look at a submission, as codes the page words in the reader's language:
    "flagged" (see its flags), "ungraded" (nbgrader produced no score), "zero_with_notes"."""
    reasons = ["flagged"] if _flags(s) else []
    if not s.graded:
        reasons.append("ungraded")
    elif s.score == 0 and s.notes:
        reasons.append("zero_with_notes")
    return reasons


def _needs_person(s: Submission) -> dict:
    return {
        "student": s.student,
        "score": s.score,
        "max_score": s.max_score,
        "why": _reasons(s),
        "flags": _flags(s),
        "notes": s.notes,
    }


def students(submissions: list[Submission]) -> list[dict]:
    """One row per student of grades.csv, for the page's table of the class: each assignment's score
    (None where nothing was handed in or graded), the total over the assignments of the run, and
    the flags a person should look at, assignment by assignment, and what was not graded."""
    graded = [s for s in submissions if not s.not_graded]
    names = [a for a in course.ASSIGNMENTS if any(s.assignment == a for s in graded)]
    possible = sum(max(s.max_score for s in graded if s.assignment == a) for a in names)
    rows = []
    for student in sorted({s.student for s in submissions if s.student}):  # "": a file outside any student folder
        mine = {s.assignment: s for s in graded if s.student == student}
        missed = sorted(s.assignment for s in submissions if s.student == student and s.not_graded)
        rows.append(
            {
                "student": student,
                "scores": [mine[a].score if a in mine else None for a in names],
                "total": sum(s.score for s in mine.values()) if mine else None,  # nothing graded: no score, not 0
                "possible": possible,
                "flags": {a: _flags(s) for a, s in mine.items() if _flags(s)},
                "not_graded": missed,  # what was found in the student's folder and not graded
                "needs_person": sorted(a for a, s in mine.items() if _reasons(s)),
                "extra_notebooks": sorted(a for a, s in mine.items() if s.extra_notebooks),
            }
        )
    return rows


def similar_pairs(answers: dict[str, str], released: str) -> list[dict]:
    """Pairs of students whose answers look copied, most similar first; the released text ignored."""
    import numpy as np

    classreport_page.use_agg()  # copydetect imports pyplot: the figures' backend, not a display
    from copydetect import CodeFingerprint, compare_files

    def fingerprint(text: str, boilerplate=None):
        return CodeFingerprint("answer.py", NOISE_CHARS, 1, boilerplate, language="python", fp=io.StringIO(text))

    stub = np.array(sorted(fingerprint(released).hashes), dtype=np.int64)
    prints = {student: fingerprint(text, stub) for student, text in answers.items()}
    prints = {student: p for student, p in prints.items() if p.token_coverage >= MIN_ANSWER_CHARS}
    pairs = []
    for a, b in itertools.combinations(sorted(prints), 2):
        if prints[a].hashes & prints[b].hashes:
            _, shares, _ = compare_files(prints[a], prints[b])
            if max(shares) >= SIMILAR_AT:
                shares = [round(float(share), 3) for share in shares]
                pairs.append({"students": [a, b], "similarity": max(shares), "shares": shares})
    return sorted(pairs, key=lambda pair: -pair["similarity"])
