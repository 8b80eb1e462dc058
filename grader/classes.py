"""Classes of submissions built from the release and the catalogue: the demo, the self-proof,
and a class of broken submissions that the grading pipeline must survive.

Every submission starts from the committed release notebook (what students receive) and
changes only what a student could change.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import nbformat

from grader import catalogue, course, verdict


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
    return catalogue.with_answer(catalogue.release_notebook(assignment), answer)


def selfproof_class(dest: Path, assignments=None) -> list[Expectation]:
    """Reference, blank and every catalogue entry of each assignment, one student each."""
    expected = []
    for assignment in assignments or course.ASSIGNMENTS:
        write(dest, "reference", assignment, answered(assignment, catalogue.reference_answer(assignment)))
        expected.append(Expectation("reference", assignment, "full", "the reference solution"))
        write(dest, "blank", assignment, catalogue.release_notebook(assignment))
        expected.append(Expectation("blank", assignment, "zero", "the untouched release"))
        for entry in catalogue.entries(assignment):
            student = f"{entry.kind}-{entry.slug}"
            write(dest, student, assignment, answered(assignment, entry.answer))
            verdict = "less" if entry.kind == "wrong" else "full"
            expected.append(Expectation(student, assignment, verdict, entry.claim))
    return expected


def _grade_cells(nb):
    return [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]


def broken_class(dest: Path, assignment: str) -> list[Expectation]:
    """One submission per way a hand-in can be broken, next to correct ones (issue: pipeline)."""
    good = catalogue.reference_answer(assignment)
    cases = []

    def add(student, nb=None, verdict="zero", why="", note="", **kw):
        write(dest, student, assignment, nb, **kw)
        cases.append(Expectation(student, assignment, verdict, why, note))

    add("ok-1", answered(assignment, good), "full", "correct, graded next to the broken ones")
    add("bad-json", raw=b'{"cells": [', why="invalid JSON", note="不是合法的 JSON")
    add("bad-empty", raw=b"", why="empty file", note="空文件")
    add("bad-not-notebook", raw=b'{"hello": "world"}', why="JSON that is not a notebook", note="不是合法的 notebook")
    add("bad-missing", why="no notebook in the folder", note="缺少 notebook")
    (dest / "bad-missing" / assignment / "notes.txt").write_text("I forgot the notebook\n")
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
    add("infinite-loop", answered(assignment, "while True:\n    pass"), "zero", "infinite loop in the answer", "超过")
    slow = good + "\nimport time\nget_ipython().events.register('pre_run_cell', lambda *args: time.sleep(15))"
    add(
        "slow-every-cell",
        answered(assignment, slow),
        "zero",
        "every cell slowed down: per-submission ceiling",
        "时间上限",
    )
    add("os-exit", answered(assignment, "import os\nos._exit(3)"), "zero", "kernel exits", "内核")
    add("segfault", answered(assignment, "import ctypes\nctypes.string_at(0)"), "zero", "kernel segfaults", "内核")
    add("huge-output", answered(assignment, good + "\nprint('x' * 5_000_000)"), "full", "5 MB of output", "输出过长")

    nb = answered(assignment, good)
    nb.cells.insert(2, nbformat.v4.new_code_cell("extra = 2", metadata={"nbgrader": {"grade_id": ["a", "list"]}}))
    _grade_cells(nb)[0].metadata["nbgrader"]["points"] = "ten"
    add("bad-metadata-types", nb, "full", "a list as grade_id, text as points", "评分元数据不对")
    add("invalid-utf8", raw=b'{"cells": ["\xff\xfe"]}', why="bytes that are not UTF-8", note="不是合法的 JSON")
    add("symlink-notebook", why="the notebook is a link to the solution", note="符号链接")
    (dest / "symlink-notebook" / assignment / f"{assignment}.ipynb").symlink_to(
        course.notebook_path(course.SOLUTIONS, assignment)
    )
    (dest / "symlink-folder").mkdir()
    (dest / "symlink-folder" / assignment).symlink_to(dest / "ok-1" / assignment, target_is_directory=True)
    cases.append(
        Expectation("symlink-folder", assignment, "zero", "the folder is a link to another student's", "符号链接")
    )
    return cases


def demo_class(dest: Path) -> None:
    """A small class: a model student, a blank hand-in, common mistakes, other correct methods,
    one broken file, one tampering attempt and everyday-style correct answers."""
    for assignment in course.ASSIGNMENTS:
        entries = catalogue.entries(assignment)
        wrong = [e for e in entries if e.kind == "wrong"]
        right = [e for e in entries if e.kind == "right"]
        write(dest, "alice", assignment, answered(assignment, catalogue.reference_answer(assignment)))
        write(dest, "bob", assignment, catalogue.release_notebook(assignment))
        if wrong:
            write(dest, "carol", assignment, answered(assignment, wrong[0].answer))
        if right:
            write(dest, "dave", assignment, answered(assignment, right[0].answer))
        natural = [e for e in entries if e.kind == "natural"]
        if natural:
            write(dest, "grace", assignment, answered(assignment, natural[0].answer))
    first = course.ASSIGNMENTS[0]
    write(dest, "erin", first, raw=b'{"cells": [ this is not json')
    forger = next(a for a in attacks() if a.slug == "patch_allclose")
    write(dest, "frank", forger.assignment, answered(forger.assignment, forger.answer))


@dataclass(frozen=True)
class Attack:
    """A tampering attempt (grader/attacks/<slug>.py) added to a known wrong answer."""

    slug: str
    claim: str  # the docstring's first line
    assignment: str
    base: str  # the catalogue slug of the wrong answer it rides on, e.g. "wrong_naive_forward"
    layers: tuple[str, ...]  # "rules": it breaks an answering rule; "verdict": it gains nothing even when run
    code: str

    @property
    def base_answer(self) -> str:
        return (course.CATALOGUE / self.assignment / f"{self.base}.py").read_text(encoding="utf-8")

    @property
    def answer(self) -> str:
        return self.base_answer + "\n\n" + self.code


def attacks() -> list[Attack]:
    """The attack files, then one shadowing attack per assignment."""
    return file_attacks() + [shadowing_attack(a) for a in course.ASSIGNMENTS]


def file_attacks() -> list[Attack]:
    found = []
    for path in sorted((course.CATALOGUE.parent / "attacks").glob("*.py")):
        code = path.read_text(encoding="utf-8")
        header = dict(
            line[2:].split(": ", 1) for line in code.splitlines() if line.startswith(("# base: ", "# layers: "))
        )
        assignment, base = header["base"].split()
        claim = code.split('"""')[1].strip().splitlines()[0]
        found.append(Attack(path.stem, claim, assignment, base, tuple(header["layers"].split()), code))
    return found


def test_cell_names(assignment: str) -> set[str]:
    """Every name the assignment's test cells read, found by parsing them (hidden tests included)."""
    from ch4check import free_names, split_test_cell

    source = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
    return set().union(*(free_names(split_test_cell(c.source)) for c in source.cells if verdict.is_test(c)))


def shadowing_attack(assignment: str) -> Attack:
    """A wrong answer followed by a redefinition of every name a test cell reads (helpers,
    builtins, modules), except the interface and what the answer itself uses: with tests that
    read the student's namespace, each redefinition would be a way to forge a result."""
    base = next(e for e in catalogue.entries(assignment) if e.kind == "wrong")
    uses = {n.id for n in ast.walk(ast.parse(base.answer)) if isinstance(n, ast.Name)}
    names = sorted(test_cell_names(assignment) - uses - set(interface(assignment)))
    code = "".join(f"\n\ndef {name}(*args, **kwargs):\n    return True\n" for name in names)
    claim = f"redefine all {len(names)} names the test cells read ({', '.join(names[:6])}, ...) as forgers"
    return Attack(f"shadow_{assignment}", claim, assignment, f"wrong_{base.slug}", ("verdict",), code)


def interface(assignment: str) -> list[str]:
    """The names `start_tests` takes from the student's namespace, read from the setup cell."""
    source = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
    setup = next(c for c in source.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "setup")
    calls = [n for n in ast.walk(ast.parse(setup.source)) if isinstance(n, ast.Call)]
    call = next(n for n in calls if getattr(n.func, "id", None) == "start_tests")
    return list(ast.literal_eval(call.keywords[0].value))


def attack_class(dest: Path, layer: str) -> list[Attack]:
    """One student per attack that `layer` must defeat, named attack-<slug>."""
    chosen = [a for a in attacks() if layer in a.layers]
    for attack in chosen:
        write(dest, f"attack-{attack.slug}", attack.assignment, answered(attack.assignment, attack.answer))
    return chosen


def honest_class(dest: Path, chosen: list[Attack]) -> list[tuple[str, str]]:
    """The reference for each attacked assignment (students ref-<assignment>) and each attack's
    base answer on its own (students base-<slug>): what the attacks are measured against."""
    students = []
    for assignment in sorted({a.assignment for a in chosen}):
        write(dest, f"ref-{assignment}", assignment, answered(assignment, catalogue.reference_answer(assignment)))
        students.append((f"ref-{assignment}", assignment))
    for attack in {(a.assignment, a.base): a for a in chosen}.values():
        write(dest, f"base-{attack.base}", attack.assignment, answered(attack.assignment, attack.base_answer))
        students.append((f"base-{attack.base}", attack.assignment))
    return students
