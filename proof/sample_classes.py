"""Sample classes of submissions, built from the release and the catalogue: a class of broken
submissions that the grading pipeline must survive (the attacks and the classes built from them
are in proof/hostile.py, the demo class and what the self-proof expects of it in proof/demo.py).

Every submission starts from the committed release notebook (what students receive) and
changes only what a student could change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import nbformat

from grader import course
from proof import answers


@dataclass(frozen=True)
class Expectation:
    student: str
    assignment: str
    verdict: str  # "full", "zero", "less" (than full) or "any" (only the note matters)
    why: str  # what this submission is: the requirement a wrong answer violates, a reason...
    note: str = ""  # a phrase the grading notes must contain, if any


def write(dest: Path, student: str, assignment: str, nb=None, name: str | None = None, raw: bytes | None = None):
    folder = dest / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name or f"{assignment}.ipynb")
    if raw is not None:
        path.write_bytes(raw)
    elif nb is not None:
        nbformat.write(nb, path)


def answered(assignment: str, answer: str):
    return answers.with_answer(answers.release_notebook(assignment), answer)


def _grade_cells(nb):
    return [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]


def broken_class(dest: Path, assignment: str) -> list[Expectation]:
    """One submission per way a hand-in can be broken, next to correct ones, written to `dest`."""
    cases = broken_cases(assignment)
    for _, put in cases:
        put(dest)
    return [expectation for expectation, _ in cases]


def broken_cases(assignment: str) -> list[tuple[Expectation, Callable[[Path], None]]]:
    """(what must happen, how to write the submission) for each broken hand-in, in the order
    they must be written (a link points to a student written before it). Nothing is written:
    test ids come from here."""
    good = answers.reference_answer(assignment)
    cases = []

    def add(student, nb=None, verdict="zero", why="", note="", then=None, **kw):
        def put(dest: Path) -> None:
            write(dest, student, assignment, nb, **kw)
            if then is not None:
                then(dest / student / assignment)

        cases.append((Expectation(student, assignment, verdict, why, note), put))

    add("ok-1", answered(assignment, good), "full", "correct, graded next to the broken ones")
    add("bad-json", raw=b'{"cells": [', why="invalid JSON", note="不是合法的 JSON")
    add("bad-empty", raw=b"", why="empty file", note="空文件")
    add("bad-not-notebook", raw=b'{"hello": "world"}', why="JSON that is not a notebook", note="不是合法的 notebook")
    forgot = lambda folder: (folder / "notes.txt").write_text("I forgot the notebook\n")  # noqa: E731
    add("bad-missing", why="no notebook in the folder", note="缺少 notebook", then=forgot)
    add("renamed", answered(assignment, good), "full", "notebook under another name", "文件名应为", name="copy.ipynb")

    nb = answered(assignment, good)
    nb.cells = [c for c in nb.cells if not c.metadata.get("nbgrader", {}).get("grade")]
    add("tests-deleted", nb, "full", "all test cells deleted: restored from the gradebook", "删除了或取消了标记")

    nb = answered(assignment, "raise NotImplementedError()")
    for cell in _grade_cells(nb):
        cell.source = "pass"
    add("tests-edited", nb, "zero", "test cells replaced by `pass` with no answer", "修改了只读单元格")

    nb = answered(assignment, "raise NotImplementedError()")
    for cell in _grade_cells(nb):
        cell.metadata["nbgrader"]["points"] = 100
    add("points-raised", nb, "zero", "points raised in test metadata with no answer", "评分元数据")

    nb = answered(assignment, "raise NotImplementedError()")
    for cell in _grade_cells(nb):
        del cell.metadata["nbgrader"]
        cell.source = "pass"
    add("tests-unmarked", nb, "zero", "test cells unmarked and emptied with no answer", "删除了或取消了标记")

    nb = answered(assignment, good)
    nb.cells.insert(2, nbformat.v4.new_code_cell("extra = 1 + 1"))
    add("cells-added", nb, "full", "an extra cell of the student's own", "新增了 1 个单元格")

    add(
        "answer-raises",
        answered(assignment, good + "\nraise ValueError('学生代码出错')"),
        "any",
        "the answer cell raises after defining the functions",
        "作答区运行时报错",
    )
    # Past the per-cell limit the cell is interrupted (its functions are defined by then) and the
    # tests still run: full marks tell that apart from the per-submission ceiling, which scores 0.
    endless = good + "\nwhile True:\n    pass"
    add("infinite-loop", answered(assignment, endless), "full", "an endless loop after the answer", "已被中断")
    # A cell of the student's own that no interrupt stops (the regular expression engine never
    # checks for signals): the kernel is restarted, the cells before it run again, the tests after
    # it pass.
    nb = answered(assignment, good)
    last_test = max(i for i, cell in enumerate(nb.cells) if (cell.metadata.get("nbgrader") or {}).get("grade"))
    nb.cells.insert(last_test, nbformat.v4.new_code_cell('import re\nre.match(r"(a|aa)+$", "a" * 60 + "b")'))
    add("stuck-in-c", nb, "full", "a cell stuck where no interrupt reaches", "中断也停不下它")
    slow = good + "\nimport time\nget_ipython().events.register('pre_run_cell', lambda *args: time.sleep(15))"
    add(
        "slow-every-cell",
        answered(assignment, slow),
        "zero",
        "every cell slowed down: per-submission ceiling",
        "时间上限",
    )
    add("os-exit", answered(assignment, "import os\nos._exit(3)"), "zero", "kernel exits", "内核在运行中崩溃")
    crash = answered(assignment, "import ctypes\nctypes.string_at(0)")
    add("segfault", crash, "zero", "kernel segfaults", "内核在运行中崩溃")
    add("huge-output", answered(assignment, good + "\nprint('x' * 5_000_000)"), "full", "5 MB of output", "输出过长")

    nb = answered(assignment, good)
    nb.cells.insert(2, nbformat.v4.new_code_cell("extra = 2", metadata={"nbgrader": {"grade_id": ["a", "list"]}}))
    _grade_cells(nb)[0].metadata["nbgrader"]["points"] = "ten"
    add("bad-metadata-types", nb, "full", "a list as grade_id, text as points", "评分元数据不对")
    add("invalid-utf8", raw=b'{"cells": ["\xff\xfe"]}', why="bytes that are not UTF-8", note="不是合法的 JSON")
    solution = course.notebook_path(course.SOLUTIONS, assignment)
    link = lambda folder: (folder / f"{assignment}.ipynb").symlink_to(solution)  # noqa: E731
    add("symlink-notebook", why="the notebook is a link to the solution", note="符号链接", then=link)

    def link_folder(dest: Path) -> None:
        (dest / "symlink-folder").mkdir()
        (dest / "symlink-folder" / assignment).symlink_to(dest / "ok-1" / assignment, target_is_directory=True)

    why = "the folder is a link to another student's"
    cases.append((Expectation("symlink-folder", assignment, "zero", why, "符号链接"), link_folder))
    return cases
