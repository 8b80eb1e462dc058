"""Generate the student release (exercises/) from the nbgrader source (solutions/)."""

from __future__ import annotations

import logging
import shutil
import tempfile
from contextlib import nullcontext
from pathlib import Path

from nbgrader.apps import NbGraderAPI
from nbgrader.coursedir import CourseDirectory

from grader import course, nbtools


def generate_release(
    assignments=course.ASSIGNMENTS,
    source: Path = course.SOLUTIONS,
    release: Path = course.EXERCISES,
    course_root: Path | None = None,
) -> None:
    """Run nbgrader's generate_assignment into `release`, then tidy the notebooks it wrote.

    The assignments are registered in the gradebook of `course_root`; without one (a plain
    release) the gradebook nbgrader insists on writing goes to a scratch folder, not the repo.
    """
    release.mkdir(parents=True, exist_ok=True)
    scratch = tempfile.TemporaryDirectory(prefix="ch04-release-") if course_root is None else nullcontext()
    with scratch as scratch_dir:
        root = Path(scratch_dir) if course_root is None else course_root
        config = course.nbgrader_config(root, source=source, release=release)
        api = NbGraderAPI(CourseDirectory(config=config), config=config)
        api.log.setLevel(logging.ERROR)
        for name in assignments:
            if not (source / name).is_dir():
                continue
            result = api.generate_assignment(name, force=True, create=True)
            if not result["success"]:
                raise RuntimeError(f"nbgrader could not release {name}:\n{result['log']}")
            for nb in (release / name).glob("*.ipynb"):
                nbtools.tidy(nb)
            # nbgrader copies everything in the source folder; caches are not course material.
            shutil.rmtree(release / name / ".ipynb_checkpoints", ignore_errors=True)
