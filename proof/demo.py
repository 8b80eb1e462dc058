"""The demo class and `python -m proof demo` (`make demo`): the instructor's main job on a built-in
class made of the release, the catalogue and one attack."""

from __future__ import annotations

import shutil
from pathlib import Path

from grader import course
from proof import answers, hostile
from proof.sample_classes import Expectation, answered, write

# Each assignment's first catalogue answer of a kind, handed in by the student named for it.
PICKED_KINDS = {"carol": "wrong", "dave": "right", "grace": "natural"}


def picks(assignment: str) -> dict[str, answers.Entry]:
    """{student: the catalogue answer they hand in for `assignment`}: carol a common mistake,
    dave another correct method, grace a correct answer in everyday style."""
    entries = answers.entries(assignment)
    firsts = {s: next((e for e in entries if e.kind == kind), None) for s, kind in PICKED_KINDS.items()}
    return {student: entry for student, entry in firsts.items() if entry is not None}


def demo_class(dest: Path) -> None:
    """A small class: a model student, a blank hand-in, common mistakes, other correct methods,
    one broken file, one tampering attempt and everyday-style correct answers."""
    for assignment in course.ASSIGNMENTS:
        write(dest, "alice", assignment, answered(assignment, answers.reference_answer(assignment)))
        write(dest, "bob", assignment, answers.release_notebook(assignment))
        for student, entry in picks(assignment).items():
            write(dest, student, assignment, answered(assignment, entry.answer))
    first = course.ASSIGNMENTS[0]
    write(dest, "erin", first, raw=b'{"cells": [ this is not json')
    forger = next(a for a in hostile.attacks() if a.slug == "patch_allclose")
    write(dest, "frank", forger.assignment, answered(forger.assignment, forger.answer))


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
    (common mistakes), dave (other correct methods), erin (a corrupted file), frank (tampering),
    grace (correct answers in everyday style: type hints, dataclasses, prints, %time)."""
    from grader import grade

    out = Path(args.out)
    submitted = out.parent / f"{out.name}-class"  # beside OUT_DIR: the grader never writes into it
    shutil.rmtree(submitted, ignore_errors=True)
    demo_class(submitted)
    print(f"Demo class written to {submitted} (alice: model answers, bob: blank, carol: common mistakes,")
    print("dave: other correct methods, erin: a corrupted file, frank: a tampering attempt,")
    print("grace: correct answers in everyday style)")
    args.submitted = str(submitted)
    status = grade.main(args)
    page = out / "feedback" / "carol" / course.ASSIGNMENTS[0] / f"{course.ASSIGNMENTS[0]}.html"
    print("\nNext:")
    print(f"  open {out / 'report' / 'index.html'}   the class: pass rates, common mistakes, who needs a person")
    print(f"  open {page}   what a student reads")
    print(f"  make formgrader GRADES={out}   review and adjust the grades in nbgrader's Formgrader")
    print("  make grade SUBMISSIONS=path/to/submitted OUT=build/grades   grade your own class")
    return status
