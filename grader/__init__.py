"""Course tooling: notebook execution and hygiene, nbgrader release and grading."""

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
