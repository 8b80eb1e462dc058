"""An nbgrader course folder ready to autograde: the sources as the kernel must see them, the
release, and the assignments registered in its gradebook. The coordinator keeps one under
OUT_DIR (Formgrader reads it); every grading worker keeps a private one in a temporary folder,
built from its own installed course and checked against the coordinator's digest."""

from __future__ import annotations

import hashlib
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
