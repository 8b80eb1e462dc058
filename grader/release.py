"""Generate the student release (exercises/) from the nbgrader source (solutions/)."""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path

from nbgrader.apps import NbGraderAPI
from nbgrader.coursedir import CourseDirectory

from grader import course, nbtools


def generate_release(assignments=course.ASSIGNMENTS, source: Path = course.SOLUTIONS,
                     release: Path = course.EXERCISES) -> None:
    """Run nbgrader's generate_assignment into `release`, then tidy the notebooks it wrote."""
    release.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ch04-release-") as scratch:
        # The gradebook nbgrader insists on writing lives in the scratch folder, not the repo.
        config = course.nbgrader_config(Path(scratch), source=source, release=release)
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
