"""What an instructor reads after grading: grades.csv, the feedback pages (nbgrader's, with
the grader's notes on top, or a page of their own when nothing was graded), the score table,
and for Formgrader a notebook to review where nothing was graded; and, in nbgrader's own layout,
the pages `nbgrader release_feedback` hands to students through the exchange.

Student ids and notes come from students: in grades.csv a cell a spreadsheet would read as a
formula is neutralised, and the terminal never gets a control or bidirectional character raw."""

from __future__ import annotations

import csv
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


def write_outputs(root: Path, out: Path, outcomes: dict) -> None:
    """OUT/feedback/<student>/<assignment>/*.html and OUT/grades.csv for every outcome, and
    OUT/course/feedback/ for those handed in through nbgrader's exchange."""
    for (student, assignment), outcome in outcomes.items():
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
                (target / page.name).write_text(text, encoding="utf-8")
        else:
            page = NOTES.get_template("ungraded.html.j2").render(
                _notes(outcome), assignment=assignment, score=f"{outcome.score:g}", max_score=f"{outcome.max_score:g}",
                resubmit=messages.RESUBMIT,
            )  # fmt: skip
            (target / f"{assignment}.html").write_text(page, encoding="utf-8")
        release_layout(root, student, assignment, target)
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student_id", "assignment", "score", "max_score", "flags"])
        for key in sorted(outcomes):
            o = outcomes[key]
            row = [o.student, o.assignment, f"{o.score:g}", f"{o.max_score:g}", " ".join(o.flags)]
            writer.writerow([spreadsheet_cell(cell) for cell in row])
    write_wide(out, outcomes)


# —— #33: the same grades one row per student, for a spreadsheet or an LMS ——

# Canvas's gradebook import (Gradebook > Import): these columns, one per assignment after them, and
# a "Points Possible" row. Canvas finds a student by ID (its own numeric user id: left blank, where
# a numeric student id would name somebody else), then SIS User ID, then SIS Login ID: ours is
# the login, as on the shared server (docs/class-report.md).
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def write_wide(out: Path, outcomes: dict) -> None:
    """OUT/grades_wide.csv (student_id, a column per assignment, total) and OUT/grades_canvas.csv,
    from the same outcomes as grades.csv; a cell is blank where a student handed nothing in."""
    assignments = [a for a in course.ASSIGNMENTS if any(key[1] == a for key in outcomes)]
    students = sorted({student for student, _ in outcomes})
    scores = {s: [_score(outcomes.get((s, a))) for a in assignments] for s in students}
    total = {s: sum(o.score for (who, _), o in outcomes.items() if who == s) for s in students}
    wide = [[s, *scores[s], f"{total[s]:g}"] for s in students]
    _write_csv(out / "grades_wide.csv", [["student_id", *assignments, "total"], *wide])
    possible = [f"{max(o.max_score for (_, a), o in outcomes.items() if a == name):g}" for name in assignments]
    canvas = [CANVAS_COLUMNS + assignments, ["Points Possible", "", "", "", "", *possible]]
    _write_csv(out / "grades_canvas.csv", canvas + [[s, "", "", s, "", *scores[s]] for s in students])


def _score(outcome) -> str:
    return "" if outcome is None else f"{outcome.score:g}"


def _write_csv(path: Path, rows: list[list[str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([[spreadsheet_cell(cell) for cell in row] for row in rows])


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
        note = escaped("; ".join(o.notes)) if o.notes else ""  # student text (an exception message)
        flags = " ".join(o.flags)
        echo(f"{o.student:<{width}}  {o.assignment:<16} {o.score:>5g} / {o.max_score:<3g}  {flags:<11} {note}")
    print_totals(outcomes, width, echo)


def print_totals(outcomes: list, width: int, echo=print) -> None:
    """#33: each student's total over the assignments of this run, and how many were graded."""
    possible = sum({o.assignment: o.max_score for o in outcomes}.values())
    count = len({o.assignment for o in outcomes})
    echo(f"\n{_pad(_('student'), width)}  {_pad(_('total'), 13, right=True)}  {_('graded')}")
    for student in sorted({o.student for o in outcomes}):
        mine = [o for o in outcomes if o.student == student]
        total, graded = sum(o.score for o in mine), sum(o.graded for o in mine)
        echo(f"{student:<{width}}  {total:>5g} / {possible:<5g}  {graded}/{count}")
