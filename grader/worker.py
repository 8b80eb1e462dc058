"""The grading workers: each a process with one long-lived nbgrader API that autogrades
submissions from a queue, runs the verdicts on the evidence the kernel sent out, and writes
the feedback; and the supervisor that feeds them, enforces the per-submission ceiling by
killing a runaway kernel, and survives a worker that dies.

Messages from a worker are `Started` and `Finished`; the result of one submission is a `Result`.
"""

from __future__ import annotations

import hashlib
import hmac
import multiprocessing as mp
import os
import queue
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from ch4protocol import SEED_ENV

from grader import course, feedback, messages, sandbox, verdict

Key = tuple[str, str]  # (student, assignment)


@dataclass(frozen=True)
class Result:
    """What autograding one submission gave: whether nbgrader produced a score, and why not."""

    succeeded: bool
    notes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Started:
    key: Key
    pid: int  # the worker's: its kernels are killed when the submission runs too long


@dataclass(frozen=True)
class Finished:
    key: Key
    result: Result


def _api(root: Path, cell_timeout: int, sandboxed: bool):
    import logging

    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import ClearHiddenTests, GetGrades

    config = course.nbgrader_config(root, source=root / "source", release=root / "release", cell_timeout=cell_timeout)
    config.OverwriteCells.add_missing_cells = True  # a deleted test cell is put back, not scored 0
    if sandboxed:
        config.Autograde.autograde_preprocessors = sandbox.autograde_preprocessors()
    else:  # outputs are capped either way
        config.Autograde.autograde_preprocessors = feedback.autograde_preprocessors()
    # Feedback shows each test's outcome and message but not the hidden tests' code, so an
    # assignment can be reused next term. Nothing the student wrote is live in it (grader/feedback.py).
    config.GenerateFeedback.preprocessors = [
        GetGrades,
        ClearHiddenTests,
        CSSHTMLHeaderPreprocessor,
        feedback.SanitizeFeedback,
    ]
    feedback.configure(config)
    api = NbGraderAPI(CourseDirectory(config=config), config=config)
    api.log.setLevel(logging.ERROR)
    return api


def _failure_reason(log: str) -> str:
    if "DeadKernelError" in log or "Kernel died" in log or "kernel died" in log:
        return messages.KERNEL_DIED
    last = [line for line in log.strip().splitlines() if line.strip()]
    return messages.nbgrader_failed(last[-1][:200] if last else "")


def review_autograded(path: Path, cell_timeout: int) -> list[str]:
    """Notes about how the run went (timeouts, huge output capped while it ran)."""
    nb = nbformat.read(path, as_version=4)
    notes, trimmed = [], False
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error" and out.get("ename") == "CellTimeoutError":
                notes.append(messages.cell_timed_out(cell.metadata.get("nbgrader", {}).get("grade_id"), cell_timeout))
            elif out.get("output_type") == "error" and cell.metadata.get("nbgrader", {}).get("solution"):
                if out.get("ename") == "NotImplementedError":
                    notes.append(messages.NOT_ANSWERED)
                else:
                    notes.append(messages.answer_raised(out.get("ename"), str(out.get("evalue", ""))))
            trimmed = trimmed or feedback.is_capped(out)
    if trimmed:
        notes.append(messages.output_trimmed(feedback.MAX_OUTPUT_CHARS))
    return notes


def student_seed(root: Path, student: str, assignment: str) -> str:
    """The seed of a student's test inputs: secret, fixed for this OUT_DIR (so re-grading gives
    the same grades), different for every student and assignment."""
    key = (root / "grading-secret").read_text().encode()
    return hmac.new(key, f"{student}/{assignment}".encode(), hashlib.sha256).hexdigest()


def judge_autograded(root: Path, student: str, assignment: str, seed: str) -> tuple[list[str], list[str]]:
    """Run the verdicts here on the kernel's evidence; their points replace nbgrader's.

    Each test cell's feedback gets the verdict as an output; evidence payloads are reduced to
    their one-line text. Returns (notes, flags)."""
    path = course.notebook_path(root / "autograded" / student, assignment)
    nb = nbformat.read(path, as_version=4)
    evidence, anomalies = verdict.read_evidence(nb)
    results = {r.test: r for r in verdict.judge(assignment, evidence, seed)}
    notes, flags = [], []
    if anomalies:
        flags.append("tampering")
        notes.append(messages.tampering(anomalies))
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if verdict.MIME in out.get("data", {}):
                out["data"] = {"text/plain": out["data"].get("text/plain", "")}
        result = results.get(cell.metadata.get("nbgrader", {}).get("grade_id")) if verdict.is_test(cell) else None
        if result is not None:
            passed = result.passed and not anomalies
            text = messages.verdict_line(passed, result.points, result.max_points, result.message)
            cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=text))
    nbformat.write(nb, path)
    failed = [r.test for r in results.values() if not r.passed]
    if failed and not anomalies:
        notes.append(messages.tests_failed(failed))
    with course.gradebook(root) as gb:
        for test, result in results.items():
            grade = gb.find_grade(test, assignment, assignment, student)
            grade.auto_score = 0.0 if anomalies else result.points
            grade.needs_manual_grade = False
        gb.db.commit()
    return notes, flags


def _worker(root: str, cell_timeout: int, sandboxed: bool, tasks, results) -> None:
    """Autograde (student, assignment) pairs until told to stop; one nbgrader API for all."""
    root = Path(root)
    os.environ.update({"JAX_PLATFORMS": "cpu", "MPLBACKEND": "Agg"})
    warnings.simplefilter("ignore")  # nbgrader's SQLAlchemy and nbformat chatter is not news here
    api = _api(root, cell_timeout, sandboxed)
    while (key := tasks.get()) is not None:
        results.put(Started(key, os.getpid()))
        try:
            result = _grade_one(api, root, *key, cell_timeout)
        except Exception as err:  # noqa: BLE001 - this submission gets 0 with the reason; the rest go on
            result = Result(False, [messages.grader_failed("处理", err)])
        results.put(Finished(key, result))


def _grade_one(api, root: Path, student: str, assignment: str, cell_timeout: int) -> Result:
    notes, flags = [], []
    seed = student_seed(root, student, assignment)
    os.environ[SEED_ENV] = seed  # the kernel's test inputs; the sandbox passes it on
    try:
        result = api.autograde(assignment, student, force=True, create=True)
    finally:
        del os.environ[SEED_ENV]
    autograded = course.notebook_path(root / "autograded" / student, assignment)
    if result["success"] and autograded.exists():
        notes += review_autograded(autograded, cell_timeout)
        judged_notes, flags = judge_autograded(root, student, assignment, seed)
        notes += judged_notes
        pages = api.generate_feedback(assignment, student, force=True)
        if not pages["success"]:
            notes.append(messages.feedback_failed(_failure_reason(pages.get("log", ""))))
    else:
        notes.append(_failure_reason(result.get("log", "") + result.get("error", "")))
    return Result(result["success"], notes, flags)


def _kill_kernels(worker_pid: int) -> None:
    import psutil

    try:
        for child in psutil.Process(worker_pid).children(recursive=True):
            child.kill()
    except psutil.NoSuchProcess:
        pass


def run_workers(
    root: Path, pending: list[Key], jobs: int, ceiling: float, cell_timeout: int, progress, sandboxed: bool
) -> dict[Key, Result]:
    """Autograde `pending` with `jobs` workers; `progress(key, result)` after each one."""
    ctx = mp.get_context("spawn")
    tasks, results = ctx.Queue(), ctx.Queue()
    for task in pending:
        tasks.put(task)
    workers = [
        ctx.Process(target=_worker, args=(str(root), cell_timeout, sandboxed, tasks, results), daemon=True)
        for _ in range(min(jobs, len(pending)))
    ]
    for w in workers:
        tasks.put(None)
        w.start()
    running: dict[Key, tuple[int, float]] = {}
    killed: set[Key] = set()
    done: dict[Key, Result] = {}
    try:
        while len(done) < len(pending):
            try:
                message = results.get(timeout=1.0)
            except queue.Empty:
                message = None
            if isinstance(message, Started):
                running[message.key] = (message.pid, time.monotonic())
            elif isinstance(message, Finished):
                key = message.key
                running.pop(key, None)
                done[key] = message.result
                if key in killed:
                    done[key] = Result(False, [messages.ceiling_reached(ceiling)])
                progress(key, done[key])
            for key, (pid, started) in list(running.items()):
                if time.monotonic() - started > ceiling and key not in killed:
                    killed.add(key)
                    _kill_kernels(pid)
            if not any(w.is_alive() for w in workers) and results.empty() and len(done) < len(pending):
                for key in pending:  # a worker itself died: whatever it held gets a reason
                    if key not in done:
                        done[key] = Result(False, [messages.WORKER_DIED])
                        progress(key, done[key])
    finally:
        for w in workers:
            w.join(timeout=5)
            if w.is_alive():
                w.kill()
    return done
