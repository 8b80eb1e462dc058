"""Grade a class: `python -m grader grade SUBMITTED_DIR --out OUT_DIR [--jobs N]`.

nbgrader does the grading (gradebook, autograde, feedback); this module makes it one command
that a broken submission cannot derail. It is split along the process boundary:

* grader/pipeline/intake.py, in this process: each submission is only read and checked (empty file,
  invalid JSON, wrong file name, cells deleted or edited, answering rules): unusable ones get a
  score of 0 and a reason, the others are copied into a course folder under OUT_DIR.
* grader/pipeline/worker.py, anywhere: each accepted submission is one task (its bytes and its seed in;
  scores, the autograded notebook and the feedback out), graded in a sandboxed kernel inside
  the worker's private nbgrader course folder; grader/cluster/engine.py runs the tasks on Dask (a local
  cluster, or the one at --scheduler).
* here again: each result is stored as it arrives (OUT_DIR/course, and the gradebook, SQLite or
  --db, one transaction per submission) and journaled, so an interrupted run resumes.
* grader/output/report.py: grades.csv, the feedback pages and the score table, from the gradebook.

A submission whose bytes and whose assignment source have not changed since the last run in
the same OUT_DIR is not graded again: re-runs are idempotent and only new work is done.
Tamper resistance: grader/README.md has the threat model.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import nbformat

from grader import REPO, course, messages
from grader.cluster import engine
from grader.course import CEILING_SECONDS
from grader.i18n import _, ngettext
from grader.instructor import nbgrader_guard
from grader.kernels import sandbox
from grader.output import report
from grader.pipeline import intake, staging, store, worker


class UsageError(Exception):
    """Input that cannot be graded at all: one line for the instructor, exit code 2."""


def prepare_course(root: Path, url: str) -> None:
    """Stage the sources and register the assignments in the gradebook, redoing only what changed.

    If nbgrader refuses to update an assignment that already has submissions, the course folder
    is rebuilt from scratch (its cached grades are then recomputed, never reused stale).
    """
    stamp = root / "sources.json"
    recorded = json.loads(stamp.read_text()) if stamp.exists() else {}
    # a stamp holds for the gradebook it was made with (and a SQLite one that still exists)
    same_gradebook = recorded.get("gradebook") == _redacted(url) and (
        db_is_shared(url) or (root / "gradebook.db").exists()
    )
    done = recorded.get("sources", {}) if same_gradebook else {}
    changed = [a for a in course.ASSIGNMENTS if done.get(a) != staging.source_digest(a)]
    if not changed:
        return
    course.remember_gradebook(root, url)  # Formgrader and later runs in this OUT_DIR find it there
    for attempt in ("update", "rebuild"):
        if attempt == "rebuild" or not done:
            shutil.rmtree(root, ignore_errors=True)
            course.remember_gradebook(root, url)
            done, changed = {}, course.ASSIGNMENTS
        try:
            staging.stage(root, changed)
            break
        except RuntimeError:
            if attempt == "rebuild":
                raise
    done.update({a: staging.source_digest(a) for a in changed})
    stamp.write_text(json.dumps({"gradebook": _redacted(url), "sources": done}, indent=1))


def db_is_shared(url: str) -> bool:
    return not url.startswith("sqlite")


def make_grading_secret(root: Path) -> None:
    """Once per OUT_DIR, before the workers start: the key of every student's seed."""
    key = root / "grading-secret"
    if not key.exists():
        key.write_text(os.urandom(32).hex())
        key.chmod(0o600)


def discover(submitted: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[str]]:
    """(known, unknown) (student, assignment) pairs in nbgrader's submitted layout, and the
    student folders refused for their names: a control or bidirectional character would show
    the id as something else in a terminal or a spreadsheet (`report.is_safe`)."""
    known, unknown, refused = [], [], []
    for student in sorted(p for p in submitted.iterdir() if p.is_dir() and not p.is_symlink() and p.name[0] != "."):
        if not report.is_safe(student.name):
            refused.append(student.name)
            continue
        for folder in sorted(p for p in student.iterdir() if p.is_dir() and not p.name.startswith(".")):
            (known if folder.name in course.ASSIGNMENTS else unknown).append((student.name, folder.name))
    return known, unknown, refused


def _overlaps(a: Path, b: Path) -> bool:
    return a == b or a in b.parents or b in a.parents


def grade(
    submitted: Path,
    out: Path,
    jobs: int,
    ceiling: float = CEILING_SECONDS,
    cell_timeout: int = course.CELL_TIMEOUT,
    echo=print,
    scheduler: str | None = None,
    db: str | None = None,
    tls: Path | None = None,
) -> list[store.Outcome]:
    """Grade every submission in `submitted` into `out`, on a local Dask cluster of `jobs`
    processes or on the cluster at `scheduler` (with the client certificate in `tls`, default
    build/tls), into the SQLite gradebook under `out` or the database at `db`.
    """
    submitted, out = Path(submitted).resolve(), Path(out).resolve()
    if not submitted.is_dir():
        raise UsageError(_("no such folder: {folder}").format(folder=submitted))
    for protected in (submitted, course.SOLUTIONS, course.EXERCISES, REPO / "grader"):
        if _overlaps(out, protected.resolve()):
            raise UsageError(
                _("--out {out} overlaps {protected}; choose a separate output folder").format(
                    out=out, protected=protected
                )
            )
    known, unknown, refused = discover(submitted)
    for link in sorted(p.name for p in submitted.iterdir() if p.is_symlink()):
        echo(
            _("  skip  {name}: a symbolic link, not followed (hand in the folder itself)").format(
                name=report.escaped(link)
            )
        )
    for student in refused:
        echo(
            _("  skip  {student}: control or bidirectional characters in the student id, not graded").format(
                student=report.escaped(student)
            )
        )
    for student, name in unknown:
        echo(
            _("  skip  {student}/{name}: unknown assignment (known: {known})").format(
                student=student, name=report.escaped(name), known=", ".join(course.ASSIGNMENTS)
            )
        )
    if not known:
        if unknown:
            why = _(
                "nothing to grade in {folder}: expected <student>/<assignment>/<notebook>.ipynb "
                "(only unknown assignments)"
            )
        else:
            why = _("nothing to grade in {folder}: expected <student>/<assignment>/<notebook>.ipynb")
        raise UsageError(why.format(folder=submitted))

    root = out / "course"
    if scheduler:
        where = _("the Dask cluster at {address}").format(address=scheduler)
    else:
        where = ngettext("{count} local worker process", "{count} local worker processes", jobs).format(count=jobs)
    count = ngettext(
        "Grading {count} submission from {folder} on {where}",
        "Grading {count} submissions from {folder} on {where}",
        len(known),
    )
    echo(count.format(count=len(known), folder=submitted, where=where))
    reaped = sandbox.reap_orphans() + worker.reap_scratch()
    if reaped:
        echo(_("  removed {count} folder(s) that a killed grading run left behind").format(count=len(reaped)))
    sandboxed = sandbox.probe() is None
    echo(_("  here: {sandbox}").format(sandbox=sandbox.describe()))
    if not sandboxed:
        print(
            _("grader grade: {sandbox}; every row is flagged 'unsandboxed'").format(sandbox=sandbox.describe()),
            file=sys.stderr,
        )
    url = _gradebook_url(root, db)  # a database that cannot be reached stops us before anything is written
    client = engine.connect(scheduler, jobs, tls) if scheduler else None  # so does a scheduler that cannot be reached
    try:
        prepare_course(root, url)
        nbgrader_guard.guard_course_folder(root)  # nbgrader run inside OUT/course refuses to grade around us
        make_grading_secret(root)
        outcomes, tasks, reused = _intake(root, submitted, known, ceiling, cell_timeout, sandboxed, url)
        unreadable = len(known) - len(tasks) - reused
        echo(
            _(
                "  {reused} unchanged since the last run (results kept), {unreadable} unreadable (0 with the reason), "
                "{tasks} to autograde"
            ).format(reused=reused, unreadable=unreadable, tasks=len(tasks))
        )
        count = [0]
        points = {a: store.test_points(a) for a in {t.assignment for t in tasks}}

        def keep(task: worker.Task, graded: worker.Graded) -> None:
            outcome = outcomes[task.key]
            reason = store.refusal(graded, task.assignment, points[task.assignment])
            if reason is not None:
                refused = _("grader grade: refused the result of {student}/{assignment}: {reason}")
                print(refused.format(student=task.student, assignment=task.assignment, reason=reason), file=sys.stderr)
                graded = worker.Graded(worker.Result(False, [messages.result_refused()]))
                outcome.digest = ""  # never taken as done: a re-run grades it again
            store.store(root, graded, outcome, review=reason is None)  # a refused result records nothing
            store.journal(root, outcome)
            count[0] += 1
            where = f"  [{count[0]:>{len(str(len(tasks)))}}/{len(tasks)}] {task.student}/{task.assignment}: "
            echo(report.progress_line(where, report.escaped(outcome.notes[0]) if outcome.notes else _("ok")))

        ungraded = {}
        if tasks:
            client = client or engine.connect(None, jobs)  # a local cluster only when there is work
            ungraded = engine.run(client, tasks, keep)
    finally:
        if client is not None:
            engine.close(client)
    for key, reason in ungraded.items():
        echo(
            _("  not graded {student}/{assignment}: {reason}").format(student=key[0], assignment=key[1], reason=reason)
        )
        del outcomes[key]
    store.compact_journal(root, outcomes)
    report.write_outputs(root, out, outcomes)
    write_class_report(out, echo)
    if ungraded:
        raise Incomplete(len(ungraded))
    return [outcomes[k] for k in sorted(outcomes)]


def write_class_report(out: Path, echo=print) -> None:
    """#33: OUT/report/ (grader/output/classreport.py). The grades are written by then: a report that
    cannot be made is one line on stderr, never a failed run."""
    from grader.output import classreport

    try:
        echo(_("  class report: {page}").format(page=classreport.write(out)))
    except Exception as err:  # noqa: BLE001 - any failure of the report leaves the grades as they are
        reason = report.escaped(str(err))[:300]  # it may quote a student's id
        failed = _("grader grade: the class report was not written: {error}: {reason}")
        print(failed.format(error=type(err).__name__, reason=reason), file=sys.stderr)


class Incomplete(Exception):
    """Some submissions were left ungraded by the infrastructure; a re-run grades just those."""


def _gradebook_url(root: Path, db: str | None) -> str:
    """The gradebook's SQLAlchemy URL (SQLite under OUT_DIR unless --db), checked reachable."""
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
            _("cannot reach the gradebook database {url}: {reason}").format(url=_redacted(db), reason=reason)
        ) from None
    return db


def _redacted(url: str) -> str:
    import sqlalchemy

    return sqlalchemy.make_url(url).render_as_string(hide_password=True)


def _intake(root, submitted, known, ceiling, cell_timeout, sandboxed, url):
    """Outcomes of every submission (cached, unreadable or to grade) and the tasks to send."""
    cache = store.read_journal(root)
    releases = {  # what students were given
        a: nbformat.read(course.notebook_path(course.EXERCISES, a), as_version=4) for a in {a for _, a in known}
    }
    sources = {a: staging.source_digest(a) for a in releases}
    settings = f"/{ceiling}/{cell_timeout}/{sandboxed}/judge/{_redacted(url)}"
    outcomes: dict[tuple[str, str], store.Outcome] = {}
    tasks, reused = [], 0
    for student, assignment in known:
        folder = submitted / student / assignment
        digest = intake.folder_digest(folder) + sources[assignment] + settings
        previous = cache.get((student, assignment))
        if previous and previous["digest"] == digest:
            outcomes[(student, assignment)] = store.Outcome(**previous)
            reused += 1
            continue
        outcome = store.Outcome(student, assignment, digest=digest)
        nb, outcome.notes, outcome.flags = intake.receive(folder, assignment, releases[assignment])
        outcome.extra_notebooks = intake.extra_notebooks(folder, assignment)
        outcome.flags += [] if sandboxed else ["unsandboxed"]
        outcomes[(student, assignment)] = outcome
        target = course.notebook_path(root / "submitted" / student, assignment)
        shutil.rmtree(target.parent, ignore_errors=True)
        _keep_nbgrader_files(folder, target.parent, outcome)
        if nb is not None and _write_for_grading(nb, target, outcome):
            notebook = target.read_bytes()
            seed = worker.student_seed(root, student, assignment, notebook)
            tasks.append(worker.Task(student, assignment, notebook, seed, sources[assignment], cell_timeout, ceiling))
        else:  # unreadable: 0 with the reason, stored now
            store.store(root, None, outcome)
            store.journal(root, outcome)
    return outcomes, tasks, reused


def _keep_nbgrader_files(folder: Path, target: Path, outcome: store.Outcome) -> None:
    """nbgrader's timestamp.txt and submission_secret.txt, where nbgrader's own tools look for them
    in the course folder: Formgrader shows the time, release_feedback names the page by the secret.
    A submission handed in some other way is timed by its newest file."""
    target.mkdir(parents=True, exist_ok=True)
    found = intake.nbgrader_files(folder)
    if "timestamp.txt" not in found:
        found["timestamp.txt"] = intake.newest_file_time(folder)
    for name, text in found.items():
        if text:
            (target / name).write_text(text, encoding="ascii")
    outcome.timestamp = found["timestamp.txt"]


def _write_for_grading(nb, target: Path, outcome: store.Outcome) -> bool:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        return True
    except Exception as err:  # noqa: BLE001 - e.g. text nbformat cannot write back
        outcome.notes.append(messages.grader_failed("保存", err))
        return False


def main(args) -> int:
    try:
        outcomes = grade(
            Path(args.submitted),
            Path(args.out),
            args.jobs,
            args.ceiling,
            args.cell_timeout,
            scheduler=args.scheduler,
            db=args.db,
            tls=args.tls,
        )
    except (UsageError, engine.EngineError) as err:
        print(_("grader grade: {reason}").format(reason=err), file=sys.stderr)
        return 2
    except Incomplete as err:
        incomplete = _(
            "grader grade: {count} submission(s) were not graded (see 'not graded' above); "
            "run the same command again to grade just those"
        )
        print(incomplete.format(count=err.args[0]), file=sys.stderr)
        return 1
    report.print_table(outcomes)
    out = Path(args.out)
    print(
        "\n" + _("Wrote {csv} and feedback under {feedback}").format(csv=out / "grades.csv", feedback=out / "feedback")
    )
    print(_("One row per student: grades_wide.csv, grades_canvas.csv (Canvas's gradebook import); the class: report/"))
    return 0
