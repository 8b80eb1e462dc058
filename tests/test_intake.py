"""Intake (grader/pipeline/intake.py): what happens to a submission before any kernel sees it. Fast: no
kernels. Whatever a submission holds, intake returns a notebook to grade or a reason, and never
raises. The student's own code is never scanned, changed or refused (the grade is decided by the
judge on exported programs); the course's cells are put back as released, in released order."""

import copy
import json

import nbformat
import pytest
from helpers import HONEST_UNUSUAL

from grader import course, messages
from grader.pipeline import discovery, intake
from proof import answers, sample_classes

ASSIGNMENT = "residuals"
RELEASE = answers.release_notebook(ASSIGNMENT)
GOOD = answers.reference_answer(ASSIGNMENT)


def submit(tmp_path, nb=None, raw=None):
    sample_classes.write(tmp_path, "s", ASSIGNMENT, nb, raw=raw)
    return intake.receive(tmp_path / "s" / ASSIGNMENT, ASSIGNMENT, RELEASE)


def test_a_correct_submission_passes_untouched(tmp_path):
    nb, notes, flags = submit(tmp_path, sample_classes.answered(ASSIGNMENT, GOOD))
    assert nb is not None and notes == [] and flags == []


@pytest.mark.parametrize(
    "value",
    [["a", "list"], {"a": 1}, 3, None, True, "x" * 10_000],
    ids=["list", "dict", "int", "null", "bool", "long text"],
)
@pytest.mark.parametrize("key", ["grade_id", "points", "grade", "locked", "solution"])
def test_wrong_typed_metadata_never_raises(tmp_path, key, value):
    nb = sample_classes.answered(ASSIGNMENT, GOOD)
    for cell in nb.cells:
        if "nbgrader" in cell.metadata:
            cell.metadata["nbgrader"][key] = value
    got, notes, flags = submit(tmp_path, nb)
    assert flags == [], (flags, notes)
    if got is not None:  # every graded cell is back as released, each test starting with %%ch4test
        ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in got.cells]
        released = [c.metadata.get("nbgrader", {}).get("grade_id") for c in RELEASE.cells]
        assert [i for i in ids if i in released] == [i for i in released if i in ids]


def test_metadata_that_is_not_a_dict_is_unmarked(tmp_path):
    nb = sample_classes.answered(ASSIGNMENT, GOOD)
    nb.cells[-1].metadata["nbgrader"] = ["not", "a", "dict"]
    got, notes, _ = submit(tmp_path, nb)
    assert got is not None and any("评分元数据不对" in n for n in notes)


def test_deleted_tests_are_restored_in_place_with_their_magic_first(tmp_path):
    nb = sample_classes.answered(ASSIGNMENT, GOOD)
    nb.cells = [c for c in nb.cells if not c.metadata.get("nbgrader", {}).get("grade")]
    got, notes, _ = submit(tmp_path, nb)
    tests = [c for c in got.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert len(tests) == len([c for c in RELEASE.cells if c.metadata.get("nbgrader", {}).get("grade")])
    assert all(c.source.startswith("%%ch4test\n") for c in tests)
    assert len({c.id for c in got.cells}) == len(got.cells), "restored cells need ids of their own"
    assert any("删除了或取消了标记" in n for n in notes)


def test_own_test_cells_are_left_out(tmp_path):
    nb = sample_classes.answered(ASSIGNMENT, GOOD)
    nb.cells.append(nbformat.v4.new_code_cell("%%ch4test\nprint(globals())"))
    got, notes, flags = submit(tmp_path, nb)
    assert flags == [] and not any(c.source.startswith("%%ch4test\nprint") for c in got.cells)
    assert any("不计分" in n for n in notes)


def test_invalid_utf8_and_deep_json_give_a_reason(tmp_path):
    for raw in (b'{"cells": ["\xff\xfe"]}', b"[" * 100_000 + b"]" * 100_000):
        got, notes, _ = submit(tmp_path, raw=raw)
        assert got is None and notes, notes


def test_symlinks_are_refused_not_followed(tmp_path):
    (tmp_path / "s" / ASSIGNMENT).mkdir(parents=True)
    (tmp_path / "s" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").symlink_to(course.notebook_path(course.SOLUTIONS, ASSIGNMENT))
    got, notes, _ = intake.receive(tmp_path / "s" / ASSIGNMENT, ASSIGNMENT, RELEASE)
    assert got is None and "符号链接" in notes[-1]
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / ASSIGNMENT).symlink_to(tmp_path / "s" / ASSIGNMENT, target_is_directory=True)
    got, notes, _ = intake.receive(tmp_path / "t" / ASSIGNMENT, ASSIGNMENT, RELEASE)
    assert got is None and "符号链接" in notes[-1]


UNUSUAL = HONEST_UNUSUAL + '\n\nprint(os.getcwd(), sys.version_info >= (3, 12), describe({"kind": "save"}))\n'


def test_the_students_code_reaches_the_kernel_as_written(tmp_path):
    nb = sample_classes.answered(ASSIGNMENT, GOOD + UNUSUAL)
    nb.cells.insert(3, nbformat.v4.new_code_cell("import ctypes\n%time x = 1\nexec('y = 2')"))
    got, notes, flags = submit(tmp_path, copy.deepcopy(nb))
    assert flags == [] and notes == [messages.cells_added(1)], (flags, notes)
    assert [c.source for c in got.cells] == [c.source for c in nb.cells], "intake changed the student's code"


def test_a_submission_that_breaks_intake_itself_gets_a_reason(tmp_path, monkeypatch):
    def broken(*args):
        raise RuntimeError("surprise")

    monkeypatch.setattr(intake, "read_submission", broken)
    got, notes, flags = submit(tmp_path, sample_classes.answered(ASSIGNMENT, GOOD))
    assert got is None and flags == [] and "无法读取这份提交" in notes[0]


def test_json_of_the_wrong_shape_gives_a_reason(tmp_path):
    got, notes, _ = submit(tmp_path, raw=json.dumps({"cells": 5, "nbformat": 4}).encode())
    assert got is None and notes


# Released order: a course cell runs where it was released, whatever order the notebook has


def _ids(nb) -> list:
    return [c.metadata.get("nbgrader", {}).get("grade_id") or c.source for c in nb.cells]


def _own(text: str):
    return nbformat.v4.new_code_cell(text)


def _moved(nb, grade_id: str, after: str | None, *, with_next: int = 0):
    """`nb` with the course cell `grade_id` (and the `with_next` cells after it) moved right
    after the cell `after` (to the end when None)."""
    ids = _ids(nb)
    start = ids.index(grade_id)
    block = nb.cells[start : start + 1 + with_next]
    del nb.cells[start : start + 1 + with_next]
    where = len(nb.cells) if after is None else _ids(nb).index(after) + 1
    nb.cells[where:where] = block
    return nb


RELEASED = _ids(RELEASE)


def test_a_test_cell_moved_after_the_hidden_tests_goes_back_with_its_own_cells(tmp_path):
    """A visible test moved to the end would run after the hidden ones; it goes back where it was
    released, and the student's cell that followed it (moved with it) still follows it."""
    nb = sample_classes.answered(ASSIGNMENT, GOOD)
    nb.cells.insert(0, _own("before_everything = 1"))
    nb.cells.insert(_ids(nb).index("answer") + 1, _own("after_answer = 1"))
    nb.cells.insert(_ids(nb).index("test_visible_value_grad") + 1, _own("after_first_test = 1"))
    _moved(nb, "test_visible_value_grad", None, with_next=1)
    assert _ids(nb)[-2:] == ["test_visible_value_grad", "after_first_test = 1"]
    got, notes, flags = submit(tmp_path, nb)
    assert flags == [] and messages.cells_reordered() in notes and messages.cells_added(3) in notes, notes
    expected = list(RELEASED)
    expected.insert(0, "before_everything = 1")
    expected.insert(expected.index("answer") + 1, "after_answer = 1")
    expected.insert(expected.index("test_visible_value_grad") + 1, "after_first_test = 1")
    assert _ids(got) == expected


def test_the_answer_moved_below_the_tests_goes_back_above_them():
    nb = _moved(sample_classes.answered(ASSIGNMENT, GOOD), "answer", None)
    notes = intake.restore_release_order(nb, RELEASE)
    assert notes == [messages.cells_reordered()] and _ids(nb) == RELEASED
    assert intake.restore_release_order(nb, RELEASE) == [], "restoring twice changes nothing more"


def test_hidden_tests_swapped_are_put_back_in_order():
    nb = _moved(sample_classes.answered(ASSIGNMENT, GOOD), "test_hidden_random", "test_hidden_residuals")
    assert _ids(nb) != RELEASED
    assert intake.restore_release_order(nb, RELEASE) == [messages.cells_reordered()] and _ids(nb) == RELEASED


def test_a_notebook_in_order_is_untouched():
    nb = sample_classes.answered(ASSIGNMENT, GOOD)
    nb.cells.insert(3, _own("mine = 1"))
    nb.cells.append(_own("mine_at_the_end = 1"))
    nb.cells.insert(0, nbformat.v4.new_markdown_cell("my notes"))
    before, cells = copy.deepcopy(nb), list(nb.cells)
    assert intake.restore_release_order(nb, RELEASE) == []
    assert nb == before and all(a is b for a, b in zip(nb.cells, cells, strict=True))


def test_other_notebooks_beside_the_graded_one_are_named_not_ignored(tmp_path):
    """#45 item 9: a copy (Jupyter's "Make a Copy" writes residuals-Copy1.ipynb) or a notebook in a
    subfolder is not graded, and the student's notes say which, and which one was graded."""
    nb = sample_classes.answered(ASSIGNMENT, GOOD)
    sample_classes.write(tmp_path, "s", ASSIGNMENT, nb)
    folder = tmp_path / "s" / ASSIGNMENT
    nbformat.write(nb, folder / f"{ASSIGNMENT}-Copy1.ipynb")
    (folder / "old").mkdir()
    nbformat.write(nb, folder / "old" / f"{ASSIGNMENT}.ipynb")
    (folder / ".ipynb_checkpoints").mkdir()
    nbformat.write(nb, folder / ".ipynb_checkpoints" / f"{ASSIGNMENT}-checkpoint.ipynb")  # Jupyter's, hidden
    extra = [f"old/{ASSIGNMENT}.ipynb", f"{ASSIGNMENT}-Copy1.ipynb"]
    assert intake.extra_notebooks(folder, ASSIGNMENT) == extra
    graded, notes, flags = intake.receive(folder, ASSIGNMENT, RELEASE)
    expected = f"{ASSIGNMENT}.ipynb"
    assert graded is not None and flags == []
    assert notes == [messages.extra_notebooks(expected, expected, extra)], notes
    assert f"提交里另有 2 个 notebook 没有评分：{extra[0]}、{extra[1]}" in notes[0]


def test_a_lone_notebook_under_another_name_has_no_extra_and_two_without_the_right_one_are_listed(tmp_path):
    nb = sample_classes.answered(ASSIGNMENT, GOOD)
    folder = tmp_path / "s" / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{ASSIGNMENT}-Copy1.ipynb")
    assert intake.extra_notebooks(folder, ASSIGNMENT) == []
    graded, notes, _ = intake.receive(folder, ASSIGNMENT, RELEASE)
    assert graded is not None and notes == [messages.renamed(f"{ASSIGNMENT}.ipynb", f"{ASSIGNMENT}-Copy1.ipynb")]
    nbformat.write(nb, folder / f"{ASSIGNMENT}-Copy2.ipynb")
    assert intake.extra_notebooks(folder, ASSIGNMENT) == []  # nothing is graded: the note names them all
    graded, notes, _ = intake.receive(folder, ASSIGNMENT, RELEASE)
    names = [f"{ASSIGNMENT}-Copy1.ipynb", f"{ASSIGNMENT}-Copy2.ipynb"]
    assert graded is None and notes == [messages.notebook_missing(f"{ASSIGNMENT}.ipynb", names)]


# What a submissions folder holds (grader/pipeline/discovery.py): every entry a submission or not
# graded, with the reason and the likely fix (#52 item 2)


def test_every_entry_of_the_submissions_folder_is_a_submission_or_not_graded_with_a_fix(tmp_path):
    release = answers.release_notebook("softplus")
    sample_classes.write(tmp_path, "c01", "softplus", release)  # the one submission
    (tmp_path / "c02").mkdir()
    nbformat.write(release, tmp_path / "c02" / "softplus.ipynb")  # no assignment folder
    (tmp_path / "c03").mkdir()  # empty
    (tmp_path / "c04").mkdir()
    (tmp_path / "c04" / ".ipynb_checkpoints").mkdir()  # hidden: still empty
    nbformat.write(release, sample_path(tmp_path, "c05", "Softplus"))
    nbformat.write(release, sample_path(tmp_path, "c06", "homework1"))
    nbformat.write(release, sample_path(tmp_path, "c07", "clip_norm"))
    (tmp_path / "c01" / "notes.txt").write_text("my notes")
    (tmp_path / "softplus-final.ipynb").write_text("{}")  # in no student folder
    (tmp_path / ".DS_Store").write_text("")  # hidden: ignored
    (tmp_path / "c08").symlink_to(tmp_path / "c01", target_is_directory=True)
    (tmp_path / "eve\u202egnp.exe").mkdir()
    found = discovery.discover(tmp_path)
    assert found.submissions == [("c01", "softplus")]
    assert sorted((n.student, n.found, n.reason, n.fix) for n in found.not_graded) == [
        ("", "softplus-final.ipynb", discovery.OUTSIDE_STUDENT_FOLDER, "softplus"),
        ("c01", "notes.txt", discovery.FILE_OUTSIDE_ASSIGNMENT, ""),
        ("c02", "softplus.ipynb", discovery.NOTEBOOK_OUTSIDE_ASSIGNMENT, "softplus"),
        ("c03", "", discovery.EMPTY_STUDENT_FOLDER, ""),
        ("c04", "", discovery.EMPTY_STUDENT_FOLDER, ""),
        ("c05", "Softplus", discovery.UNKNOWN_ASSIGNMENT, "softplus"),
        ("c06", "homework1", discovery.UNKNOWN_ASSIGNMENT, ""),
        ("c07", "clip_norm", discovery.UNKNOWN_ASSIGNMENT, "clip_global_norm"),
        ("c08", "", discovery.SYMBOLIC_LINK, ""),
        ("eve\\u202egnp.exe", "", discovery.UNSAFE_STUDENT_ID, ""),
    ]
    assert {n.reason for n in found.not_graded} == set(discovery.REASONS), "a reason the test does not show"


def sample_path(root, student: str, folder: str):
    (root / student / folder).mkdir(parents=True)
    return root / student / folder / f"{folder.lower()}.ipynb"


@pytest.mark.parametrize(
    "name, likely",
    [
        ("Softplus", "softplus"),
        ("SOFTPLUS.ipynb", "softplus"),
        ("softplus-Copy1.ipynb", "softplus"),
        ("soft_plus", "softplus"),
        ("softplus_final", "softplus"),
        ("Safe-Norm", "safe_norm"),
        ("clip_norm", "clip_global_norm"),
        ("homework1", ""),
        ("notes.txt", ""),
    ],
)
def test_the_likely_assignment_ignores_case_and_finds_close_names(name, likely):
    assert discovery.likely_assignment(name) == likely
