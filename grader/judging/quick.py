"""The quick path: an answer scored the way the grader scores it, without nbgrader.

A kernel (in a graded kernel's sandbox where that works) runs the kernel version of the source
notebook with the answer and exports; the judge runs every verdict on the programs. Behind
`python -m proof try` and the self-proof of every catalogue entry; the compile counter uses its
kernel too.
"""

from __future__ import annotations

import atexit
import copy
import functools
import os
import shutil
from pathlib import Path
from typing import NamedTuple

import nbformat

from grader import course


def answer_cell(nb):
    cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == course.ANSWER_ID]
    if len(cells) != 1:
        raise ValueError(f"expected exactly one answer cell with grade_id {course.ANSWER_ID!r}")
    return cells[0]


def with_answer(notebook, answer: str):
    """A copy of `notebook` whose answer cell holds `answer`: what a student would hand in."""
    nb = copy.deepcopy(notebook)
    answer_cell(nb).source = answer
    return nb


class QuickScore(NamedTuple):
    points: float
    max_points: float
    failed: list[str]  # "test_id: the first line of its message", for each failed test
    flags: list[str]  # what the pipeline would flag: "tampering" (programs refused or misplaced)
    notes: list[str]  # the anomalies and refusals
    messages: dict[str, str] = {}  # test id -> its whole message, for each failed test


def quick_score(assignment: str, answer: str | None, secret: str | None = None) -> QuickScore:
    """Score an answer the way the grader does, without nbgrader: the kernel-plus-judge path
    (`python -m proof try`, and the self-proof of every catalogue entry). Its kernel runs in a graded
    kernel's sandbox where that works (forked from a pre-imported server as root), else as a
    plain kernel: the kernel version of the source notebook (hidden tests included, verdicts
    cut) runs with this answer and exports, and the judge runs every verdict on the programs
    with inputs from `secret` (fresh when None; the pipeline's seed of a student gives that
    student's exact inputs)."""
    import secrets

    from grader.judging import verdict
    from grader.kernels import sandbox

    source = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
    nb = verdict.kernel_notebook(source if answer is None else with_answer(source, answer))
    secret = secret or secrets.token_hex(16)
    run_in_kernel(nb, assignment, sandboxed=sandbox.probe() is None, secret=secret)
    programs, anomalies = verdict.read_programs(nb)
    results, refused = verdict.judge(assignment, programs, secret, cache=_cache())
    total = float(sum(r.max_points for r in results))
    failed = [f"{r.test}: {r.message.splitlines()[0][:150]}" for r in results if not r.passed]
    flags = ["tampering"] if anomalies or refused else []
    messages = {r.test: r.message for r in results if not r.passed}
    return QuickScore(float(sum(r.points for r in results)), total, failed, flags, anomalies + refused, messages)


SCRATCH = "ch04-quick"  # a quick-path process's folder for its judges, in the temporary folder


@functools.cache
def _cache() -> Path:
    """This process's folder for the judges' compiled programs, removed when the process ends;
    named after the process, so the next quick path removes what a killed one left."""
    from grader.judging import verdict
    from grader.kernels import scratch

    scratch.remove_orphaned(SCRATCH)
    parent = scratch.process_folder(SCRATCH)
    atexit.register(shutil.rmtree, parent, ignore_errors=True)
    return verdict.new_cache(parent)


def run_in_kernel(nb, assignment: str, sandboxed: bool = False, secret: str = "") -> None:
    """Execute `nb` in place in a fresh grading kernel (test cells export and stop), headless,
    errors kept as outputs: the quick path's kernel (`sandboxed`: a graded kernel's sandbox, so
    forked as root, where it works) and the compile counter's (a plain kernel). The kernel gets
    the sizes key of `secret` (its hidden tests export at the sizes the judge draws)."""
    from ch4protocol import GRADING_ENV, SIZES_ENV, sizes_key
    from nbclient import NotebookClient

    from grader import nbtools
    from grader.kernels import execute, manager

    class QuickClient(execute.TestTimeLimit, NotebookClient):
        """Each test cell with its time limit, as nbgrader's Execute runs it in grading."""

    # the kernel inherits this environment
    os.environ.update(nbtools.HEADLESS_ENV, **{GRADING_ENV: "1", SIZES_ENV: sizes_key(secret)})
    manager = {"kernel_manager_class": manager.SandboxKernelManager} if sandboxed else {}
    try:
        QuickClient(
            nb,
            extra_arguments=course.KERNEL_ARGS,
            timeout=course.CELL_TIMEOUT,
            interrupt_on_timeout=True,  # as nbgrader's Execute: a cell past its limit is stopped, the rest run
            error_on_timeout={"ename": "CellTimeoutError", "evalue": "", "traceback": []},
            kernel_name="python3",
            allow_errors=True,
            resources={
                "metadata": {"path": str(course.SOLUTIONS / assignment)},
                "nbgrader": {"assignment": assignment},  # for each test cell's time limit
            },
            **manager,
        ).execute()
    finally:
        del os.environ[GRADING_ENV], os.environ[SIZES_ENV]
