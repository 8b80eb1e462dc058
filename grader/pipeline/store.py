"""A result stored: each worker's result checked (`refusal`), then put into OUT_DIR/course and the
gradebook in one transaction per submission (`store`, `record_submission`, as each arrives:
`Keeper`), and journaled (`journal`), so an interrupted run resumes; at the end of a run, every
score of the run added to the history (`record_run`, `record_pairs`: grader/output/history.py).
grader/grade.py calls these in the coordinator; no other code writes grades or history.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

from grader import course, messages
from grader.i18n import _
from grader.output import history, report
from grader.pipeline import UsageError, worker


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
    not_graded: str = ""  # not a submission at all (discovery.REASONS): never in the gradebook, no score
    fix: str = ""  # for one not graded: the assignment it most likely is


FLAGS = {"tampering", "rules", "unsandboxed"}
NOT_GRADED = "not-graded"  # the flag of a row that is not a submission (docs/grading.md: its score is blank)
MAX_NOTES, MAX_NOTE_CHARS = 100, 4000
MAX_RESULT_BYTES = 256 * 2**20  # the autograded notebook and its feedback page together


def gradebook_url(root: Path, db: str | None) -> str:
    """The gradebook's SQLAlchemy URL (SQLite under OUT_DIR unless --db), checked reachable: a
    database that cannot be reached stops the run before anything is written."""
    import sqlalchemy

    if db is None:
        return course.sqlite_url(root)
    try:
        with sqlalchemy.create_engine(db).connect():
            pass
    except Exception as err:  # noqa: BLE001 - any driver error: the database cannot be used
        detail = str(getattr(err, "orig", err)).strip().splitlines()
        reason = detail[0] if detail else type(err).__name__
        raise UsageError(
            _("cannot reach the gradebook database {url}: {reason}").format(url=course.redacted(db), reason=reason)
        ) from None
    return db


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


class Keeper:
    """What the coordinator does with each result as it arrives (engine.run's `on_done`): check it,
    store it (a refused one as 0 with the reason, never taken as done), journal it, say so."""

    def __init__(self, root: Path, outcomes: dict, tasks: list, echo=print) -> None:
        self.root, self.outcomes, self.echo, self.total, self.count = root, outcomes, echo, len(tasks), 0
        self.points = {a: test_points(a) for a in {t.assignment for t in tasks}}

    def __call__(self, task: worker.Task, graded: worker.Graded) -> None:
        outcome = self.outcomes[task.key]
        reason = refusal(graded, task.assignment, self.points[task.assignment])
        if reason is not None:
            refused = _("grader grade: refused the result of {student}/{assignment}: {reason}")
            print(refused.format(student=task.student, assignment=task.assignment, reason=reason), file=sys.stderr)
            graded = worker.Graded(worker.Result(False, [messages.result_refused()]))
            outcome.digest = ""  # never taken as done: a re-run grades it again
        store(self.root, graded, outcome, review=reason is None)  # a refused result records nothing
        journal(self.root, outcome)
        self.count += 1
        where = f"  [{self.count:>{len(str(self.total))}}/{self.total}] {task.student}/{task.assignment}: "
        self.echo(report.progress_line(where, report.escaped(outcome.notes[0]) if outcome.notes else _("ok")))


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


# —— the history (grader/output/history.py): every run's scores, never replaced ——


def _history(root: Path):
    """The gradebook's engine with the history's tables made. nbgrader's own are there already
    (staging registered the assignments): nbgrader stamps a new database's schema version only when
    it finds no table at all, so ours must never come first."""
    import sqlalchemy

    engine = sqlalchemy.create_engine(course.db_url(root))
    history.META.create_all(engine)
    return engine


def record_run(root: Path, outcomes: dict) -> int:
    """Every row of this run's grades.csv, as one more run of the history (one transaction);
    returns the run's id, for `record_pairs`."""
    import sqlalchemy

    engine = _history(root)
    try:
        with engine.begin() as db:
            run = db.execute(sqlalchemy.insert(history.RUNS).values(finished=history.now())).inserted_primary_key[0]
            rows = [
                {
                    "run": run, "student": o.student, "assignment": o.assignment,
                    "score": None if o.not_graded else o.score, "max_score": None if o.not_graded else o.max_score,
                    "flags": " ".join(o.flags),
                }
                for o in outcomes.values()
            ]  # fmt: skip
            if rows:
                db.execute(sqlalchemy.insert(history.SCORES), rows)
    finally:
        engine.dispose()
    return run


def record_pairs(root: Path, run: int, pairs: list[dict]) -> None:
    """The pairs the run's class report listed as looking copied ({"assignment", "students",
    "similarity"}), so a later report names those it no longer lists."""
    import sqlalchemy

    if not pairs:
        return
    engine = _history(root)
    try:
        with engine.begin() as db:
            rows = [
                {"run": run, "assignment": p["assignment"], "first": p["students"][0], "second": p["students"][1],
                 "similarity": p["similarity"]}
                for p in pairs
            ]  # fmt: skip
            db.execute(sqlalchemy.insert(history.SIMILAR), rows)
    finally:
        engine.dispose()
