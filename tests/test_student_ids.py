"""Student ids are data: never a spreadsheet formula in grades.csv, never a control or
bidirectional character in the instructor's terminal (#22).

One real `grade` run on a class of empty files (intake scores them 0 without a kernel): ids that
a spreadsheet would run as formulas, and ids with U+202E or a tab, which are not graded: their
rows (#52 item 2: nothing vanishes) show each id escaped.
"""

import csv

import pytest

from grader import grade
from grader.output import report
from proof import sample_classes

pytestmark = pytest.mark.xdist_group("student_ids")
FORMULAS = ["=1+1", "+1+2", "-2", "@SUM(1+1)", '=HYPERLINK("x","y")']
UNSAFE = ["eve\u202egnp.exe", "\tx", "a\u200bb", "red\x1b[31m"]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    submitted, out = tmp_path_factory.mktemp("class"), tmp_path_factory.mktemp("graded")
    for student in FORMULAS + UNSAFE + ["alice"]:
        sample_classes.write(submitted, student, "safe_norm", raw=b"")
    lines = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LANGUAGE", "en")  # the lines in English
        outcomes = grade.grade(submitted, out, jobs=1, echo=lines.append)
    with open(out / "grades.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    return {"out": out, "lines": lines, "rows": rows, "outcomes": outcomes}


def test_formula_ids_are_neutralised_in_grades_csv(graded):
    header, *rows = graded["rows"]
    ids = [row[0] for row in rows if row[4] != "not-graded"]
    assert sorted(ids) == sorted(["'" + s for s in FORMULAS] + ["alice"]), ids
    assert all(cell[0] not in "=+-@\t\r" for row in rows for cell in row if cell), rows


def test_ids_with_control_or_bidirectional_characters_are_refused_and_escaped(graded):
    text = "\n".join(graded["lines"])
    for student in UNSAFE:
        said = f"  not graded  {report.escaped(student)}/: control or bidirectional characters in the student id"
        assert said in text, text
        assert not (graded["out"] / "feedback" / student).exists()
    graded_ones = {o.student for o in graded["outcomes"] if not o.not_graded}
    assert graded_ones == set(FORMULAS + ["alice"])
    refused = sorted(row[0] for row in graded["rows"][1:] if row[4] == "not-graded")
    assert refused == sorted(report.spreadsheet_cell(report.escaped(s)) for s in UNSAFE), refused
    assert all(report.is_safe(cell) for row in graded["rows"] for cell in row)
    assert all(report.is_safe(line) for line in graded["lines"]), [line for line in graded["lines"] if "skip" in line]
    assert "eve\\u202egnp.exe" in text and "\\tx" in text


@pytest.mark.parametrize("cell", ["=1+1", "+1", "-1", "@A1", "\t=1", "\r=1"])
def test_every_formula_start_gets_a_quote(cell):
    assert report.spreadsheet_cell(cell) == "'" + cell


@pytest.mark.parametrize("cell", ["alice", "14", "0", "tampering rules", "", "a=1"])
def test_plain_cells_are_unchanged(cell):
    assert report.spreadsheet_cell(cell) == cell
