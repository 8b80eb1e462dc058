"""Command line: python -m grader {run,tidy,release,edition,grade,report,certs,scheduler,worker} ...

The demo class and the quick scoring of catalogued answers are the proof's: python -m proof {demo,try}."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# Light: paths and settings, no nbformat, no JAX, no Dask.
from grader import course
from grader.cluster import certs
from grader.i18n import N_, _, ngettext, use_for_argparse

DESCRIPTION = N_(
    "The course's grader: python -m grader {run,tidy,release,edition,grade,report,certs,scheduler,worker} ... "
    "(the demo class and the quick scoring of catalogued answers: python -m proof {demo,try})"
)


def cmd_run(args) -> int:
    from grader import nbtools

    failed = 0
    for path in args.notebooks:
        start = time.perf_counter()
        result = nbtools.execute_notebook(Path(path))
        status = "ok  " if result.ok else "FAIL"
        print(f"{status} {path}  ({time.perf_counter() - start:.1f} s)")
        for problem in result.problems:
            print(f"     {problem}")
        failed += not result.ok
    return 1 if failed else 0


def cmd_tidy(args) -> int:
    from grader import nbtools

    for path in args.notebooks:
        if nbtools.tidy(Path(path)):
            print(f"tidied {path}")
    return 0


def cmd_release(args) -> int:
    from grader.pipeline import release

    release.generate_release()
    print(_("exercises/ regenerated from solutions/; review `git diff exercises/` and commit it."))
    return 0


def cmd_edition(args) -> int:
    """`make student`: the release regenerated from solutions/ (quietly: the edition must hold it),
    then the edition; it ends by saying which file to hand out and what students do with it."""
    from grader.instructor import edition
    from grader.pipeline import release

    if args.release:
        before = {p: p.read_bytes() for p in course.EXERCISES.glob("*/*.ipynb")}
        release.generate_release()
        changed = sorted(p for p in course.EXERCISES.glob("*/*.ipynb") if before.get(p) != p.read_bytes())
        if changed:  # only after an edit of solutions/: the maintainer's business, said once
            said = ngettext(
                "exercises/ regenerated from solutions/ ({count} notebook changed): commit it with solutions/.",
                "exercises/ regenerated from solutions/ ({count} notebooks changed): commit it with solutions/.",
                len(changed),
            )
            print(said.format(count=len(changed)))
    archive = edition.build(Path(args.out))
    megabytes = archive.stat().st_size / 1e6
    if archive.is_relative_to(Path.cwd()):
        archive = archive.relative_to(Path.cwd())  # as the instructor named it: build/student.zip
    print(
        _("The student edition is ready. Hand out this one file: {archive} ({size:.1f} MB).").format(
            archive=archive, size=megabytes
        )
    )
    print(_("Students unzip it, run `make lab` in the folder it makes and read its README.md (Chinese and English)."))
    print(
        _("The same files, unpacked: {folder}/. Neither holds a solution, hidden test or grader code.").format(
            folder=args.out
        )
    )
    return 0


def cmd_grade(args) -> int:
    from grader import grade

    return grade.main(args)


def cmd_report(args) -> int:
    """The class report of a graded OUT_DIR again (grade writes it too), e.g. after Formgrader
    changes; not while a grading run writes the folder (grader/pipeline/lock.py)."""
    from grader.output import classreport
    from grader.pipeline import lock

    out = Path(args.out_dir)
    if not (out / "grades.csv").is_file():
        print(_("grader report: no grades.csv in {out}: grade a class into it first").format(out=out), file=sys.stderr)
        return 2
    try:
        with lock.held(out, "report"):
            page = classreport.write(out)
    except lock.Busy as err:
        print(_("grader report: {reason}").format(reason=err), file=sys.stderr)
        return lock.EXIT_BUSY
    print(_("Wrote {page} (tests.csv and class.json beside it)").format(page=page))
    return 0


def cmd_certs(args) -> int:
    """A new CA and a certificate per role for a real cluster (grader/cluster/certs.py)."""
    try:
        certs.make(Path(args.out), args.hosts)
    except FileExistsError as err:
        print(_("grader certs: {reason}").format(reason=err), file=sys.stderr)
        return 2
    print(
        _("Certificates written to {folder}/ (keys readable by you alone). Copy the folder to the same").format(
            folder=args.out
        )
    )
    print(_("place in the checkout of every machine of the cluster: scheduler, workers and where you grade."))
    return 0


def cmd_scheduler(args) -> int:
    """A thin wrapper over `dask scheduler`: mutual TLS with the course's certificates, bound to
    the interface given, no HTTP server."""
    from grader.cluster import engine

    try:
        ca, cert, key = engine.tls_files(args.tls, "scheduler")
    except engine.EngineError as err:
        print(_("grader scheduler: {reason}").format(reason=err), file=sys.stderr)
        return 2
    print(f"grader scheduler: tls://{args.host}:{args.port}", flush=True)
    argv = [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", args.host, "--port", str(args.port)]
    argv += ["--protocol", "tls", "--tls-ca-file", ca, "--tls-cert", cert, "--tls-key", key]
    argv += ["--no-dashboard", "--dashboard-address", "127.0.0.1:0", "--preload", "grader.cluster.no_http"]
    os.execv(sys.executable, argv)


def cmd_worker(args) -> int:
    """A thin wrapper over `dask worker`: one submission per process, no memory restarts (each
    kernel has its own cgroup), the course's headless settings, mutual TLS with the course's
    certificates, no HTTP server; says how it sandboxes first."""
    from grader import nbtools
    from grader.cluster import engine
    from grader.kernels import sandbox
    from grader.pipeline import worker

    try:
        engine.check_address(args.scheduler)
        ca, cert, key = engine.tls_files(args.tls, "worker")
    except engine.EngineError as err:
        print(_("grader worker: {reason}").format(reason=err), file=sys.stderr)
        return 2
    reaped = sandbox.reap_orphans() + worker.reap_scratch()
    if reaped:
        print(
            _("grader worker: removed {count} folder(s) that a killed grading run left behind").format(
                count=len(reaped)
            )
        )
    print(f"grader worker: {sandbox.describe()}", flush=True)
    os.environ.update(nbtools.HEADLESS_ENV)
    argv = [sys.executable, "-m", "distributed.cli.dask_worker", args.scheduler]
    argv += ["--nworkers", str(args.nworkers), "--nthreads", "1", "--memory-limit", "0"]
    argv += ["--tls-ca-file", ca, "--tls-cert", cert, "--tls-key", key]
    argv += ["--no-dashboard", "--dashboard-address", "127.0.0.1:0", "--preload", "grader.cluster.no_http"]
    argv += ["--host", args.host] if args.host else []
    os.execv(sys.executable, argv)


def tls_help() -> str:
    return _("the cluster's certificates, made by python -m grader certs (default: {folder})").format(
        folder=certs.FOLDER
    )


def main(argv=None) -> int:
    use_for_argparse()
    parser = argparse.ArgumentParser(prog="python -m grader", description=_(DESCRIPTION))
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help=_("execute notebooks headless and check raises-exception cells"))
    run.add_argument("notebooks", nargs="+")
    run.set_defaults(func=cmd_run)

    tidy = sub.add_parser("tidy", help=_("strip outputs and editor metadata from notebooks"))
    tidy.add_argument("notebooks", nargs="+")
    tidy.set_defaults(func=cmd_tidy)

    sub.add_parser("release", help=_("regenerate exercises/ from solutions/ with nbgrader")).set_defaults(
        func=cmd_release
    )

    student = sub.add_parser("edition", help=_("build the student edition (a folder and a .zip, no answers)"))
    student.add_argument("--out", default="build/student", help=_("the folder; the archive is written beside it"))
    student.add_argument(
        "--no-release",
        dest="release",
        action="store_false",
        help=_("use exercises/ as it is (no nbgrader release first)"),
    )
    student.set_defaults(func=cmd_edition)

    grading = sub.add_parser("grade", help=_("grade SUBMITTED_DIR/<student>/<assignment>/*.ipynb into OUT_DIR"))
    grading.add_argument("submitted", help=_("nbgrader layout: <student_id>/<assignment>/<notebook>.ipynb"))
    grading.add_argument("--out", required=True, help=_("grades.csv, feedback/ and the working course folder go here"))
    grading.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help=_("submissions graded at once on a local cluster (default: %(default)s, one per core)"),
    )
    grading.add_argument(
        "--scheduler",
        metavar="tls://HOST:PORT",
        help=_("grade on this Dask cluster instead (python -m grader scheduler; workers: python -m grader worker)"),
    )
    grading.add_argument("--tls", metavar="DIR", type=Path, help=tls_help())
    grading.add_argument(
        "--db",
        metavar="URL",
        help=_("gradebook database, e.g. postgresql+psycopg://USER@HOST/DB (default: SQLite under OUT_DIR)"),
    )
    grading.add_argument(
        "--ceiling",
        type=float,
        default=course.CEILING_SECONDS,
        help=_("seconds one submission may run before its kernel is stopped (default: %(default)s)"),
    )
    grading.add_argument(
        "--cell-timeout",
        type=int,
        default=course.CELL_TIMEOUT,
        help=_("seconds one cell may run before it is interrupted (default: %(default)s)"),
    )
    grading.set_defaults(func=cmd_grade)

    class_report = sub.add_parser("report", help=_("write OUT_DIR/report/: the class report of a graded OUT_DIR"))
    class_report.add_argument("out_dir", help=_("the --out folder of a grading run"))
    class_report.set_defaults(func=cmd_report)

    make_certs = sub.add_parser("certs", help=_("make the CA and the certificates of a grading cluster (mutual TLS)"))
    make_certs.add_argument("--out", default=str(certs.FOLDER), help=_("the folder (default: %(default)s)"))
    make_certs.add_argument(
        "--hosts", nargs="*", default=[], help=_("the scheduler's addresses or names, written into its certificate")
    )
    make_certs.set_defaults(func=cmd_certs)

    schedule = sub.add_parser("scheduler", help=_("run the Dask scheduler of a grading cluster (mutual TLS)"))
    schedule.add_argument("--host", required=True, help=_("the address to listen on, e.g. this machine's LAN address"))
    schedule.add_argument("--port", type=int, default=8786)
    schedule.add_argument("--tls", metavar="DIR", type=Path, help=tls_help())
    schedule.set_defaults(func=cmd_scheduler)

    work = sub.add_parser("worker", help=_("serve a Dask scheduler as a grading worker on this machine"))
    work.add_argument("scheduler", metavar="tls://HOST:PORT")
    work.add_argument("--nworkers", type=int, default=os.cpu_count() or 1, help=_("worker processes (one per core)"))
    work.add_argument("--host", help=_("the address its processes listen on (default: every interface)"))
    work.add_argument("--tls", metavar="DIR", type=Path, help=tls_help())
    work.set_defaults(func=cmd_worker)

    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
