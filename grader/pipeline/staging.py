"""An nbgrader course folder ready to autograde: the sources as the kernel must see them, the
release, and the assignments registered in its gradebook. The coordinator keeps one under
OUT_DIR (Formgrader reads it); every grading worker keeps a private one in a temporary folder,
built from its own installed course and checked against the coordinator's digest."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import nbformat

from grader import course
from grader.judging import verdict
from grader.kernels import sandbox

# The code that decides a grade: the grader's modules at the top (course, grade, i18n, messages, nbtools) and
# the subpackages along the data flow up to the feedback page. A change to any of it, to the kit
# or to an assignment's source invalidates earlier grades (and a worker that differs must not
# grade). The cluster (transport) and the instructor's tools are not in it.
GRADER = Path(__file__).resolve().parent.parent
GRADING_CODE = (
    "course.py",
    "grade.py",
    "i18n.py",
    "messages.py",
    "nbtools.py",
    "pipeline",
    "kernels",
    "judging",
    "output",
)


def grading_files() -> list[Path]:
    """The files of GRADING_CODE, in a fixed order."""
    found = []
    for name in GRADING_CODE:
        path = GRADER / name
        found += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return found


def source_digest(assignment: str) -> str:
    sha = hashlib.sha256()
    for path in grading_files():
        sha.update(path.relative_to(GRADER).as_posix().encode())
        sha.update(path.read_bytes())
    for kit_module in sorted(sandbox.KIT.glob("*.py")):
        sha.update(kit_module.read_bytes())
    sha.update(course.notebook_path(course.SOLUTIONS, assignment).read_bytes())
    return sha.hexdigest()


def stage(root: Path, assignments) -> None:
    """Copy each assignment's source into `root` and release it there (nbgrader registers it in
    the gradebook). nbgrader restores test cells from this source: the kernel never sees a verdict."""
    from grader.pipeline.release import generate_release

    for assignment in assignments:
        shutil.rmtree(root / "source" / assignment, ignore_errors=True)
        shutil.copytree(course.SOLUTIONS / assignment, root / "source" / assignment)
        path = course.notebook_path(root / "source", assignment)
        nbformat.write(verdict.kernel_notebook(nbformat.read(path, as_version=4)), path)
    generate_release(list(assignments), source=root / "source", release=root / "release", course_root=root)


def prepare_course(root: Path, url: str) -> None:
    """OUT_DIR/course staged and the assignments registered in the gradebook at `url`, redoing only
    what changed since the last run (sources.json records it).

    If nbgrader refuses to update an assignment that already has submissions, the course folder
    is rebuilt from scratch (its cached grades are then recomputed, never reused stale)."""
    stamp = root / "sources.json"
    recorded = json.loads(stamp.read_text()) if stamp.exists() else {}
    # a stamp holds for the gradebook it was made with (and a SQLite one that still exists)
    same_gradebook = recorded.get("gradebook") == course.redacted(url) and (
        course.is_shared(url) or (root / "gradebook.db").exists()
    )
    done = recorded.get("sources", {}) if same_gradebook else {}
    changed = [a for a in course.ASSIGNMENTS if done.get(a) != source_digest(a)]
    if not changed:
        return
    course.remember_gradebook(root, url)  # Formgrader and later runs in this OUT_DIR find it there
    for attempt in ("update", "rebuild"):
        if attempt == "rebuild" or not done:
            start_afresh(root, url)
            done, changed = {}, course.ASSIGNMENTS
        try:
            stage(root, changed)
            break
        except RuntimeError:
            if attempt == "rebuild":
                raise
    done.update({a: source_digest(a) for a in changed})
    stamp.write_text(json.dumps({"gradebook": course.redacted(url), "sources": done}, indent=1))


def start_afresh(root: Path, url: str) -> None:
    """An empty course folder for a new gradebook. A SQLite gradebook under it loses nbgrader's
    tables but keeps the grader's history of earlier runs (grader/output/history.py; the schema
    version nbgrader stamped stays, so nbgrader takes the database for its own); a shared one
    (--db) is not touched here, as before."""
    kept = root / "gradebook.db"
    keep = not course.is_shared(url) and kept.is_file()
    for path in sorted(root.iterdir()) if root.is_dir() else []:
        if not (keep and path == kept):
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    if keep:
        import sqlalchemy
        from nbgrader.api import Base

        engine = sqlalchemy.create_engine(url)
        try:
            Base.metadata.drop_all(engine)
        finally:
            engine.dispose()
    course.remember_gradebook(root, url)
