"""An nbgrader course folder ready to autograde: the sources as the kernel must see them, the
release, and the assignments registered in its gradebook. The coordinator keeps one under
OUT_DIR (Formgrader reads it); every grading worker keeps a private one in a temporary folder,
built from its own installed course and checked against the coordinator's digest."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import nbformat

from grader import course, sandbox, verdict

# The modules whose code decides a grade: a change to any of them, to the kit or to an
# assignment's source invalidates earlier grades (and a worker that differs must not grade).
GRADING_MODULES = (
    "course", "staging", "grade", "intake", "worker", "verdict", "sandbox", "forkserver", "feedback", "messages"
)  # fmt: skip


def source_digest(assignment: str) -> str:
    sha = hashlib.sha256()
    for module in GRADING_MODULES:
        sha.update((Path(__file__).parent / f"{module}.py").read_bytes())
    for kit_module in sorted(sandbox.KIT.glob("*.py")):
        sha.update(kit_module.read_bytes())
    sha.update(course.notebook_path(course.SOLUTIONS, assignment).read_bytes())
    return sha.hexdigest()


def stage(root: Path, assignments) -> None:
    """Copy each assignment's source into `root` and release it there (nbgrader registers it in
    the gradebook). nbgrader restores test cells from this source: the kernel never sees a verdict."""
    from grader.release import generate_release

    for assignment in assignments:
        shutil.rmtree(root / "source" / assignment, ignore_errors=True)
        shutil.copytree(course.SOLUTIONS / assignment, root / "source" / assignment)
        path = course.notebook_path(root / "source", assignment)
        nbformat.write(verdict.kernel_notebook(nbformat.read(path, as_version=4)), path)
    generate_release(list(assignments), source=root / "source", release=root / "release", course_root=root)
