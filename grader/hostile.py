"""Hostile submissions: the attack files (grader/attacks/<slug>.py, each added to a known wrong
answer), one shadowing attack per assignment built by parsing its test cells, and the classes
tests/test_tampering.py grades (each attack beside the reference and its base answer alone).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import nbformat

from grader import answers, course, verdict
from grader.sample_classes import answered, write


@dataclass(frozen=True)
class Attack:
    """A tampering attempt (grader/attacks/<slug>.py) added to a known wrong answer."""

    slug: str
    claim: str  # the docstring's first line
    assignment: str
    base: str  # the catalogue slug of the wrong answer it rides on, e.g. "wrong_naive_forward"
    # which defences must stop it: "rules" (the scan), "guard" (run confined), "verdict" (run as written)
    layers: tuple[str, ...]
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
    from ch4protocol import free_names, split_test_cell

    source = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
    return set().union(*(free_names(split_test_cell(c.source)) for c in source.cells if verdict.is_test(c)))


def shadowing_attack(assignment: str) -> Attack:
    """A wrong answer followed by a redefinition of every name a test cell reads (helpers,
    builtins, modules), except the interface and what the answer itself uses: with tests that
    read the student's namespace, each redefinition would be a way to forge a result."""
    base = next(e for e in answers.entries(assignment) if e.kind == "wrong")
    uses = {n.id for n in ast.walk(ast.parse(base.answer)) if isinstance(n, ast.Name)}
    names = sorted(test_cell_names(assignment) - uses - set(interface(assignment)))
    code = "".join(f"\n\ndef {name}(*args, **kwargs):\n    return True\n" for name in names)
    claim = f"redefine all {len(names)} names the test cells read ({', '.join(names[:6])}, ...) as forgers"
    return Attack(f"shadow_{assignment}", claim, assignment, f"wrong_{base.slug}", ("guard", "verdict"), code)


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
        write(dest, f"ref-{assignment}", assignment, answered(assignment, answers.reference_answer(assignment)))
        students.append((f"ref-{assignment}", assignment))
    for attack in {(a.assignment, a.base): a for a in chosen}.values():
        write(dest, f"base-{attack.base}", attack.assignment, answered(attack.assignment, attack.base_answer))
        students.append((f"base-{attack.base}", attack.assignment))
    return students
