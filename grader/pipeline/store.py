"""A result stored: each worker's result checked (`refusal`), then put into OUT_DIR/course and the
gradebook in one transaction per submission (`store`, `record_submission`), and journaled
(`journal`), so an interrupted run resumes. grader/grade.py calls these in the coordinator; no
other code writes the gradebook.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

from grader import course
from grader.output import report
from grader.pipeline import worker


@dataclass
class Outcome:
    student: str
    assignment: str
    score: float = 0.0
    max_score: float = 0.0
    notes: list[str] = field(default_factory=list)
    digest: str = ""
    graded: bool = False  # False: nbgrader produced no score (the notes say why)
    flags: list[str] = field(default_factory=list)  # "tampering", "rules", "unsandboxed": for the instructor
    timestamp: str = ""  # when it was handed in: nbgrader's timestamp.txt, if the exchange wrote one
    extra_notebooks: list[str] = field(default_factory=list)  # handed in beside the graded one, not graded


FLAGS = {"tampering", "rules", "unsandboxed"}
MAX_NOTES, MAX_NOTE_CHARS = 100, 4000
MAX_RESULT_BYTES = 256 * 2**20  # the autograded notebook and its feedback page together


def test_points(assignment: str) -> dict[str, float]:
    """{grade_id: points} of the assignment's test cells, from its source notebook."""
    nb = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
    meta = [c.metadata.get("nbgrader", {}) for c in nb.cells]
    return {m["grade_id"]: float(m["points"]) for m in meta if m.get("grade")}


def refusal(graded, assignment: str, points: dict[str, float]) -> str | None:
    """Why a worker's result cannot be stored (one line), or None when it is well-formed.

    Dask has unpickled it already, and only holders of a course certificate can be workers; this
    second check keeps a rogue or broken worker from storing more than an honest result could
    say: exactly a Graded of a Result, for each test of this assignment and no other a score
    within its points, known flags, short notes, bounded bytes, and no page but the notebook's."""
    try:
        return _refusal(graded, assignment, points)
    except Exception as err:  # noqa: BLE001 - e.g. a forged object without one of the fields
        return f"a malformed result ({type(err).__name__})"


def _refusal(graded, assignment: str, points: dict[str, float]) -> str | None:
    if type(graded) is not worker.Graded or type(graded.result) is not worker.Result:
        return f"not a worker.Graded result but a {type(graded).__name__}"
    result, scores, pages = graded.result, graded.scores, graded.feedback
    if type(result.succeeded) is not bool or type(graded.sandboxed) is not bool:
        return "succeeded and sandboxed must be True or False"
    if type(result.flags) is not list or not all(type(f) is str and f in FLAGS for f in result.flags):
        return f"flags other than {sorted(FLAGS)}"
    if type(result.notes) is not list or len(result.notes) > MAX_NOTES:
        return f"notes must be a list of at most {MAX_NOTES}"
    if not all(type(n) is str and len(n) <= MAX_NOTE_CHARS for n in result.notes):
        return f"notes must be strings of at most {MAX_NOTE_CHARS} characters"
    if type(scores) is not dict or type(pages) is not dict or not all(type(k) is str for k in [*scores, *pages]):
        return "scores and feedback pages must be dicts with string keys"
    if not result.succeeded:
        return None if not scores and not pages and graded.autograded is None else "a failed result carries scores"
    if set(scores) != set(points):
        unknown, missing = sorted(set(scores) - set(points)), sorted(set(points) - set(scores))
        return f"scores for unknown tests {ascii(unknown)[:200]}" if unknown else f"no score for {missing}"
    for test, score in scores.items():
        if type(score) not in (float, int):
            return f"the score for {test} is a {type(score).__name__}"
        if not 0 <= score <= points[test]:  # NaN fails too
            shown = f"{score:.6g}" if type(score) is float else "an integer"
            return f"the score for {test} is {shown}, outside 0..{points[test]:g}"
    if type(graded.autograded) is not bytes or not all(type(p) is bytes for p in pages.values()):
        return "the autograded notebook and the feedback pages must be bytes"
    if not set(pages) <= {f"{assignment}.html"}:
        return f"feedback pages other than {assignment}.html: {ascii(sorted(pages))[:200]}"
    if len(graded.autograded) + sum(len(p) for p in pages.values()) > MAX_RESULT_BYTES:
        return f"more than {MAX_RESULT_BYTES >> 20} MiB of notebook and feedback"
    return None


def store(root: Path, graded: worker.Graded | None, outcome: Outcome, review: bool = True) -> None:
    """Put one submission's result into OUT_DIR/course and the gradebook, replacing any earlier one.
    A submission that earned no score (unreadable, a broken rule, a crash) is recorded with 0 and
    the reason, marked for a person to review in Formgrader (`review=False`: nothing recorded)."""
    student, assignment = outcome.student, outcome.assignment
    autograded = course.notebook_path(root / "autograded" / student, assignment)
    pages = root / report.WORKER_FEEDBACK / student / assignment
    shutil.rmtree(autograded.parent, ignore_errors=True)
    shutil.rmtree(pages, ignore_errors=True)
    succeeded = graded is not None and graded.result.succeeded
    if graded is not None:
        outcome.notes += graded.result.notes
        outcome.flags = graded.result.flags + outcome.flags
        if not graded.sandboxed and "unsandboxed" not in outcome.flags:
            outcome.flags.append("unsandboxed")
    if succeeded:
        autograded.parent.mkdir(parents=True)
        autograded.write_bytes(graded.autograded)
        pages.mkdir(parents=True)
        for name, page in graded.feedback.items():
            (pages / Path(name).name).write_bytes(page)
    elif review:
        report.write_review_notebook(root, outcome)
    flagged = not succeeded or any(flag != "unsandboxed" for flag in outcome.flags)
    with course.gradebook(root) as gb:
        outcome.max_score = gb.find_assignment(assignment).max_score
        _add_student(gb, student)
        scores = graded.scores if succeeded else None
        reason = "\n".join(outcome.notes) if review and (flagged or outcome.notes) else None
        record_submission(gb, student, assignment, scores, outcome.timestamp, reason, flagged)
        if succeeded:
            outcome.score, outcome.graded = gb.find_submission(assignment, student).score, True


def _add_student(gb, student: str) -> None:
    """Formgrader shows students as "last name, first name": on a shared server the Unix account's
    full name, else the id. Names already in the gradebook (an imported roster) are kept."""
    import pwd

    from nbgrader.api import MissingEntry

    try:
        gb.find_student(student)
        return
    except MissingEntry:
        pass
    try:
        full = pwd.getpwnam(student).pw_gecos.split(",")[0].strip()
    except KeyError:
        full = ""
    first, _, last = (full or student).rpartition(" ")
    gb.add_student(student, first_name=first, last_name=last)


def record_submission(
    gb,
    student: str,
    assignment: str,
    scores: dict[str, float] | None,
    timestamp: str = "",
    reason: str | None = None,
    flagged: bool = False,
) -> None:
    """Replace the student's submission of `assignment` by one with these autograded scores, in
    one transaction: a retried task or a re-run never counts twice or half. Without scores, a
    submission at 0 that needs a person (every grade marked for manual grading), or, without a
    reason either, none. The reason (the grader's notes) is the answer cell's comment, the first
    thing Formgrader shows beside the student's code; `flagged` raises Formgrader's flag."""
    from nbgrader.api import Comment, Grade, MissingEntry, SubmittedAssignment, SubmittedNotebook
    from nbgrader.utils import parse_utc

    db = gb.db
    try:
        try:
            old = gb.find_submission(assignment, student)
        except MissingEntry:
            old = None
        if old is not None:
            for notebook in old.notebooks:
                for row in [*notebook.grades, *notebook.comments, notebook]:
                    db.delete(row)
            db.delete(old)
            db.flush()
        if scores is not None or reason is not None:
            with db.no_autoflush:  # every row is made first, then added and flushed together
                submission = SubmittedAssignment(
                    assignment=gb.find_assignment(assignment),
                    student=gb.find_student(student),
                    timestamp=parse_utc(timestamp) if timestamp else None,
                )
                rows = [submission]
                for notebook in submission.assignment.notebooks:
                    submitted = SubmittedNotebook(notebook=notebook, assignment=submission, flagged=flagged)
                    rows.append(submitted)
                    for cell in notebook.grade_cells:
                        score, unscored = (scores or {}).get(cell.name, 0.0), scores is None
                        rows.append(
                            Grade(cell_id=cell.id, notebook=submitted, auto_score=score, needs_manual_grade=unscored)
                        )
                    rows += [
                        Comment(cell_id=cell.id, notebook=submitted, auto_comment=reason)
                        for cell in notebook.solution_cells
                    ]
                db.add_all(rows)
        db.commit()
    except BaseException:
        db.rollback()
        raise


def journal(root: Path, outcome: Outcome) -> None:
    """One line per finished submission, appended at once: an interrupted run loses nothing done."""
    with open(root / course.JOURNAL, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(asdict(outcome), ensure_ascii=False) + "\n")


def read_journal(root: Path) -> dict:
    entries = {}
    if (root / course.JOURNAL).exists():
        for line in (root / course.JOURNAL).read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # the last line of a run killed mid-write
            entries[(entry["student"], entry["assignment"])] = entry
    return entries


def compact_journal(root: Path, outcomes: dict) -> None:
    """Keep each submission's latest line, plus those of submissions not in this run's folder."""
    entries = read_journal(root)
    entries.update({key: asdict(outcome) for key, outcome in outcomes.items()})
    fresh = root / (course.JOURNAL + ".new")
    fresh.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries.values()), encoding="utf-8")
    fresh.replace(root / course.JOURNAL)
