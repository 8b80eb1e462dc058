"""The summary of an exercise's tests in the student's kernel: its last cell (locked, not graded)
calls `report_tests` (imported from ch4check).

Every test cell (and the answer cell) is tagged `raises-exception`, so JupyterLab's Run All, nbclient
and nbgrader go on past a failing one; ch4check's `%%ch4test` records each test cell's result here
(`Results.record`), and this cell then says which tests passed and which failed, with the first
line of each failure's message and the points, and how many hidden tests are left for grading. A
result recorded before another cell ran (which may have changed the answer) is marked out of date.
A graded kernel records and prints nothing: the judge decides, after it.
"""

from __future__ import annotations

import os
import re

from ch4protocol import GRADING_ENV


def grading() -> bool:
    """True in a kernel the grader runs (it records and prints nothing; ch4check reads it too)."""
    return os.environ.get(GRADING_ENV) == "1"


SUMMARY_CALL = "report_tests()"
_TITLE = re.compile(r"^#\s*🧪\s*(可见|隐藏)测试\s*(\d+)（(\d+) 分）")


class Results:
    """What each test cell said when it last ran in this kernel, since the setup cell ran, in the
    order the tests first ran; with how many other cells had run by then (a later one may have
    changed the answer: the result is then out of date)."""

    tests: dict = {}  # key -> (visible test ids, title line, message or None, cells_run then)
    cells_run = 0

    @classmethod
    def clear(cls) -> None:
        cls.tests = {}

    @classmethod
    def record(cls, ids: list[str], title: str, message: str | None) -> None:
        if grading():  # a graded kernel judges nothing: the judge does, after it
            return
        key = "、".join(ids) or title
        cls.tests[key] = (tuple(ids), title, message, cls.cells_run)


def is_summary_cell(source: str) -> bool:
    code = [line.strip() for line in source.splitlines() if line.strip() and not line.strip().startswith("#")]
    return code[-1:] == [SUMMARY_CALL] and all(
        line.startswith(("from ch4check import", "import ")) for line in code[:-1]
    )


def _first_line(message: str, width: int = 100) -> str:
    line = message.strip().splitlines()[0] if message.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def summary_lines() -> list[str]:
    """What `report_tests` prints. Nothing in a graded kernel, which judges nothing (the feedback
    page shows each test's verdict under its cell, and nothing any code printed in this cell)."""
    if grading():
        return []
    if not Results.tests:
        return ["还没有运行过测试单元格：请从头运行全部单元格（菜单 Run → Run All Cells）。"]
    lines = ["📋 测试小结（每个测试单元格在本内核里最近一次运行的结果）："]
    tally = {"passed": [0, 0], "failed": [0, 0], "later": [0, 0]}  # [tests, points]
    kinds, stale, previous = set(), 0, None
    for ids, title, message, cells_run in Results.tests.values():
        found = _TITLE.match(title)
        kind, number, points = (found.group(1), found.group(2), int(found.group(3))) if found else ("", "", 0)
        outcome = "later" if not ids and message is None else "passed" if message is None else "failed"
        tally[outcome][0] += 1
        tally[outcome][1] += points
        if outcome == "later":  # a hidden test in the release: its body runs only when graded
            continue
        kinds.add(kind)
        old = cells_run < Results.cells_run
        stale += old
        name = "、".join(ids) or "这个测试"
        label = f"（{kind}测试 {number}，{points} 分）" if found else ""
        note = "（之后运行过别的单元格，结果可能已过时）" if old else ""
        if message is None:
            lines.append(f"  ✅ {name}{label}{note}")
            previous = None  # "同上" only right under the same message
        else:
            said = _first_line(message).removeprefix(f"❌ {name} 未通过：")
            lines.append(f"  ❌ {name}{label}{note}：{'同上' if said == previous else said}")
            previous = said
    (passed, passed_points), (failed, failed_points), (later, later_points) = tally.values()
    which = "可见测试" if kinds == {"可见"} else "测试"
    total = f"{which}：{passed} 个通过（{passed_points} 分），{failed} 个未通过（{failed_points} 分）。"
    if later:
        total += f"另有隐藏测试 {later} 个（{later_points} 分），评分时才运行。"
    lines.append(total)
    if failed:
        lines.append("每个未通过的测试，完整的说明在它自己的单元格下面。")
    if stale:
        lines.append("有的结果可能已过时：改过作答区之后，请从头运行全部单元格。")
    return lines


def report_tests() -> None:
    """The exercise's last cell: which tests passed and which failed when they last ran here."""
    lines = summary_lines()
    if lines:
        print("\n".join(lines))
