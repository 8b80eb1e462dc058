"""Known answers to each assignment, kept as plain files: grader/catalogue/<assignment>/<kind>_<slug>.py.

`kind` is `wrong` (violates exactly one requirement; the file's first line, a docstring, names
it), `right` (a genuinely different correct method; the docstring names the method) or `natural`
(a correct answer written in everyday Python style: type hints, dataclasses, helper classes,
namedtuples, debug prints, %time; the docstring names the style). Each file is the complete text
of the answer cell (grade_id "answer"). A wrong answer found in real
grading is added to the self-proof by dropping one more file here.
"""

from __future__ import annotations

import ast
import copy
import os
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import nbformat

from grader import course

KINDS = ("wrong", "right", "natural")
# A wrong answer no visible test can catch says why on a comment line of its own file.
VISIBLE_EXEMPT = "# visible-exempt:"
# A wrong answer may name the hints it must get: "# hint: <test id>: <text in its message>", one
# line per failing test. Then exactly those tests fail, each saying that: a test that isolates
# another cause must not blame this answer for it.
HINT = "# hint:"


@dataclass(frozen=True)
class Entry:
    assignment: str
    kind: str  # "wrong", "right" or "natural"
    slug: str
    path: Path
    text: str | None = None  # the answer, when it is made from a template rather than read from `path`

    @property
    def student(self) -> str:
        """Its student id in a graded class, e.g. wrong-naive_forward."""
        return f"{self.kind}-{self.slug}"

    @property
    def answer(self) -> str:
        return self.text if self.text is not None else self.path.read_text(encoding="utf-8")

    @property
    def claim(self) -> str:
        """The requirement it violates (wrong) or the method it uses (right)."""
        from IPython.core.inputtransformer2 import TransformerManager  # natural answers may use %time

        doc = ast.get_docstring(ast.parse(TransformerManager().transform_cell(self.answer))) or ""
        return doc.strip().splitlines()[0] if doc.strip() else "(no docstring)"

    @property
    def hints(self) -> dict[str, str]:
        """{test id: text its failure message must hold} from the `# hint:` lines (none: unchecked)."""
        found = {}
        for line in self.answer.splitlines():
            if line.strip().startswith(HINT):
                test, _, text = line.strip()[len(HINT) :].partition(":")
                found[test.strip()] = text.strip()
        return found

    @property
    def visible_exemption(self) -> str | None:
        """Why no visible test can catch this wrong answer (its `# visible-exempt:` line), or None."""
        for line in self.answer.splitlines():
            if line.strip().startswith(VISIBLE_EXEMPT):
                return line.strip()[len(VISIBLE_EXEMPT) :].strip()
        return None


def entries(assignment: str | None = None) -> list[Entry]:
    found = []
    for path in sorted(course.CATALOGUE.glob(f"{assignment or '*'}/*.py")):
        kind, _, slug = path.stem.partition("_")
        if kind in KINDS:
            found.append(Entry(path.parent.name, kind, slug, path))
    for name in [assignment] if assignment else course.ASSIGNMENTS:
        found.append(Entry(name, "natural", "everyday_idioms", EVERYDAY_IDIOMS, everyday_idioms_answer(name)))
    return found


# Every idiom an honest student writes around a method (jax.typing hints, a name-mangled counter,
# namedtuple helpers, help(), names that shadow builtins), put around each exercise's reference.
EVERYDAY_IDIOMS = course.CATALOGUE / "everyday_idioms.py"


def everyday_idioms_answer(assignment: str) -> str:
    from grader import hostile

    names = repr(hostile.interface(assignment)).replace("'", '"')
    preamble = EVERYDAY_IDIOMS.read_text(encoding="utf-8").replace("INTERFACE_NAMES", names, 1)
    return preamble + "\n\n" + reference_answer(assignment).replace("# ✍️ 作答区\n", "").strip() + "\n"


def visible_tests(assignment: str) -> set[str]:
    """The grade_ids of the tests a student runs before handing in: test cells without a hidden block."""
    from grader.judging import verdict

    source = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
    return {
        c.metadata["nbgrader"]["grade_id"]
        for c in source.cells
        if verdict.is_test(c) and "### BEGIN HIDDEN TESTS" not in c.source
    }


def answer_cell(nb):
    cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == course.ANSWER_ID]
    if len(cells) != 1:
        raise ValueError(f"expected exactly one answer cell with grade_id {course.ANSWER_ID!r}")
    return cells[0]


def reference_answer(assignment: str) -> str:
    """The source's answer cell as a student would hand it in (solution markers removed)."""
    source = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
    lines = answer_cell(source).source.splitlines()
    return "\n".join(line for line in lines if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))


def with_answer(notebook, answer: str):
    """A copy of `notebook` whose answer cell holds `answer`: what a student would hand in."""
    nb = copy.deepcopy(notebook)
    answer_cell(nb).source = answer
    return nb


def release_notebook(assignment: str):
    return nbformat.read(course.notebook_path(course.EXERCISES, assignment), as_version=4)


class QuickScore(NamedTuple):
    points: float
    max_points: float
    failed: list[str]  # "test_id: the first line of its message", for each failed test
    flags: list[str]  # what the pipeline would flag: "tampering" (programs refused or misplaced)
    notes: list[str]  # the anomalies and refusals


def quick_score(assignment: str, answer: str | None, secret: str | None = None) -> QuickScore:
    """Score an answer the way the grader does, without nbgrader: the kernel-plus-judge path
    (`grader try`, and the self-proof of every catalogue entry). Its kernel runs in a graded
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
    run_in_kernel(nb, assignment, sandboxed=sandbox.probe() is None)
    programs, anomalies = verdict.read_programs(nb)
    results, refused = verdict.judge(assignment, programs, secret)
    total = float(sum(r.max_points for r in results))
    failed = [f"{r.test}: {r.message.splitlines()[0][:150]}" for r in results if not r.passed]
    flags = ["tampering"] if anomalies or refused else []
    return QuickScore(float(sum(r.points for r in results)), total, failed, flags, anomalies + refused)


def run_in_kernel(nb, assignment: str, sandboxed: bool = False) -> None:
    """Execute `nb` in place in a fresh grading kernel (test cells export and stop), headless,
    errors kept as outputs: the quick path's kernel (`sandboxed`: a graded kernel's sandbox, so
    forked as root, where it works) and the compile counter's (a plain kernel)."""
    from ch4protocol import GRADING_ENV
    from nbclient import NotebookClient

    from grader import nbtools
    from grader.kernels import manager

    os.environ.update(nbtools.HEADLESS_ENV, **{GRADING_ENV: "1"})  # the kernel inherits this environment
    manager = {"kernel_manager_class": manager.SandboxKernelManager} if sandboxed else {}
    try:
        NotebookClient(
            nb,
            extra_arguments=course.KERNEL_ARGS,
            timeout=course.CELL_TIMEOUT,
            kernel_name="python3",
            allow_errors=True,
            resources={"metadata": {"path": str(course.SOLUTIONS / assignment)}},
            **manager,
        ).execute()
    finally:
        del os.environ[GRADING_ENV]
