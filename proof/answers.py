"""Known answers to each assignment, kept as plain files: proof/catalogue/<assignment>/<kind>_<slug>.py.

`kind` is `wrong` (violates exactly one requirement; the file's first line, a docstring, names
it), `right` (a genuinely different correct method; the docstring names the method) or `natural`
(a correct answer written in everyday Python style: type hints, dataclasses, helper classes,
namedtuples, debug prints, %time; the docstring names the style). Each file is the complete text
of the answer cell (grade_id "answer"). A wrong answer found in real
grading is added to the self-proof by dropping one more file here.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import nbformat

from grader import course

# The quick path is the core's (grader/judging/quick.py); the proof's users reach it here too.
from grader.judging.quick import QuickScore, answer_cell, quick_score, run_in_kernel, with_answer  # noqa: F401

KINDS = ("wrong", "right", "natural")
# A wrong answer no visible test can catch says why on a comment line of its own file.
VISIBLE_EXEMPT = "# visible-exempt:"
# A wrong answer may name the hints it must get: "# hint: <test id>: <text in its message>", one
# line per failing test. Then those tests fail, each saying that, and no other visible test: a test
# that isolates another cause must not blame this answer for it (a hidden test's draw may meet it).
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
    names = repr(interface(assignment)).replace("'", '"')
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


def reference_answer(assignment: str) -> str:
    """The source's answer cell as a student would hand it in (solution markers removed)."""
    source = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
    lines = answer_cell(source).source.splitlines()
    return "\n".join(line for line in lines if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))


def release_notebook(assignment: str):
    return nbformat.read(course.notebook_path(course.EXERCISES, assignment), as_version=4)


def interface(assignment: str) -> list[str]:
    """The names `start_tests` takes from the student's namespace, read from the setup cell."""
    source = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
    setup = next(c for c in source.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "setup")
    calls = [n for n in ast.walk(ast.parse(setup.source)) if isinstance(n, ast.Call)]
    call = next(n for n in calls if getattr(n.func, "id", None) == "start_tests")
    return list(ast.literal_eval(call.keywords[0].value))
