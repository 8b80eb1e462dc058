"""Grade a class: `python -m grader grade SUBMITTED_DIR --out OUT_DIR [--jobs N]`.

nbgrader does the grading (gradebook, autograde, feedback); this module makes it one command
that a broken submission cannot derail. `grade` is the list of its stages, each in the module of
the pipeline or the output it belongs to (docs/architecture.md has the data flow):

1. discovery: what SUBMITTED_DIR holds, every entry a submission or not graded with the reason;
2. store, engine: the gradebook and the --scheduler reached (or nothing is written);
3. lock: OUT_DIR is this run's alone from here on (a double start stops at once);
4. staging, worker: the course folder staged, the grading secret;
5. collect: each submission read and checked (grader/pipeline/intake.py), unchanged ones kept from
   the last run, unreadable ones 0 with the reason, the others tasks;
6. engine: the tasks graded on Dask (a local cluster or --scheduler), each result checked,
   stored and journaled as it arrives (store.Keeper), so an interrupted run resumes;
7. store: the journal compacted, the run's scores added to the history;
8. report and classreport: grades.csv and the other CSVs, the feedback pages, the class report.

A submission whose bytes and whose assignment source have not changed since the last run in
the same OUT_DIR is not graded again: re-runs are idempotent and only new work is done.
Tamper resistance: grader/README.md has the threat model.
"""

from __future__ import annotations

import sys
from pathlib import Path

from grader import course
from grader.cluster import engine
from grader.course import CEILING_SECONDS
from grader.i18n import _, ngettext
from grader.instructor import nbgrader_guard
from grader.kernels import sandbox
from grader.output import classreport, report
from grader.pipeline import UsageError, collect, discovery, lock, staging, store, worker


class Incomplete(Exception):
    """Some submissions were left ungraded by the infrastructure; a re-run grades just those."""


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
    submitted, out = discovery.checked_folders(submitted, out)
    found = discovery.discover(submitted)
    if not found.submissions:
        raise UsageError(_nothing_to_grade(submitted, found))
    root = out / "course"
    url = store.gradebook_url(root, db)  # a database that cannot be reached stops us before anything is written
    client = engine.connect(scheduler, jobs, tls) if scheduler else None  # so does a scheduler
    try:
        with lock.held(out):  # from here to the end OUT_DIR is this run's alone
            sandboxed = _announce(submitted, found, jobs, scheduler, echo)
            staging.prepare_course(root, url)
            nbgrader_guard.guard_course_folder(root)  # nbgrader run inside OUT/course refuses to grade around us
            worker.make_grading_secret(root)
            settings = collect.Settings(ceiling, cell_timeout, sandboxed, course.redacted(url))
            batch = collect.take_in(root, submitted, found, settings)
            ungraded = _autograde(batch, root, client, jobs, echo)
            outcomes = {key: o for key, o in batch.outcomes.items() if key not in ungraded}
            store.compact_journal(root, outcomes)
            report.write_outputs(root, out, outcomes)
            run = store.record_run(root, outcomes)
            store.record_pairs(root, run, classreport.write_after_grading(out, echo))
    finally:
        if client is not None:
            engine.close(client)
    if ungraded:
        raise Incomplete(len(ungraded))
    return [outcomes[k] for k in sorted(outcomes)]


def _autograde(batch: collect.Batch, root: Path, client, jobs: int, echo) -> dict:
    """The batch's tasks graded on `client` (--scheduler's) or on a local cluster of `jobs`
    processes, made only when there is work; each result stored as it arrives. Returns what the
    infrastructure left ungraded ({(student, assignment): why}), said on the terminal too."""
    echo(
        _(
            "  {reused} unchanged since the last run (results kept), {unreadable} unreadable (0 with the "
            "reason), {tasks} to autograde"
        ).format(reused=batch.reused, unreadable=batch.unreadable, tasks=len(batch.tasks))
    )
    if not batch.tasks:
        return {}
    local = engine.connect(None, jobs) if client is None else None
    try:
        ungraded = engine.run(client or local, batch.tasks, store.Keeper(root, batch.outcomes, batch.tasks, echo))
    finally:
        if local is not None:
            engine.close(local)
    for (student, assignment), reason in ungraded.items():
        echo(
            _("  not graded {student}/{assignment}: {reason}").format(
                student=student, assignment=assignment, reason=reason
            )
        )
    return ungraded


def _nothing_to_grade(submitted: Path, found: discovery.Found) -> str:
    if (submitted / "submitted").is_dir():  # a class's folder given for its submitted/ folder
        why = _("nothing to grade in {folder}: did you mean {inner}? (a class's submissions are in its submitted/)")
        return why.format(folder=submitted, inner=submitted / "submitted")
    if any(item.reason == discovery.UNKNOWN_ASSIGNMENT for item in found.not_graded):
        why = _(
            "nothing to grade in {folder}: expected <student>/<assignment>/<notebook>.ipynb (only unknown assignments)"
        )
    else:
        why = _("nothing to grade in {folder}: expected <student>/<assignment>/<notebook>.ipynb")
    return why.format(folder=submitted)


def _announce(submitted: Path, found: discovery.Found, jobs: int, scheduler: str | None, echo) -> bool:
    """What was not graded and why, what is graded where, how the kernels are sandboxed; True when
    they are (else every row is flagged, and stderr says so)."""
    for item in found.not_graded:
        line = report.not_graded_line(item.student, item.found, item.reason, item.fix)
        echo(_("  not graded  {what}").format(what=line))
    if scheduler:
        where = _("the Dask cluster at {address}").format(address=scheduler)
    else:
        where = ngettext("{count} local worker process", "{count} local worker processes", jobs).format(count=jobs)
    count = ngettext(
        "Grading {count} submission from {folder} on {where}",
        "Grading {count} submissions from {folder} on {where}",
        len(found.submissions),
    )
    echo(count.format(count=len(found.submissions), folder=submitted, where=where))
    reaped = sandbox.reap_orphans() + worker.reap_scratch()
    if reaped:
        echo(_("  removed {count} folder(s) that a killed grading run left behind").format(count=len(reaped)))
    echo(_("  here: {sandbox}").format(sandbox=sandbox.describe()))
    if sandbox.probe() is None:
        return True
    print(
        _("grader grade: {sandbox}; every row is flagged 'unsandboxed'").format(sandbox=sandbox.describe()),
        file=sys.stderr,
    )
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
    except lock.Busy as err:
        print(_("grader grade: {reason}").format(reason=err), file=sys.stderr)
        return lock.EXIT_BUSY
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
