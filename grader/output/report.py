"""What an instructor reads after grading: grades.csv, the feedback pages (nbgrader's, with
the grader's notes on top, or a page of their own when nothing was graded), the score table,
and for Formgrader a notebook to review where nothing was graded; and, in nbgrader's own layout,
the pages `nbgrader release_feedback` hands to students through the exchange.

Student ids and notes come from students: in grades.csv a cell a spreadsheet would read as a
formula is neutralised, and the terminal never gets a control or bidirectional character raw."""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import unicodedata
from pathlib import Path

import jinja2
import nbformat

from grader import course, messages
from grader.i18n import _

# OUT/course/<WORKER_FEEDBACK>/<student>/<assignment>/: the page each worker made, before the
# grader's notes. OUT/course/feedback/ is nbgrader's: what release_feedback sends (see below).
WORKER_FEEDBACK = "worker-feedback"

# Control, format (bidirectional overrides such as U+202E, zero-width characters), surrogate
# (undecodable bytes in a file name) and line-breaking characters: text holding one shows as
# something else than it is.
UNSAFE_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}
# A spreadsheet reads a cell starting with one of these as a formula (OWASP, "CSV injection")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def is_safe(text: str) -> bool:
    return not any(unicodedata.category(c) in UNSAFE_CATEGORIES for c in text)


def escaped(text: str) -> str:
    """`text` for a terminal: each unsafe character as its escape (\\u202e, \\t)."""
    return "".join(c if is_safe(c) else c.encode("unicode_escape", "backslashreplace").decode() for c in text)


def spreadsheet_cell(text: str) -> str:
    """A leading ' makes a spreadsheet show the cell as text instead of running it."""
    return "'" + text if text.startswith(FORMULA_START) else text


NOTES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent.parent / "templates" / "notes"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)


def _notes(outcome) -> dict:
    return {"title": messages.notes_title(outcome.student, outcome.assignment), "notes": outcome.notes}


def _notes_html(outcome) -> str:
    return NOTES.get_template("notes.html.j2").render(_notes(outcome))


def write_whole(path: Path, text: str) -> None:
    """`path` holds `text` or what it held before, never a part (a run killed while writing, a
    reader in between): written beside it, then renamed over it."""
    part = path.with_name(f".{path.name}.part")
    try:
        with open(part, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(part, path)
    except BaseException:
        part.unlink(missing_ok=True)
        raise


def write_outputs(root: Path, out: Path, outcomes: dict) -> None:
    """OUT/feedback/<student>/<assignment>/*.html for every submission, OUT/grades.csv and the other
    CSVs for every outcome (those not graded too, with a blank score: `_points`), and OUT/course/feedback/ for
    those handed in through nbgrader's exchange."""
    for (student, assignment), outcome in outcomes.items():
        if outcome.not_graded:
            continue  # not a submission: no assignment to file a page under (the report names it)
        target = out / "feedback" / student / assignment
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True, exist_ok=True)
        produced = sorted((root / WORKER_FEEDBACK / student / assignment).glob("*.html"))
        if outcome.graded and produced:
            for page in produced:
                text = page.read_text(encoding="utf-8")
                if outcome.notes:
                    text = (
                        text.replace("<body>", "<body>" + _notes_html(outcome), 1)
                        if "<body>" in text
                        else _notes_html(outcome) + text
                    )
                write_whole(target / page.name, text)
        else:
            page = NOTES.get_template("ungraded.html.j2").render(
                _notes(outcome), assignment=assignment, score=f"{outcome.score:g}", max_score=f"{outcome.max_score:g}",
                resubmit=messages.RESUBMIT,
            )  # fmt: skip
            write_whole(target / f"{assignment}.html", page)
        release_layout(root, student, assignment, target)
    rows = [[o.student, o.assignment, *_points(o), " ".join(o.flags)] for _, o in sorted(outcomes.items())]
    _write_csv(out / "grades.csv", [["student_id", "assignment", "score", "max_score", "flags"], *rows])
    write_wide(out, outcomes)


def _points(outcome) -> list[str]:
    """score and max_score as grades.csv writes them: blank for what was not graded (no score at
    all, which a spreadsheet or Canvas reads as no grade; a 0 would be one)."""
    return ["", ""] if outcome.not_graded else [f"{outcome.score:g}", f"{outcome.max_score:g}"]


# —— what is not graded (grader/pipeline/discovery.py): the reason and the likely fix ——


def where(student: str, found: str) -> str:
    """What was found, as a path under SUBMITTED_DIR: c05/Softplus, c03/, notes.txt."""
    return f"{student}/{found}" if student and found else (found or f"{student}/")


def not_graded_reason(student: str, found: str, reason: str, fix: str) -> tuple[str, str]:
    """(why, the likely fix) of what was found in a student folder and not graded, in the
    instructor's language; `reason` is a code of grader/pipeline/discovery.py, `fix` the
    assignment it most likely is ("" when none is close)."""
    guess = _("did you mean {fix}/? ").format(fix=fix) if fix else ""
    known = ", ".join(course.ASSIGNMENTS)
    texts = {
        "unknown_assignment": (
            _("unknown assignment"),
            guess + _("rename the folder to {path} and grade again").format(path=f"{student}/{fix}/")
            if fix
            else _("not an assignment of this course (the assignments: {known})").format(known=known),
        ),
        "notebook_outside_assignment": (
            _("a notebook outside an assignment folder"),
            guess + _("move it to {path} and grade again").format(path=f"{student}/{fix}/{fix}.ipynb")
            if fix
            else _("move it into {path} and grade again").format(path=f"{student}/<assignment>/"),
        ),
        "file_outside_assignment": (
            _("a file outside an assignment folder"),
            _("not a notebook: if the student meant to hand one in, collect it again"),
        ),
        "empty_student_folder": (
            _("an empty student folder"),
            _("nothing was handed in, or collecting lost it: collect again or ask the student"),
        ),
        "outside_student_folder": (
            _("a file outside any student folder"),
            guess
            + _("move it to {path} and grade again").format(
                path=f"<student>/{fix}/{fix}.ipynb" if fix else "<student>/<assignment>/"
            ),
        ),
        "symbolic_link": (
            _("a symbolic link, not followed"),
            _("hand in the folder itself, not a link to it"),
        ),
        "unsafe_student_id": (
            _("control or bidirectional characters in the student id"),
            _("rename the folder to the student's id without them"),
        ),
    }
    return texts.get(reason, (reason, ""))


def not_graded_line(student: str, found: str, reason: str, fix: str) -> str:
    """What was found and not graded, in one line: where, why, the likely fix."""
    why, fix = not_graded_reason(student, found, reason, fix)
    return f"{escaped(where(student, found))}: {why}" + (f"; {fix}" if fix else "")


# —— #33: the same grades one row per student, for a spreadsheet or an LMS ——

# Canvas's gradebook import (Gradebook > Import): these columns, one per assignment after them, and
# a "Points Possible" row. Canvas finds a student by ID (its own numeric user id: left blank, where
# a numeric student id would name somebody else), then SIS User ID, then SIS Login ID: ours is
# the login, as on the shared server (docs/class-report.md).
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def write_wide(out: Path, outcomes: dict) -> None:
    """OUT/grades_wide.csv (student_id, a column per assignment, total, not_graded) and
    OUT/grades_canvas.csv, from the same outcomes as grades.csv: a row for every student of
    grades.csv, a cell blank where a student has no score (nothing handed in, or not graded).
    grades_wide's last column says what was not graded, why and the likely fix; Canvas's import
    has no column for it (any other column would become an assignment): there it stays blank."""
    graded = {key: o for key, o in outcomes.items() if not o.not_graded}
    assignments = [a for a in course.ASSIGNMENTS if any(key[1] == a for key in graded)]
    students = sorted({student for student, _ in outcomes})
    scores = {s: [_score(graded.get((s, a))) for a in assignments] for s in students}
    total = {s: _score_sum([o for (who, _), o in graded.items() if who == s]) for s in students}
    missed = {
        s: "; ".join(
            not_graded_line(o.student, o.assignment, o.not_graded, o.fix)
            for (who, _), o in sorted(outcomes.items())
            if who == s and o.not_graded
        )
        for s in students
    }
    wide = [[s, *scores[s], total[s], missed[s]] for s in students]
    _write_csv(out / "grades_wide.csv", [["student_id", *assignments, "total", "not_graded"], *wide])
    possible = [f"{max(o.max_score for (_, a), o in graded.items() if a == name):g}" for name in assignments]
    canvas = [CANVAS_COLUMNS + assignments, ["Points Possible", "", "", "", "", *possible]]
    # a file outside any student folder (student "") is no one Canvas could import it for
    _write_csv(out / "grades_canvas.csv", canvas + [[s, "", "", s, "", *scores[s]] for s in students if s])


def _score(outcome) -> str:
    return "" if outcome is None else f"{outcome.score:g}"


def _score_sum(graded: list) -> str:
    """A student's total over what was graded: blank, not 0, when nothing was (as a missing score)."""
    return f"{sum(o.score for o in graded):g}" if graded else ""


def _write_csv(path: Path, rows: list[list[str]]) -> None:
    text = io.StringIO(newline="")
    csv.writer(text).writerows([[spreadsheet_cell(cell) for cell in row] for row in rows])
    write_whole(path, text.getvalue())


def release_layout(root: Path, student: str, assignment: str, pages: Path) -> None:
    """nbgrader's release_feedback sends OUT/course/feedback/<student>/<assignment>/*.html and
    needs the submission's timestamp.txt and submission_secret.txt beside them (the secret names
    the page in the exchange, so only its student finds it). A submission that did not come
    through the exchange has neither, and nothing to release.

    The student's copy lands in ~/ch04/<assignment>/feedback/<timestamp>/ (fetch_feedback): the
    same page, which needs nothing beside it (its maths is MathML)."""
    target = root / "feedback" / student / assignment
    shutil.rmtree(target, ignore_errors=True)
    submitted = root / "submitted" / student / assignment
    if not all((submitted / name).is_file() for name in course.NBGRADER_FILES):
        return
    target.mkdir(parents=True)
    for name in course.NBGRADER_FILES:
        shutil.copyfile(submitted / name, target / name)
    for page in pages.glob("*.html"):
        shutil.copyfile(page, target / page.name)


REVIEW_NOTE = (
    "⚠️ 这份提交没有自动评分（0 分），需要人工查看。评分程序的说明（也在作答区下方的评语里）：\n\n"
    "{notes}\n\n"
    "如果判断有误：在下面各个测试单元格里手工给分，分数会覆盖自动评分的 0 分（只改成绩库，不改 grades.csv）。"
)


def write_review_notebook(root: Path, outcome) -> None:
    """OUT/course/autograded/<student>/<assignment>/: what Formgrader opens for a submission that
    earned no score. The student's notebook as it was handed in, when readable (kept in
    OUT/course/submitted/), else the release; never run, outputs cleared, the reasons on top."""
    kept = course.notebook_path(root / "submitted" / outcome.student, outcome.assignment)
    try:
        nb = nbformat.read(kept, as_version=4)
    except Exception:  # noqa: BLE001 - not readable, or not kept: the release stands in for it
        nb = nbformat.read(course.notebook_path(course.EXERCISES, outcome.assignment), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    # The notes may quote the student (a file name, an error): a fence longer than any run of
    # backticks in them keeps them literal text, never markup or script in Formgrader's page.
    text = "\n".join(outcome.notes)
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    note = nbformat.v4.new_markdown_cell(REVIEW_NOTE.format(notes=f"{fence}text\n{text}\n{fence}"))
    nb.cells.insert(0, note)
    path = course.notebook_path(root / "autograded" / outcome.student, outcome.assignment)
    shutil.rmtree(path.parent, ignore_errors=True)
    path.parent.mkdir(parents=True)
    nbformat.write(nb, path)


# Where a line may break: at spaces, and around each CJK character or punctuation mark (Chinese
# has no spaces between words); never inside a run of other characters (a word, a file name).
CJK = "\u2e80-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
LINE_PIECES = re.compile(rf"\s+|[{CJK}]|[^\s{CJK}]+")


def progress_line(prefix: str, status: str, width: int | None = None) -> str:
    """`prefix` then `status` on one line of the terminal: rich's width (the terminal's, COLUMNS,
    or 80 when the output is not a terminal) and rich's cell lengths (a CJK character takes two
    columns). A status too long for it is cut where a line may break (LINE_PIECES) and ends with
    "…"; the whole note is in the table at the end."""
    from rich.cells import cell_len
    from rich.console import Console

    width = width or Console().width
    room = max(width - cell_len(prefix), 10)
    if cell_len(status) <= room:
        return prefix + status
    kept = ""
    for piece in LINE_PIECES.findall(status):
        if cell_len(kept + piece) > room - 1:  # one column for the ellipsis
            break
        kept += piece
    return prefix + kept.rstrip() + "…"


def _pad(text: str, width: int, right: bool = False) -> str:
    """`text` padded to `width` terminal columns (a CJK character takes two)."""
    from rich.cells import cell_len

    gap = " " * max(width - cell_len(text), 0)
    return gap + text if right else text + gap


def print_table(outcomes: list, echo=print) -> None:
    """One line per submission, notes whole (they are the student's, in Chinese); the headers
    in the instructor's language."""
    width = max([len(o.student) for o in outcomes] + [7])
    head = [
        _pad(_("student"), width),
        _pad(_("assignment"), 16),
        _pad(_("score"), 11, right=True),
        _pad(_("flags"), 11),
    ]
    echo(f"\n{head[0]}  {head[1]} {head[2]}  {head[3]} {_('notes')}")
    for o in outcomes:
        if o.not_graded:
            why, fix = not_graded_reason(o.student, o.assignment, o.not_graded, o.fix)
            shown = _pad(_("not graded"), 11, right=True)
            echo(f"{escaped(o.student):<{width}}  {escaped(o.assignment):<16} {shown}  {' '.join(o.flags):<11} "
                 + why + (f"; {fix}" if fix else ""))  # fmt: skip
            continue
        note = escaped("; ".join(o.notes)) if o.notes else ""  # student text (an exception message)
        flags = " ".join(o.flags)
        echo(f"{o.student:<{width}}  {o.assignment:<16} {o.score:>5g} / {o.max_score:<3g}  {flags:<11} {note}")
    print_totals(outcomes, width, echo)


def print_totals(outcomes: list, width: int, echo=print) -> None:
    """#33: each student's total over the assignments of this run, and how many were graded."""
    graded = [o for o in outcomes if not o.not_graded]
    possible = sum({o.assignment: o.max_score for o in graded}.values())
    count = len({o.assignment for o in graded})
    echo(f"\n{_pad(_('student'), width)}  {_pad(_('total'), 13, right=True)}  {_('graded')}")
    for student in sorted({o.student for o in outcomes if o.student}):  # "": a file outside any student folder
        mine = [o for o in graded if o.student == student]
        total, done = _score_sum(mine) or "—", sum(o.graded for o in mine)
        echo(f"{escaped(student):<{width}}  {total:>5} / {possible:<5g}  {done}/{count}")
