"""Hostile submissions: the attack files (proof/attacks/<slug>.py), one shadowing attack, and
the classes tests/test_tampering.py grades (each attack beside the reference and its base
answer alone).

An attack file is the code a student adds; its header says how it is handed in:

    \"\"\"Attack: what it tries (the first line is its claim).\"\"\"
    # base: <assignment> <catalogue slug | reference>   what its score is measured against
    # rides: reference          (optional) added to the reference answer, not to the base answer
    # class: <attack class>     the threat it stands for (grader/README.md)
    # run: cluster              (optional) graded in the distributed run, not the local one
    # move: <grade id> after <grade id>    (optional) the notebook moves a course cell

The code before a line ``# %% a cell of the student's own at the end`` goes into the answer
cell; the code after it is a cell the student adds at the end of the notebook (after the
hidden tests).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import nbformat

from grader import course
from grader.judging import verdict
from proof import answers
from proof.sample_classes import answered, write

OWN_CELL = "# %% a cell of the student's own at the end"


@dataclass(frozen=True)
class Attack:
    """A tampering attempt (proof/attacks/<slug>.py) handed in on top of a known answer."""

    slug: str
    claim: str  # the docstring's first line
    assignment: str
    base: str  # what it is measured against: a catalogue slug ("wrong_grad_missing_cos") or "reference"
    kind: str  # the attack class it stands for ("str-subclass formatting", ...)
    code: str
    rides: str = "base"  # what the code is added to: the base answer, or the reference ("reference")
    run: str = "local"  # "local" or "cluster"
    move: tuple[str, str] | None = None  # (grade id, the grade id it is moved after)

    @property
    def base_student(self) -> str:
        """The student whose score this attack's may not exceed."""
        return f"ref-{self.assignment}" if self.base == "reference" else f"base-{self.base}"

    @property
    def base_answer(self) -> str:
        if self.base == "reference":
            return answers.reference_answer(self.assignment)
        return (course.CATALOGUE / self.assignment / f"{self.base}.py").read_text(encoding="utf-8")

    @property
    def parts(self) -> list[str]:
        """[what goes into the answer cell, the cells it adds at the end...]."""
        return [part.strip("\n") + "\n" for part in self.code.split(OWN_CELL)]

    @property
    def answer(self) -> str:
        ridden = answers.reference_answer(self.assignment) if self.rides == "reference" else self.base_answer
        return ridden + "\n\n" + self.parts[0]

    def notebook(self, fill: dict[str, str] | None = None):
        """The notebook as handed in; `fill` replaces each line `NAME = ...` of the code (a probe's
        targets, known only once the class's secret exists)."""
        text = self.answer
        own = self.parts[1:]
        for name, value in (fill or {}).items():
            text = _fill(text, name, value)
            own = [_fill(cell, name, value) for cell in own]
        nb = answered(self.assignment, text)
        nb.cells += [nbformat.v4.new_code_cell(cell) for cell in own]
        if self.move:
            moved, after = self.move
            cell = next(c for c in nb.cells if _grade_id(c) == moved)
            nb.cells.remove(cell)
            nb.cells.insert(next(i for i, c in enumerate(nb.cells) if _grade_id(c) == after) + 1, cell)
        return nb


def _grade_id(cell) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def _fill(text: str, name: str, value: str) -> str:
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith(f"{name} = "):
            lines[i] = f"{name} = {value}\n"
    return "".join(lines)


def attacks() -> list[Attack]:
    """The attack files and the shadowing attack."""
    return file_attacks() + [shadowing_attack("residuals")]


def file_attacks() -> list[Attack]:
    found = []
    for path in sorted((course.CATALOGUE.parent / "attacks").glob("*.py")):
        code = path.read_text(encoding="utf-8")
        header = dict(line[2:].split(": ", 1) for line in code.splitlines() if line.startswith(HEADER_LINES))
        assignment, base = header["base"].split()
        claim = code.split('"""')[1].strip().splitlines()[0]
        move = tuple(header["move"].split(" after ")) if "move" in header else None
        found.append(Attack(path.stem, claim, assignment, base, header["class"], code, header.get("rides", "base"),
                            header.get("run", "local"), move))  # fmt: skip
    return found


HEADER_LINES = tuple(f"# {key}: " for key in ("base", "rides", "class", "run", "move"))


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
    names = sorted(test_cell_names(assignment) - uses - set(answers.interface(assignment)))
    code = "".join(f"\n\ndef {name}(*args, **kwargs):\n    return True\n" for name in names)
    claim = f"redefine all {len(names)} names the test cells read ({', '.join(names[:6])}, ...) as forgers"
    return Attack(f"shadow_{assignment}", claim, assignment, f"wrong_{base.slug}", "redefining test-cell names", code)


def attack_class(dest: Path, run: str, fill: dict[str, dict[str, str]] | None = None) -> list[Attack]:
    """One student per attack of `run` ("local" or "cluster"), named attack-<slug>; `fill` gives
    an attack's placeholders by slug (Attack.notebook)."""
    chosen = [a for a in attacks() if a.run == run]
    for attack in chosen:
        write(dest, f"attack-{attack.slug}", attack.assignment, attack.notebook((fill or {}).get(attack.slug)))
    return chosen


def honest_class(
    dest: Path, chosen: list[Attack], extra: dict[str, tuple[str, str]] | None = None
) -> list[tuple[str, str]]:
    """The reference for each attacked assignment (students ref-<assignment>), each attack's base
    answer on its own (students base-<slug>), and `extra` answers ({student: (assignment,
    answer)}): what the attacks are measured against."""
    students = []
    for assignment in sorted({a.assignment for a in chosen}):
        write(dest, f"ref-{assignment}", assignment, answered(assignment, answers.reference_answer(assignment)))
        students.append((f"ref-{assignment}", assignment))
    for attack in {(a.assignment, a.base): a for a in chosen if a.base != "reference"}.values():
        write(dest, attack.base_student, attack.assignment, answered(attack.assignment, attack.base_answer))
        students.append((attack.base_student, attack.assignment))
    for student, (assignment, answer) in (extra or {}).items():
        write(dest, student, assignment, answered(assignment, answer))
        students.append((student, assignment))
    return students


def released_order(nb) -> list[str]:
    """The grade ids of a notebook's course cells, in order (to see where a moved cell ran)."""
    return [gid for gid in (_grade_id(c) for c in nb.cells) if gid]
