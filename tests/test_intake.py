"""Intake (grader/intake.py): what happens to a submission before any kernel sees it. Fast: no
kernels. Whatever a submission holds, intake returns a notebook to grade or a reason, and never
raises."""

import json

import nbformat
import pytest

from grader import answers, course, intake, sample_classes

ASSIGNMENT = "softplus"
RELEASE = answers.release_notebook(ASSIGNMENT)
GOOD = answers.reference_answer(ASSIGNMENT)


def submit(tmp_path, nb=None, raw=None):
    sample_classes.write(tmp_path, "s", ASSIGNMENT, nb, raw=raw)
    return intake.receive(tmp_path / "s" / ASSIGNMENT, ASSIGNMENT, RELEASE, scan_code=True)


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
    got, notes, _ = intake.receive(tmp_path / "s" / ASSIGNMENT, ASSIGNMENT, RELEASE, scan_code=True)
    assert got is None and "符号链接" in notes[-1]
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / ASSIGNMENT).symlink_to(tmp_path / "s" / ASSIGNMENT, target_is_directory=True)
    got, notes, _ = intake.receive(tmp_path / "t" / ASSIGNMENT, ASSIGNMENT, RELEASE, scan_code=True)
    assert got is None and "符号链接" in notes[-1]


def test_a_broken_rule_is_a_rules_flag_with_the_line(tmp_path):
    got, notes, flags = submit(tmp_path, sample_classes.answered(ASSIGNMENT, GOOD + "\nimport os\n"))
    assert got is None and flags == ["rules"]
    assert "作答区没有遵守作答规则" in notes[-2] and notes[-1].startswith("第 ") and "导入了 os" in notes[-1]


def test_a_submission_that_breaks_intake_itself_gets_a_reason(tmp_path, monkeypatch):
    def broken(*args):
        raise RuntimeError("surprise")

    monkeypatch.setattr(intake, "read_submission", broken)
    got, notes, flags = submit(tmp_path, sample_classes.answered(ASSIGNMENT, GOOD))
    assert got is None and flags == [] and "无法读取这份提交" in notes[0]


def test_json_of_the_wrong_shape_gives_a_reason(tmp_path):
    got, notes, _ = submit(tmp_path, raw=json.dumps({"cells": 5, "nbformat": 4}).encode())
    assert got is None and notes
