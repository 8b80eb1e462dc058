"""What a submissions folder holds, every entry accounted for (#52 item 2).

nbgrader's layout is SUBMITTED_DIR/<student>/<assignment>/<notebook>.ipynb. `discover` reads the
folder and nothing else: each <student>/<assignment>/ of a course assignment is a submission to
grade; every other entry is `NotGraded`, with the reason and, where a course assignment is close
(`likely_assignment`), the likely fix, so that it reaches the class report and every CSV instead
of vanishing. Hidden entries (a name starting with ".": .ipynb_checkpoints, .DS_Store) are
ignored, as Jupyter and nbgrader ignore them.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from grader import REPO, course
from grader.i18n import _
from grader.output import report
from grader.pipeline import UsageError

# Why an entry is not graded: a code that class.json keeps and report.not_graded_reason words.
UNKNOWN_ASSIGNMENT = "unknown_assignment"  # <student>/<folder>/, not a course assignment
NOTEBOOK_OUTSIDE_ASSIGNMENT = "notebook_outside_assignment"  # <student>/<x>.ipynb
FILE_OUTSIDE_ASSIGNMENT = "file_outside_assignment"  # <student>/<file>, not a notebook
EMPTY_STUDENT_FOLDER = "empty_student_folder"  # <student>/ with nothing in it
OUTSIDE_STUDENT_FOLDER = "outside_student_folder"  # SUBMITTED_DIR/<file>: whose is it?
SYMBOLIC_LINK = "symbolic_link"  # never followed: it may point anywhere
UNSAFE_STUDENT_ID = "unsafe_student_id"  # a control or bidirectional character (report.is_safe)
REASONS = (
    UNKNOWN_ASSIGNMENT,
    NOTEBOOK_OUTSIDE_ASSIGNMENT,
    FILE_OUTSIDE_ASSIGNMENT,
    EMPTY_STUDENT_FOLDER,
    OUTSIDE_STUDENT_FOLDER,
    SYMBOLIC_LINK,
    UNSAFE_STUDENT_ID,
)
CLOSE_ENOUGH = 0.6  # difflib's ratio: "clip_norm" finds clip_global_norm, "homework1" nothing


@dataclass(frozen=True)
class NotGraded:
    """An entry of the submissions folder that is not a submission. `student` is its student
    folder ("" for a file directly in SUBMITTED_DIR), `found` the name inside it ("" for the
    student folder itself), both escaped when unsafe; `fix`, the assignment it most likely is."""

    student: str
    found: str
    reason: str
    fix: str = ""


@dataclass
class Found:
    submissions: list[tuple[str, str]] = field(default_factory=list)  # (student, assignment), to grade
    not_graded: list[NotGraded] = field(default_factory=list)


def checked_folders(submitted: Path, out: Path) -> tuple[Path, Path]:
    """Both folders made absolute; refused (UsageError) when there is nothing to read or when
    OUT_DIR would write into the submissions or the course."""
    submitted, out = Path(submitted).resolve(), Path(out).resolve()
    if not submitted.is_dir():
        raise UsageError(_("no such folder: {folder}").format(folder=submitted))
    for protected in (submitted, course.SOLUTIONS, course.EXERCISES, REPO / "grader"):
        protected = protected.resolve()
        if out == protected or out in protected.parents or protected in out.parents:
            raise UsageError(
                _("--out {out} overlaps {protected}; choose a separate output folder").format(
                    out=out, protected=protected
                )
            )
    return submitted, out


def visible(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if not p.name.startswith("."))


def discover(submitted: Path) -> Found:
    """Every visible entry of `submitted`, two levels down, as a submission or as NotGraded."""
    found = Found()

    def skip(student: str, name: str, reason: str, fix: str = "") -> None:
        found.not_graded.append(NotGraded(student, report.escaped(name), reason, fix))

    for top in visible(submitted):
        if not report.is_safe(top.name):
            skip(report.escaped(top.name), "", UNSAFE_STUDENT_ID)
        elif top.is_symlink():
            skip(top.name, "", SYMBOLIC_LINK)
        elif not top.is_dir():
            skip("", top.name, OUTSIDE_STUDENT_FOLDER, likely_assignment(top.name))
        elif not visible(top):
            skip(top.name, "", EMPTY_STUDENT_FOLDER)
        else:
            for entry in visible(top):
                if entry.name in course.ASSIGNMENTS and (entry.is_dir() or entry.is_symlink()):
                    found.submissions.append((top.name, entry.name))  # a linked one: intake says why it is 0
                elif entry.is_symlink():
                    skip(top.name, entry.name, SYMBOLIC_LINK)
                elif entry.is_dir():
                    skip(top.name, entry.name, UNKNOWN_ASSIGNMENT, likely_assignment(entry.name))
                elif entry.suffix == ".ipynb":
                    skip(top.name, entry.name, NOTEBOOK_OUTSIDE_ASSIGNMENT, likely_assignment(entry.name))
                else:
                    skip(top.name, entry.name, FILE_OUTSIDE_ASSIGNMENT)
    return found


def likely_assignment(name: str) -> str:
    """The course assignment `name` most likely means ("" when none is close): the same name in
    other letter case ("Softplus"), one that it contains ("softplus-Copy1.ipynb",
    "softplus_final"), or the closest by difflib's ratio ("soft_plus", "clip_norm")."""
    stem = name.removesuffix(".ipynb").lower()
    if stem in course.ASSIGNMENTS:
        return stem
    inside = [a for a in course.ASSIGNMENTS if a in stem]
    if inside:
        return max(inside, key=len)
    close = difflib.get_close_matches(stem, course.ASSIGNMENTS, n=1, cutoff=CLOSE_ENOUGH)
    return close[0] if close else ""
