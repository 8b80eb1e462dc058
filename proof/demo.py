"""The demo class and `python -m proof demo` (`make demo`): the instructor's main job on a built-in
class made of the release, the catalogue and one attack."""

from __future__ import annotations

import ast
import io
import re
import shutil
import tokenize
from pathlib import Path

from grader import course
from grader.i18n import _
from proof import answers, hostile
from proof.sample_classes import Expectation, answered, write

# Each assignment's first catalogue answer of a kind, handed in by the student named for it.
PICKED_KINDS = {"carol": "wrong", "dave": "right", "grace": "natural"}
# frank's tampering attempt (proof/attacks/): his answer cell prints forged test programs, made
# from correct functions of his own, with passing-looking output. The judge never reads programs
# from outside a test cell, so he scores his wrong answer's points and the row is flagged
# `tampering`: what the demo announces is what the report shows (#52 item 6). An attack that
# leaves no evidence (patching np.allclose in his kernel) would gain nothing either, unflagged.
FRANKS_ATTACK = "programs_outside_tests"


def picks(assignment: str) -> dict[str, answers.Entry]:
    """{student: the catalogue answer they hand in for `assignment`}: carol a common mistake,
    dave another correct method, grace a correct answer in everyday style."""
    entries = answers.entries(assignment)
    firsts = {s: next((e for e in entries if e.kind == kind), None) for s, kind in PICKED_KINDS.items()}
    return {student: entry for student, entry in firsts.items() if entry is not None}


CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]")


def in_students_language(answer: str) -> str:
    """`answer` as a student of this course hands it in: without the catalogue's English notes
    (its docstring naming the requirement or the method, the self-proof's `# hint:` lines,
    English comments and docstrings), which no student would write. Only comments and docstrings go, so the answer
    runs and scores as it did; Chinese ones stay."""
    from IPython.core.inputtransformer2 import TransformerManager  # %time lines, as in a kernel

    python = TransformerManager().transform_cell(answer)  # magics become calls, line for line
    drop, cut = set(), {}
    tree = ast.parse(python)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = node.body[0] if node.body else None
            doc = ast.get_docstring(node, clean=False) if len(node.body) > 1 else None
            if doc is not None and not CJK.search(doc):
                drop.update(range(first.lineno, first.end_lineno + 1))
    lines = answer.splitlines(keepends=True)
    for token in tokenize.generate_tokens(io.StringIO(python).readline):
        maintainers = token.string.startswith((answers.HINT, answers.VISIBLE_EXEMPT))  # the self-proof's notes
        if token.type == tokenize.COMMENT and (maintainers or not CJK.search(token.string)):
            row, col = token.start
            if lines[row - 1][:col].strip():
                cut[row] = col  # after code: the code stays
            else:
                drop.add(row)
    kept = []
    for row, line in enumerate(lines, start=1):
        if row in cut:
            kept.append(line[: cut[row]].rstrip() + "\n")
        elif row not in drop:
            kept.append(line)
    return "".join(kept).lstrip("\n")


def demo_class(dest: Path) -> None:
    """A small class: a model student, a blank hand-in, common mistakes, other correct methods,
    one broken file, one tampering attempt and everyday-style correct answers, each written as
    a student of the course writes (`in_students_language`)."""
    for assignment in course.ASSIGNMENTS:
        reference = in_students_language(answers.reference_answer(assignment))
        write(dest, "alice", assignment, answered(assignment, reference))
        write(dest, "bob", assignment, answers.release_notebook(assignment))
        for student, entry in picks(assignment).items():
            write(dest, student, assignment, answered(assignment, in_students_language(entry.answer)))
    first = course.ASSIGNMENTS[0]
    write(dest, "erin", first, raw=b'{"cells": [ this is not json')
    forger = next(a for a in hostile.attacks() if a.slug == FRANKS_ATTACK)
    write(dest, "frank", forger.assignment, forger.notebook())


def expectations() -> list[Expectation]:
    """What the pipeline must make of the demo class's honest hand-ins (the self-proof): alice's
    reference full marks, bob's untouched release 0, each picked wrong answer less than full, each
    picked correct one full marks."""
    cases = []
    for assignment in course.ASSIGNMENTS:
        cases.append(Expectation("alice", assignment, "full", "the reference solution"))
        cases.append(Expectation("bob", assignment, "zero", "the untouched release"))
        for student, entry in picks(assignment).items():
            cases.append(Expectation(student, assignment, "less" if entry.kind == "wrong" else "full", entry.claim))
    return cases


def main(args) -> int:
    """The instructor's main job on a built-in class: alice (model answers), bob (blank), carol
    (common mistakes), dave (other correct methods), erin (a corrupted file), frank (tampering, flagged),
    grace (correct answers in everyday style: type hints, dataclasses, prints, %time)."""
    from grader import grade

    out = Path(args.out)
    submitted = out.parent / f"{out.name}-class"  # beside OUT_DIR: the grader never writes into it
    shutil.rmtree(submitted, ignore_errors=True)
    demo_class(submitted)
    print(
        _("Demo class written to {folder} (alice: model answers, bob: blank, carol: common mistakes,").format(
            folder=submitted
        )
    )
    print(_("dave: other correct methods, erin: a corrupted file, frank: a tampering attempt (flagged),"))
    print(_("grace: correct answers in everyday style)"))
    args.submitted = str(submitted)
    status = grade.main(args)
    page = out / "feedback" / "carol" / course.ASSIGNMENTS[0] / f"{course.ASSIGNMENTS[0]}.html"
    print("\n" + _("Next:"))
    report = out / "report" / "index.html"
    print(_("  open {page}   the class: pass rates, common mistakes, who needs a person").format(page=report))
    print(_("  open {page}   what a student reads").format(page=page))
    print(_("  make formgrader GRADES={out}   review and adjust the grades in nbgrader's Formgrader").format(out=out))
    print(_("  make grade CLASS=NAME   grade your own class: classes/NAME/submitted/ into classes/NAME/graded/"))
    return status
