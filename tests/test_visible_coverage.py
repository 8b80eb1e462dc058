"""Every requirement a statement lists is checked by a visible test, so a student who passes the
visible tests (and nbgrader's Validate) is not surprised at grading.

The proof that counts is per catalogued wrong answer: each one must fail at least one visible
test (a test cell without a hidden block). It needs a kernel per entry, so it is asserted where
each entry is already scored once, in `tests/test_selfproof.py::test_catalogue_answer`; this
module checks what that proof rests on, without kernels:

* which tests are visible (`answers.visible_tests`) is what the release shows the student;
* exemptions (`# visible-exempt: <reason>` in a wrong answer's file) are few and reasoned;
* each statement's scoring paragraph lists every test's points, in order, with the right totals,
  and each test cell's title states its own points;
* the points follow difficulty (CONTRIBUTING, "Exercises").
"""

import re

import nbformat
import pytest

from grader import course
from grader.judging import verdict
from proof import answers

# Easiest first; CONTRIBUTING states the scale. Each exercise is worth at least the one before.
DIFFICULTY = (
    "stop_gradient", "residuals", "softplus", "safe_norm", "clip_global_norm", "coloring", "soft_values", "ode_adjoint",
)  # fmt: skip
MAX_EXEMPTIONS = 2  # in the whole catalogue: an exemption is a requirement students are graded on unwarned
# An answer right at every public shape and wrong at others (issue #50: a method switched on the
# size) can only be caught by a size or structure the hidden tests draw. Such an exemption says
# "drawn at grading", and its exercise's statement warns that the hidden tests draw them; at most
# two per exercise (clip_global_norm draws a structure and a max_norm).
DRAWN = "drawn at grading"
SCORING = re.compile(r"\*\*评分\*\*（共 (\d+) 分）：可见测试 (\d+) 分——(.*?)；\s*隐藏测试 (\d+) 分——(.*?)。", re.S)
POINTS = re.compile(r"（(\d+) 分）")
TITLE = re.compile(r"^# 🧪 (可见|隐藏)测试 (\d+)（(\d+) 分）：")


def graded_cells(assignment: str, where=course.SOLUTIONS):
    nb = nbformat.read(course.notebook_path(where, assignment), as_version=4)
    return [c for c in nb.cells if verdict.is_test(c)]


def statement(assignment: str) -> str:
    nb = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
    return next(c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "statement")


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_visible_tests_are_what_the_release_shows(assignment):
    visible = answers.visible_tests(assignment)
    released = {c.metadata["nbgrader"]["grade_id"]: c.source for c in graded_cells(assignment, course.EXERCISES)}
    source = {c.metadata["nbgrader"]["grade_id"]: c.source for c in graded_cells(assignment)}
    assert visible, f"{assignment}: no visible test"
    assert set(released) == set(source), f"{assignment}: the release has other test cells than the source"
    shown = {gid for gid, text in released.items() if text == source[gid]}
    assert shown == visible, f"{assignment}: visible by the source {sorted(visible)}, shown whole {sorted(shown)}"


def test_exemptions_are_few_and_reasoned():
    exempt = [e for e in answers.entries() if e.visible_exemption is not None]
    drawn = [e for e in exempt if DRAWN in e.visible_exemption]
    others = [e for e in exempt if e not in drawn]
    assert len(others) <= MAX_EXEMPTIONS, f"{len(others)} exemptions: {[e.path.name for e in others]}"
    for assignment in {e.assignment for e in drawn}:
        mine = [e.path.name for e in drawn if e.assignment == assignment]
        assert len(mine) <= 2, f"{assignment}: {mine}"
        said = statement(assignment)
        says_drawn = r"(尺寸|长度|结构|max_norm)[^。]*随机|随机[^。]*(尺寸|长度|结构|维数|余切)"
        assert "隐藏测试" in said and re.search(says_drawn, said), (
            f"{assignment}: an exemption for what the hidden tests draw, but the statement does not say they draw it"
        )
    for e in exempt:
        assert e.kind == "wrong", f"{e.assignment}/{e.path.name}: only a wrong answer can be exempt"
        assert len(e.visible_exemption) >= 40, f"{e.assignment}/{e.path.name}: say why no visible test can catch it"


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_statement_lists_the_points_of_every_test(assignment):
    cells = graded_cells(assignment)
    points = [c.metadata["nbgrader"]["points"] for c in cells]
    hidden = ["### BEGIN HIDDEN TESTS" in c.source for c in cells]
    found = SCORING.search(statement(assignment))
    assert found, f"{assignment}: no scoring paragraph (**评分**（共 N 分）：可见测试 …；隐藏测试 …。) in the statement"
    total, visible_total, visible_list, hidden_total, hidden_list = found.groups()
    stated = [int(p) for p in POINTS.findall(visible_list)] + [int(p) for p in POINTS.findall(hidden_list)]
    assert stated == points, f"{assignment}: the statement lists points {stated}, the tests carry {points}"
    assert int(total) == sum(points)
    assert int(visible_total) == sum(p for p, h in zip(points, hidden, strict=True) if not h)
    assert int(hidden_total) == sum(p for p, h in zip(points, hidden, strict=True) if h)
    for number, (cell, p, h) in enumerate(zip(cells, points, hidden, strict=True), 1):
        title = TITLE.match(cell.source.splitlines()[1])
        gid = cell.metadata["nbgrader"]["grade_id"]
        assert title, f"{assignment}/{gid}: title line should read '# 🧪 可见测试 k（N 分）：…'"
        assert title.groups() == ("隐藏" if h else "可见", str(number), str(p)), f"{assignment}/{gid}: {title.group(0)}"


def test_points_follow_difficulty():
    assert sorted(DIFFICULTY) == sorted(course.ASSIGNMENTS)
    totals = [sum(c.metadata["nbgrader"]["points"] for c in graded_cells(a)) for a in DIFFICULTY]
    assert totals == sorted(totals) and totals[-1] > totals[-2], dict(zip(DIFFICULTY, totals, strict=True))


# The function that is an exercise's key idea: a visible test that computed its reference with it
# would hand the student the method (the hidden tests, which students never read, may).
KEY_FUNCTIONS = {
    "softplus": {"logaddexp", "log1p", "softplus", "log_sigmoid", "expit", "tanh"},
    "safe_norm": {"where", "maximum"},
    "stop_gradient": {"stop_gradient"},
}


@pytest.mark.parametrize("assignment", sorted(KEY_FUNCTIONS))
def test_no_visible_test_computes_a_reference_with_the_key_idea(assignment):
    source = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
    found = {}
    for cell in source.cells:
        if verdict.is_test(cell) and "### BEGIN HIDDEN TESTS" not in cell.source:
            named = set(re.findall(r"\b(?:np|jnp|jax\.nn|lax|jax\.lax|scipy\.special)\.(\w+)", cell.source))
            named |= set(re.findall(r"\b(\w+)\(", cell.source)) & KEY_FUNCTIONS[assignment]
            if named & KEY_FUNCTIONS[assignment]:
                found[cell.metadata["nbgrader"]["grade_id"]] = sorted(named & KEY_FUNCTIONS[assignment])
    assert not found, f"{assignment}: visible tests use the exercise's key idea for references: {found}"
