"""The one place that knows the course layout and nbgrader's configuration."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from traitlets.config import Config

from grader import REPO

SOLUTIONS = REPO / "solutions"  # nbgrader source: statement, solution, visible + hidden tests
EXERCISES = REPO / "exercises"  # nbgrader release: generated, committed, never edited by hand
CATALOGUE = REPO / "proof" / "catalogue"  # known wrong and alternative answers, one file each (the proof's data)

# Every folder solutions/<a>/ that holds <a>.ipynb is an assignment: release, grading and the
# self-proof pick a new exercise up with no list to edit (CONTRIBUTING.md, "Adding an exercise").
# Each notebook has exactly one answer cell, grade_id "answer".
ASSIGNMENTS = tuple(sorted(p.parent.name for p in SOLUTIONS.glob("*/*.ipynb") if p.stem == p.parent.name))
ANSWER_ID = "answer"

COURSE_ID = "ch04"
# Per-submission ceiling for grading; a correct submission needs ~10-30 s on a busy 2-core machine.
CEILING_SECONDS = 300
# Kernel start-up flags: no history database on disk, and no start-up warnings from the kernel
# process (ipykernel warns that its local TCP sockets are unencrypted, on every start).
KERNEL_ARGS = ["--HistoryManager.hist_file=:memory:", "--IPKernelApp.log_level=ERROR"]

# Per-cell timeout for grading. nbgrader's default (30 s) is too tight for a JAX test cell that
# compiles under jit/vmap on a loaded 2-core machine, and a reference test cell takes < 10 s.
CELL_TIMEOUT = 60


class TimeLimit(NamedTuple):
    export: float  # CPU seconds of the kernel for its test cell: the student's functions traced and exported
    verdict: float  # CPU seconds of the judge for its verdict: the programs compiled and run


# Each test's own time limit, so that an endless loop costs the tests it hangs, not the whole
# submission. In CPU seconds, so that a machine busy with other work does not trip it; a test that
# waits without computing meets the per-cell timeout (its cell) or ten times its limit in wall time
# (its verdict), and the ceiling stays the outer bound. A few times what a correct answer needs,
# measured on the quick path for the reference and every right_ and natural_ catalogue answer (81
# answers, 553 tests, on a shared 2-core machine at load 4, without the judges' shared compilation
# cache; a test cell in wall time, which its CPU time does not exceed). Outside ode_adjoint no test
# cell took more than 1.1 s and no verdict more than 1.1 s; 20 s leaves room for a slower machine
# and for a judge started cold, whose import of JAX (1.4 s) counts to its first test. A Python-loop
# ODE answer (right_python_loop) traces 100 unrolled steps in each test cell that exports them (up
# to 5.6 s) and compiles them in the first verdict that runs them: its forward programs in test_forward
# and test_hidden_forward (35 s), its backward programs in test_gradients and test_hidden_vjp (issue
# #50 grades the forward and the backward pass as two programs); the method tests compile the
# 20–40-step exports (well under 45 s).
TIME_LIMIT = TimeLimit(export=20, verdict=20)
SLOWER_TESTS = {  # "assignment" or "assignment/test": where a correct answer needs more
    "ode_adjoint": TimeLimit(export=30, verdict=45),
    # the first verdicts to run an unrolled answer's forward and backward programs compile them
    **dict.fromkeys(
        ("ode_adjoint/test_forward", "ode_adjoint/test_gradients", "ode_adjoint/test_hidden_forward",
         "ode_adjoint/test_hidden_vjp"),
        TimeLimit(export=30, verdict=105),
    ),
}  # fmt: skip


def time_limit(assignment: str | None, test: str) -> TimeLimit:
    """The time limit of one test (`SLOWER_TESTS`, else `TIME_LIMIT`)."""
    return SLOWER_TESTS.get(f"{assignment}/{test}") or SLOWER_TESTS.get(assignment or "") or TIME_LIMIT


def notebook_path(root: Path, assignment: str) -> Path:
    return root / assignment / f"{assignment}.ipynb"


def nbgrader_config(
    course_root: Path, source: Path = SOLUTIONS, release: Path = EXERCISES, cell_timeout: int = CELL_TIMEOUT
) -> Config:
    """nbgrader configuration for a course folder whose source and release live elsewhere."""
    _schema_version_in_process()
    c = Config()
    c.CourseDirectory.root = str(course_root)
    c.CourseDirectory.source_directory = str(source)
    c.CourseDirectory.release_directory = str(release)
    c.CourseDirectory.db_url = db_url(course_root)
    c.CourseDirectory.course_id = COURSE_ID
    c.Exchange.assignment_dir = str(course_root)
    # Release notebooks keep nbgrader's cell metadata so `nbgrader validate` works for students.
    c.ClearSolutions.code_stub = {"python": "# 在此作答\nraise NotImplementedError()"}
    c.Execute.timeout = cell_timeout
    # After a cell's reply its outputs (the evidence among them) may lag on a loaded machine;
    # nbgrader gives up after nbclient's 4 s and fails the whole notebook, so a reference answer
    # scored 0 under load. Wait for them as long as a cell may run.
    c.Execute.iopub_timeout = cell_timeout
    c.Execute.extra_arguments = KERNEL_ARGS
    c.Execute.shutdown_kernel = "immediate"  # a graded kernel has nothing to save: no polite stop to wait for
    # nbgrader leaves an autograded notebook read-only (444), which only root may then rewrite; the
    # verdicts are written into it afterwards, also by an instructor grading as themselves (make hub).
    c.Autograde.permissions = 644
    return c


# `grader grade --db URL` records a shared gradebook's URL here, for Formgrader and later runs.
DB_URL_FILE = "gradebook-url"


def db_url(course_root: Path) -> str:
    recorded = course_root / DB_URL_FILE
    if recorded.exists():
        return recorded.read_text().strip()
    return sqlite_url(course_root)


def sqlite_url(course_root: Path) -> str:
    # ?timeout: a grading run and Formgrader share one SQLite gradebook; wait for the lock.
    return f"sqlite:///{course_root / 'gradebook.db'}?timeout=60"


def remember_gradebook(course_root: Path, url: str) -> None:
    """Record a shared gradebook's URL in the course folder (owner-only: it may hold a password)."""
    record = course_root / DB_URL_FILE
    record.unlink(missing_ok=True)
    if url != sqlite_url(course_root):
        course_root.mkdir(parents=True, exist_ok=True)
        record.touch(mode=0o600)
        record.write_text(url)


def is_shared(url: str) -> bool:
    """A gradebook on a database server (--db), not the SQLite file in the course folder."""
    return not url.startswith("sqlite")


def redacted(url: str) -> str:
    """A gradebook's URL as it may be shown and recorded: without its password."""
    import sqlalchemy

    return sqlalchemy.make_url(url).render_as_string(hide_password=True)


def gradebook(course_root: Path):
    """nbgrader's gradebook of a course folder, as a context manager (`with gradebook(root) as gb`)."""
    from nbgrader.api import Gradebook

    _schema_version_in_process()
    return Gradebook(db_url(course_root), COURSE_ID)


def schema_version() -> str:
    """The newest revision among nbgrader's gradebook migrations, read from the scripts' text."""
    import re

    import nbgrader

    revisions, replaced = set(), set()
    for script in (Path(nbgrader.__file__).parent / "alembic" / "versions").glob("*.py"):
        text = script.read_text(encoding="utf-8")
        revisions.update(re.findall(r"^revision = '(\w+)'", text, re.M))
        replaced.update(re.findall(r"^down_revision = '(\w+)'", text, re.M))
    (head,) = revisions - replaced
    return head


def _schema_version_in_process() -> None:
    """A new gradebook records its schema version; nbgrader runs the `alembic heads` command for
    it, 2-3 s of start-up in every grading process. The same answer, read in the process."""
    import nbgrader.api

    nbgrader.api.get_alembic_version = schema_version


# What nbgrader's `submit` writes beside the notebook and `collect` copies: when it was handed in
# (Formgrader's timestamp, lateness) and the secret that names its feedback in the exchange.
NBGRADER_FILES = ("timestamp.txt", "submission_secret.txt")

JOURNAL = "outcomes.jsonl"  # in the course folder: one line per outcome, notes and all
