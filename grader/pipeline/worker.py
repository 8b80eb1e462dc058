"""Grading one submission, wherever it runs: `grade_task(Task) -> Graded`.

A task carries everything it needs (the submission's bytes, its secret seed, the settings and
the digest of the course it must be graded against) and returns everything the coordinator
stores (the scores, the autograded notebook, the feedback pages, the notes and flags). No file
system is shared: each worker process keeps a private nbgrader course folder in a temporary
folder, built from its own installed course, and refuses a task whose course digest differs.
The kernel runs in a fresh sandbox per submission; a watchdog kills it past the ceiling.

grader/cluster/engine.py sends tasks to worker processes (a local Dask cluster, or a real one).
"""

from __future__ import annotations

import atexit
import hashlib
import hmac
import os
import shutil
import socket
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from ch4protocol import GRADING_ENV, SIZES_ENV, sizes_key

from grader import course, messages, nbtools
from grader.judging import verdict
from grader.kernels import execute, manager, sandbox, scratch
from grader.output import feedback
from grader.pipeline import staging

Key = tuple[str, str]  # (student, assignment)


@dataclass(frozen=True)
class Result:
    """What autograding one submission gave: whether nbgrader produced a score, and why not."""

    succeeded: bool
    notes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Task:
    student: str
    assignment: str
    notebook: bytes  # the submission as intake accepted it
    seed: str  # the student's test inputs (student_seed), secret
    digest: str  # staging.source_digest(assignment) where the class is graded
    cell_timeout: int
    ceiling: float

    @property
    def key(self) -> Key:
        return (self.student, self.assignment)


@dataclass(frozen=True)
class Graded:
    result: Result
    scores: dict[str, float] = field(default_factory=dict)  # grade_id -> points, when succeeded
    autograded: bytes | None = None
    feedback: dict[str, bytes] = field(default_factory=dict)  # page name -> html
    sandboxed: bool = True


class CourseMismatch(Exception):
    """The worker's installed course is not the one the class is graded against."""


def _api(root: Path, cell_timeout: int, sandboxed: bool):
    import logging

    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import GetGrades

    config = course.nbgrader_config(root, source=root / "source", release=root / "release", cell_timeout=cell_timeout)
    config.OverwriteCells.add_missing_cells = True  # a deleted test cell is put back, not scored 0
    if sandboxed:
        config.Autograde.autograde_preprocessors = manager.autograde_preprocessors()
    else:  # outputs are capped either way
        config.Autograde.autograde_preprocessors = execute.autograde_preprocessors()
    # Feedback shows each test's outcome and message but not the hidden tests' code, so an
    # assignment can be reused next term. Nothing the student wrote is live in it (grader/output/feedback.py).
    config.GenerateFeedback.preprocessors = [
        GetGrades,
        feedback.ClearHiddenTestCode,
        feedback.HideHiddenTestOutput,
        CSSHTMLHeaderPreprocessor,
        feedback.SanitizeFeedback,
    ]
    feedback.configure(config)
    api = NbGraderAPI(CourseDirectory(config=config), config=config)
    api.log.setLevel(logging.ERROR)
    return api


def _failure_reason(log: str, error: str = "") -> str:
    """One line for a notebook nbgrader could not process: what was raised (the last line of the
    traceback nbgrader logged), not its closing "see the traceback above", which `error` ends with."""
    if any(died in log + error for died in ("DeadKernelError", "Kernel died", "kernel died")):
        return messages.KERNEL_DIED
    lines = log.splitlines()
    starts = [i for i, line in enumerate(lines) if "Traceback (most recent call last)" in line]
    raised = ""
    for line in lines[starts[-1] + 1 :] if starts else []:
        if line.startswith("["):  # nbgrader's next log record
            break
        line = line.removeprefix("    ")  # how the log indents a record's further lines
        if line.strip() and not line[0].isspace():  # not a frame: an exception, or a line between two
            raised = line
    last = [line for line in (log + "\n" + error).splitlines() if line.strip()]
    return messages.nbgrader_failed((raised or (last[-1] if last else ""))[:200])


def review_autograded(path: Path, cell_timeout: int) -> list[str]:
    """Notes about how the run went (timeouts, huge output capped while it ran)."""
    nb = nbformat.read(path, as_version=4)
    notes, trimmed = [], False
    for cell in nb.cells:
        # At the per-cell timeout nbclient interrupts the kernel: the KeyboardInterrupt is the grader's
        # own, and the timeout's note says what happened (not "the answer raised KeyboardInterrupt").
        timed_out = any(out.get("ename") == "CellTimeoutError" for out in cell.get("outputs", []))
        for out in cell.get("outputs", []):
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if out.get("output_type") == "error" and out.get("evalue") == execute.KERNEL_RESTARTED:
                notes.append(messages.cell_stuck(grade_id, cell_timeout))
            elif out.get("output_type") == "error" and out.get("ename") == "CellTimeoutError":
                notes.append(messages.cell_timed_out(grade_id, cell_timeout))
            elif out.get("output_type") == "error" and cell.metadata.get("nbgrader", {}).get("solution"):
                if out.get("ename") == "NotImplementedError":
                    notes.append(messages.NOT_ANSWERED)
                elif not (timed_out and out.get("ename") == "KeyboardInterrupt"):
                    notes.append(messages.answer_raised(out.get("ename"), str(out.get("evalue", ""))))
            trimmed = trimmed or execute.is_capped(out)
    if trimmed:
        notes.append(messages.output_trimmed(execute.MAX_OUTPUT_CHARS))
    return notes


def make_grading_secret(root: Path) -> None:
    """Once per OUT_DIR, before the workers start: the key of every student's seed."""
    key = root / "grading-secret"
    if not key.exists():
        key.write_text(os.urandom(32).hex())
        key.chmod(0o600)


def student_seed(root: Path, student: str, assignment: str, notebook: bytes | None = None) -> str:
    """The key of a submission's hidden inputs: secret, derived from the class's grading secret, the
    student, the assignment and the submission's bytes. Re-grading the same submission draws the
    same inputs (the same grades); a changed submission draws new ones, so what one submission's
    failures showed says nothing about the next. `notebook`: the bytes as graded; by default the
    copy the grader keeps in the course folder (``submitted/``)."""
    if notebook is None:
        notebook = course.notebook_path(root / "submitted" / student, assignment).read_bytes()
    key = (root / "grading-secret").read_text().encode()
    content = hashlib.sha256(notebook).hexdigest()
    return hmac.new(key, f"{student}/{assignment}/{content}".encode(), hashlib.sha256).hexdigest()


def judge_autograded(
    root: Path, student: str, assignment: str, seed: str, timeout: float
) -> tuple[list[str], list[str]]:
    """Judge the programs the kernel exported; the verdicts' points replace nbgrader's.

    Each test cell's feedback gets the verdict as an output; the programs are reduced to their
    one-line note. Returns (notes, flags)."""
    path = course.notebook_path(root / "autograded" / student, assignment)
    nb = nbformat.read(path, as_version=4)
    programs, anomalies = verdict.read_programs(nb)
    results, refused = verdict.judge(assignment, programs, seed, timeout=timeout, cache=root / verdict.CACHE_FOLDER)
    results = {r.test: r for r in results}
    notes, flags = [], []
    if anomalies or refused:
        flags.append("tampering")  # for a person to look at: it gained nothing (grader/README.md)
    if anomalies:
        notes.append(messages.anomalies_found(anomalies))
    if refused:
        notes.append(messages.programs_refused(refused))
    for cell in nb.cells:
        test = cell.metadata.get("nbgrader", {}).get("grade_id") if verdict.is_test(cell) else None
        for out in cell.get("outputs", []):
            if verdict.MIME in out.get("data", {}):
                out["data"] = {"text/plain": out["data"].get("text/plain", "")}
                if test is not None and test in programs:  # the programs the verdict read
                    out["metadata"] = {feedback.GRADER_OUTPUT: True}
        result = results.get(test)
        if result is not None:
            text = messages.verdict_line(result.passed, result.points, result.max_points, result.message)
            cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=text))
    nbformat.write(nb, path)
    failed = [r.test for r in results.values() if not r.passed]
    if failed:
        notes.append(messages.tests_failed(failed))
    with course.gradebook(root) as gb:
        for test, result in results.items():
            grade = gb.find_grade(test, assignment, assignment, student)
            grade.auto_score = result.points
            grade.needs_manual_grade = False
        gb.db.commit()
    return notes, flags


_courses: dict[int, tuple[Path, object, set]] = {}  # per process and cell timeout: (root, api, staged)
_first_digest: dict[str, str] = {}  # per process: each assignment's digest when it first graded it


SCRATCH = "ch04-worker"  # a worker process's private course folder, in the temporary folder


def reap_scratch() -> list[Path]:
    """Remove the private course folders of worker processes that no longer exist (killed ones
    run no cleanup); returns them."""
    return scratch.remove_orphaned(SCRATCH)


def _scratch_course(task: Task):
    """This process's private course folder and nbgrader API, with the task's assignment staged."""
    if task.cell_timeout not in _courses:
        os.environ.update(nbtools.HEADLESS_ENV)
        warnings.simplefilter("ignore")  # nbgrader's SQLAlchemy and nbformat chatter is not news here
        root = scratch.process_folder(SCRATCH)
        atexit.register(shutil.rmtree, root, ignore_errors=True)  # a killed process's: reap_scratch
        verdict.new_cache(root)  # this process's judges share their compiled programs, the whole run
        _courses[task.cell_timeout] = (root, _api(root, task.cell_timeout, sandbox.probe() is None), set())
    root, api, staged = _courses[task.cell_timeout]
    # Checked on every task: a long-lived worker must not grade with a course that changed on
    # the coordinator's side, nor with files that changed under its running code.
    mine = staging.source_digest(task.assignment)
    if _first_digest.setdefault(task.assignment, mine) != mine:
        raise CourseMismatch(f"the course changed on {socket.gethostname()} while its worker ran: restart it")
    if mine != task.digest:
        raise CourseMismatch(f"{socket.gethostname()} has another version of the course or the grader")
    if task.assignment not in staged:
        staging.stage(root, [task.assignment])
        staged.add(task.assignment)
    return root, api


def grade_task(task: Task) -> Graded:
    """Autograde one submission in a fresh sandboxed kernel, judge it, write its feedback."""
    root, api = _scratch_course(task)
    sandboxed = sandbox.probe() is None
    student, assignment = task.key
    folders = [root / part / student for part in ("submitted", "autograded", "feedback")]
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    target = course.notebook_path(root / "submitted" / student, assignment)
    target.parent.mkdir(parents=True)
    target.write_bytes(task.notebook)
    with course.gradebook(root) as gb:
        gb.update_or_create_student(student)
    try:
        with _Watchdog(task.ceiling) as watchdog:
            graded = _grade_one(api, root, task)
        if watchdog.fired:
            graded = Graded(Result(False, [messages.ceiling_reached(task.ceiling)]))
    except Exception as err:  # noqa: BLE001 - this submission gets 0 with the reason; the rest go on
        graded = Graded(Result(False, [messages.grader_failed("处理", err)]))
    finally:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
        with course.gradebook(root) as gb:
            gb.remove_student(student)  # and its submission: the next task starts clean
    return Graded(graded.result, graded.scores, graded.autograded, graded.feedback, sandboxed)


def _grade_one(api, root: Path, task: Task) -> Graded:
    student, assignment = task.key
    notes, flags = [], []
    # test cells export and stop, hidden ones at the sizes the judge draws; the sandbox passes both on
    os.environ.update({GRADING_ENV: "1", SIZES_ENV: sizes_key(task.seed)})
    try:
        result = api.autograde(assignment, student, force=True, create=True)
    finally:
        del os.environ[GRADING_ENV], os.environ[SIZES_ENV]
    autograded = course.notebook_path(root / "autograded" / student, assignment)
    if not (result["success"] and autograded.exists()):
        return Graded(Result(False, [_failure_reason(result.get("log", ""), result.get("error", ""))]))
    notes += review_autograded(autograded, task.cell_timeout)
    judged_notes, flags = judge_autograded(root, student, assignment, task.seed, task.cell_timeout * 2)
    notes += judged_notes
    pages = api.generate_feedback(assignment, student, force=True)
    if not pages["success"]:
        notes.append(messages.feedback_failed(_failure_reason(pages.get("log", ""), pages.get("error", ""))))
    with course.gradebook(root) as gb:
        scores = {g.name: float(g.score) for g in gb.find_submission_notebook(assignment, assignment, student).grades}
    feedback_pages = {p.name: p.read_bytes() for p in (root / "feedback" / student / assignment).glob("*.html")}
    return Graded(Result(True, notes, flags), scores, autograded.read_bytes(), feedback_pages)


class _Watchdog:
    """Kills the kernels this task started once it has run for `ceiling` seconds."""

    def __init__(self, ceiling: float):
        import psutil

        self.me = psutil.Process()
        self.before = {p.pid for p in self.me.children(recursive=True)}
        self.ceiling, self.fired, self.done = ceiling, False, threading.Event()

    def __enter__(self):
        threading.Thread(target=self._watch, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.done.set()

    def _watch(self):
        import psutil

        if self.done.wait(self.ceiling):
            return
        self.fired = True
        for child in self.me.children(recursive=True):
            if child.pid not in self.before:
                try:
                    child.kill()
                except psutil.NoSuchProcess:
                    pass
