"""The class taken in: every entry `discovery` found becomes an outcome, in the coordinator.

A submission unchanged since the last run into the same OUT_DIR (same bytes, same assignment
source and grading code, same settings) keeps its journaled outcome. Any other is read and checked
(`intake.receive`) and copied where nbgrader's own tools look for it (OUT_DIR/course/submitted/,
with its timestamp.txt and submission_secret.txt); a readable one becomes a `worker.Task`, an
unreadable one is stored at once with 0 and the reason. What discovery did not take as a
submission is an outcome too, not graded (`Outcome.not_graded`), which never reaches the
gradebook: it is a row of the CSVs and the class report.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from grader import course, messages
from grader.pipeline import discovery, intake, staging, store, worker


@dataclass(frozen=True)
class Settings:
    """What, besides a submission's bytes and its assignment's source, decides its result."""

    ceiling: float
    cell_timeout: int
    sandboxed: bool
    gradebook: str  # its URL, without a password (course.redacted)

    @property
    def key(self) -> str:
        return f"/{self.ceiling}/{self.cell_timeout}/{self.sandboxed}/judge/{self.gradebook}"


@dataclass
class Batch:
    outcomes: dict[tuple[str, str], store.Outcome] = field(default_factory=dict)  # every one of the run
    tasks: list[worker.Task] = field(default_factory=list)  # to grade
    reused: int = 0  # unchanged since the last run
    unreadable: int = 0  # 0 with the reason, no kernel


def take_in(root: Path, submitted: Path, found: discovery.Found, settings: Settings) -> Batch:
    """Every outcome of the run and the tasks to send."""
    batch, cache = Batch(), store.read_journal(root)
    releases = {  # what students were given
        a: nbformat.read(course.notebook_path(course.EXERCISES, a), as_version=4) for _, a in found.submissions
    }
    sources = {a: staging.source_digest(a) for a in releases}
    for student, assignment in found.submissions:
        folder = submitted / student / assignment
        digest = intake.folder_digest(folder) + sources[assignment] + settings.key
        previous = cache.get((student, assignment))
        if previous and previous["digest"] == digest:
            batch.outcomes[(student, assignment)] = store.Outcome(**previous)
            batch.reused += 1
            continue
        outcome = batch.outcomes[(student, assignment)] = store.Outcome(student, assignment, digest=digest)
        task = _read(root, folder, outcome, releases[assignment], settings, sources[assignment])
        if task is not None:
            batch.tasks.append(task)
        else:  # unreadable: 0 with the reason, stored now
            store.store(root, None, outcome)
            store.journal(root, outcome)
            batch.unreadable += 1
    for item in found.not_graded:
        key = (item.student, item.found)
        if key not in batch.outcomes:  # an escaped id may repeat a real one: the real one stays
            outcome = store.Outcome(item.student, item.found, flags=[store.NOT_GRADED], not_graded=item.reason)
            outcome.fix = item.fix
            batch.outcomes[key] = outcome
    return batch


def _read(root: Path, folder: Path, outcome: store.Outcome, release, settings: Settings, source: str):
    """One submission read, noted and kept in the course folder; its task, or None if unreadable."""
    student, assignment = outcome.student, outcome.assignment
    nb, outcome.notes, outcome.flags = intake.receive(folder, assignment, release)
    outcome.extra_notebooks = intake.extra_notebooks(folder, assignment)
    outcome.flags += [] if settings.sandboxed else ["unsandboxed"]
    target = course.notebook_path(root / "submitted" / student, assignment)
    shutil.rmtree(target.parent, ignore_errors=True)
    _keep_nbgrader_files(folder, target.parent, outcome)
    if nb is None or not _write_for_grading(nb, target, outcome):
        return None
    notebook = target.read_bytes()
    seed = worker.student_seed(root, student, assignment, notebook)
    return worker.Task(student, assignment, notebook, seed, source, settings.cell_timeout, settings.ceiling)


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
