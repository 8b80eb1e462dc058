"""What an instructor reads after grading: grades.csv, the feedback pages (nbgrader's, with
the grader's notes on top, or a page of their own when nothing was graded), the score table.

Student ids and notes come from students: in grades.csv a cell a spreadsheet would read as a
formula is neutralised, and the terminal never gets a control or bidirectional character raw."""

from __future__ import annotations

import csv
import html
import shutil
import unicodedata
from pathlib import Path

from grader import feedback, messages

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


def _notes_html(outcome) -> str:
    items = "".join(f"<li>{html.escape(n)}</li>" for n in outcome.notes)
    return (
        f'<div style="border:2px solid #c60;padding:8px;margin:8px;font-family:sans-serif">'
        f"<b>{html.escape(messages.notes_title(outcome.student, outcome.assignment))}</b>"
        f"<ul>{items}</ul></div>"
    )


def write_outputs(root: Path, out: Path, outcomes: dict) -> None:
    """OUT/feedback/<student>/<assignment>/*.html and OUT/grades.csv for every outcome."""
    feedback.copy_mathjax(out / "feedback")  # the pages load it from there
    for (student, assignment), outcome in outcomes.items():
        target = out / "feedback" / student / assignment
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True, exist_ok=True)
        produced = sorted((root / "feedback" / student / assignment).glob("*.html"))
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
            page = (
                f'<!DOCTYPE html><html lang="zh"><meta charset="utf-8"><title>{html.escape(assignment)}'
                f"</title><body><h1>{html.escape(assignment)}：{outcome.score:g} / {outcome.max_score:g}</h1>"
                f"{_notes_html(outcome)}<p>{messages.RESUBMIT}</p></body></html>"
            )
            (target / f"{assignment}.html").write_text(page, encoding="utf-8")
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student_id", "assignment", "score", "max_score", "flags"])
        for key in sorted(outcomes):
            o = outcomes[key]
            row = [o.student, o.assignment, f"{o.score:g}", f"{o.max_score:g}", " ".join(o.flags)]
            writer.writerow([spreadsheet_cell(cell) for cell in row])


def print_table(outcomes: list, echo=print) -> None:
    width = max([len(o.student) for o in outcomes] + [7])
    echo(f"\n{'student':<{width}}  {'assignment':<16} {'score':>11}  {'flags':<11} notes")
    for o in outcomes:
        note = escaped("; ".join(o.notes)) if o.notes else ""  # student text (an exception message)
        flags = " ".join(o.flags)
        echo(f"{o.student:<{width}}  {o.assignment:<16} {o.score:>5g} / {o.max_score:<3g}  {flags:<11} {note}")
