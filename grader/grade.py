"""Grade a class: `python -m grader grade SUBMITTED_DIR --out OUT_DIR [--jobs N]`.

nbgrader does the grading (gradebook, autograde, feedback); this module makes it one command
that a broken submission cannot derail. It is split along the process boundary:

* grader/intake.py, in this process: each submission is only read and checked (empty file,
  invalid JSON, wrong file name, cells deleted or edited, answering rules): unusable ones get a
  score of 0 and a reason, the others are copied into a course folder under OUT_DIR.
* grader/worker.py: N worker processes, each with one long-lived nbgrader API, autograde the
  copies in a sandbox and run the verdicts; the supervisor kills a submission that runs past
  the ceiling. All write one SQLite gradebook (students are registered up front here).
* grader/report.py: grades.csv, the feedback pages and the score table, from the gradebook.

A submission whose bytes and whose assignment source have not changed since the last run in
the same OUT_DIR is not graded again: re-runs are idempotent and only new work is done.
Tamper resistance: grader/README.md has the threat model.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

from grader import REPO, course, intake, messages, nbgrader_guard, report, sandbox, verdict, worker
from grader.course import CEILING_SECONDS


class UsageError(Exception):
    """Input that cannot be graded at all: one line for the instructor, exit code 2."""


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


def source_digest(assignment: str) -> str:
    """Changes to an assignment's source, to this grader or to the kit invalidate earlier grades."""
    sha = hashlib.sha256()
    # feedback.py too: its output caps change what is stored
    for module in ("course", "grade", "intake", "worker", "verdict", "sandbox", "feedback", "messages"):
        sha.update((Path(__file__).parent / f"{module}.py").read_bytes())
    for kit_module in sorted(sandbox.KIT.glob("*.py")):
        sha.update(kit_module.read_bytes())
    sha.update(course.notebook_path(course.SOLUTIONS, assignment).read_bytes())
    return sha.hexdigest()


def prepare_course(root: Path) -> None:
    """Copy the sources and register the assignments in the gradebook, redoing only what changed.

    If nbgrader refuses to update an assignment that already has submissions, the course folder
    is rebuilt from scratch (its cached grades are then recomputed, never reused stale).
    """
    from grader.release import generate_release

    stamp = root / "sources.json"
    done = json.loads(stamp.read_text()) if stamp.exists() and (root / "gradebook.db").exists() else {}
    changed = [a for a in course.ASSIGNMENTS if done.get(a) != source_digest(a)]
    if not changed:
        return
    for attempt in ("update", "rebuild"):
        if attempt == "rebuild" or not done:
            shutil.rmtree(root, ignore_errors=True)
            done, changed = {}, course.ASSIGNMENTS
        for assignment in changed:
            shutil.rmtree(root / "source" / assignment, ignore_errors=True)
            shutil.copytree(course.SOLUTIONS / assignment, root / "source" / assignment)
            # nbgrader restores test cells from this source: the kernel never sees a verdict.
            path = course.notebook_path(root / "source", assignment)
            nbformat.write(verdict.kernel_notebook(nbformat.read(path, as_version=4)), path)
        try:
            generate_release(changed, source=root / "source", release=root / "release", course_root=root)
            break
        except RuntimeError:
            if attempt == "rebuild":
                raise
    done.update({a: source_digest(a) for a in changed})
    stamp.write_text(json.dumps(done, indent=1))


def make_grading_secret(root: Path) -> None:
    """Once per OUT_DIR, before the workers start: the key of every student's seed."""
    key = root / "grading-secret"
    if not key.exists():
        key.write_text(os.urandom(32).hex())
        key.chmod(0o600)


def discover(submitted: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(known, unknown) (student, assignment) pairs in nbgrader's submitted layout."""
    known, unknown = [], []
    for student in sorted(p for p in submitted.iterdir() if p.is_dir() and not p.is_symlink() and p.name[0] != "."):
        for folder in sorted(p for p in student.iterdir() if p.is_dir() and not p.name.startswith(".")):
            (known if folder.name in course.ASSIGNMENTS else unknown).append((student.name, folder.name))
    return known, unknown


def _overlaps(a: Path, b: Path) -> bool:
    return a == b or a in b.parents or b in a.parents


def grade(
    submitted: Path,
    out: Path,
    jobs: int,
    ceiling: float = CEILING_SECONDS,
    cell_timeout: int = course.CELL_TIMEOUT,
    echo=print,
    scan_code: bool = True,
) -> list[Outcome]:
    """`scan_code=False` skips the tampering scan (tests use it to prove the verdicts alone)."""
    submitted, out = Path(submitted).resolve(), Path(out).resolve()
    if not submitted.is_dir():
        raise UsageError(f"no such folder: {submitted}")
    for protected in (submitted, course.SOLUTIONS, course.EXERCISES, REPO / "grader"):
        if _overlaps(out, protected.resolve()):
            raise UsageError(f"--out {out} overlaps {protected}; choose a separate output folder")
    known, unknown = discover(submitted)
    for link in sorted(p.name for p in submitted.iterdir() if p.is_symlink()):
        echo(f"  skip  {link}: a symbolic link, not followed (hand in the folder itself)")
    for student, name in unknown:
        echo(f"  skip  {student}/{name}: unknown assignment (known: {', '.join(course.ASSIGNMENTS)})")
    if not known:
        hint = " (only unknown assignments)" if unknown else ""
        raise UsageError(f"nothing to grade in {submitted}: expected <student>/<assignment>/<notebook>.ipynb{hint}")

    root = out / "course"
    echo(f"Grading {len(known)} submission(s) from {submitted} with {jobs} job(s)")
    sandboxed = sandbox.probe() is None
    echo(f"  {sandbox.describe()}")
    if not sandboxed:
        print(f"grader grade: {sandbox.describe()}; every row is flagged 'unsandboxed'", file=sys.stderr)
    prepare_course(root)
    nbgrader_guard.guard_course_folder(root)  # nbgrader run inside OUT/course refuses to grade around us
    make_grading_secret(root)
    cache_path = root / "outcomes.json"
    cache = json.loads(cache_path.read_text()) if cache_path.exists() else {}

    releases = {  # what students were given
        a: nbformat.read(course.notebook_path(course.EXERCISES, a), as_version=4) for a in {a for _, a in known}
    }
    sources = {a: source_digest(a) for a in releases}
    outcomes: dict[tuple[str, str], Outcome] = {}
    pending = []
    for student, assignment in known:
        folder = submitted / student / assignment
        settings = f"/{ceiling}/{cell_timeout}/{sandboxed}/{scan_code}"
        digest = intake.folder_digest(folder) + sources[assignment] + settings
        previous = cache.get(f"{student}/{assignment}")
        if previous and previous["digest"] == digest:
            outcomes[(student, assignment)] = Outcome(**previous)
            continue
        outcome = Outcome(student, assignment, digest=digest)
        nb, outcome.notes, outcome.flags = intake.receive(folder, assignment, releases[assignment], scan_code)
        outcome.flags += [] if sandboxed else ["unsandboxed"]
        target = course.notebook_path(root / "submitted" / student, assignment)
        shutil.rmtree(target.parent, ignore_errors=True)
        shutil.rmtree(root / "autograded" / student / assignment, ignore_errors=True)
        shutil.rmtree(root / "feedback" / student / assignment, ignore_errors=True)
        if nb is not None and _write_for_grading(nb, target, outcome):
            pending.append((student, assignment))
        outcomes[(student, assignment)] = outcome
    echo(f"  {len(known) - len(pending)} unchanged or unreadable, {len(pending)} to autograde")

    _register_students(root, {s for s, _ in pending})
    done = [0]

    def progress(key, result):
        done[0] += 1
        status = "ok" if not result.notes else result.notes[0][:70]
        echo(f"  [{done[0]:>{len(str(len(pending)))}}/{len(pending)}] {key[0]}/{key[1]}: {status}")

    results = worker.run_workers(root, pending, jobs, ceiling, cell_timeout, progress, sandboxed) if pending else {}
    _collect_scores(root, outcomes, results)
    for key, outcome in outcomes.items():
        cache[f"{key[0]}/{key[1]}"] = asdict(outcome)
    cache_path.write_text(json.dumps(cache, indent=1, ensure_ascii=False))
    report.write_outputs(root, out, outcomes)
    return [outcomes[k] for k in sorted(outcomes)]


def _write_for_grading(nb, target: Path, outcome: Outcome) -> bool:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        return True
    except Exception as err:  # noqa: BLE001 - e.g. text nbformat cannot write back
        outcome.notes.append(messages.grader_failed("保存", err))
        return False


def _register_students(root: Path, students: set[str]) -> None:
    """Create students before the workers start, so parallel workers never race to insert one."""
    with course.gradebook(root) as gb:
        for student in sorted(students):
            gb.update_or_create_student(student)


def _collect_scores(root: Path, outcomes: dict, results: dict[worker.Key, worker.Result]) -> None:
    from nbgrader.api import MissingEntry

    with course.gradebook(root) as gb:
        for key, outcome in outcomes.items():
            outcome.max_score = gb.find_assignment(outcome.assignment).max_score
            if key not in results:
                continue  # unchanged (cached) or unreadable: keeps what it has
            result = results[key]
            outcome.notes += result.notes
            outcome.flags = result.flags + outcome.flags
            try:
                submission = gb.find_submission(outcome.assignment, outcome.student)
            except MissingEntry:
                submission = None
            produced = course.notebook_path(root / "autograded" / outcome.student, outcome.assignment)
            if result.succeeded and submission is not None and produced.exists():
                outcome.score, outcome.graded = submission.score, True
            else:
                outcome.score, outcome.graded = 0.0, False


def main(args) -> int:
    try:
        outcomes = grade(
            Path(args.submitted), Path(args.out), args.jobs, args.ceiling, args.cell_timeout, scan_code=args.scan_code
        )
    except UsageError as err:
        print(f"grader grade: {err}", file=sys.stderr)
        return 2
    report.print_table(outcomes)
    print(f"\nWrote {Path(args.out) / 'grades.csv'} and feedback under {Path(args.out) / 'feedback'}")
    return 0
