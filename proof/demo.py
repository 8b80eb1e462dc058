"""The demo class and `python -m proof demo` (`make demo`): the instructor's main job on a built-in
class made of the release, the catalogue and one attack."""

from __future__ import annotations

import shutil
from pathlib import Path

from grader import course
from proof import answers, hostile
from proof.sample_classes import answered, write


def demo_class(dest: Path) -> None:
    """A small class: a model student, a blank hand-in, common mistakes, other correct methods,
    one broken file, one tampering attempt and everyday-style correct answers."""
    for assignment in course.ASSIGNMENTS:
        entries = answers.entries(assignment)
        wrong = [e for e in entries if e.kind == "wrong"]
        right = [e for e in entries if e.kind == "right"]
        write(dest, "alice", assignment, answered(assignment, answers.reference_answer(assignment)))
        write(dest, "bob", assignment, answers.release_notebook(assignment))
        if wrong:
            write(dest, "carol", assignment, answered(assignment, wrong[0].answer))
        if right:
            write(dest, "dave", assignment, answered(assignment, right[0].answer))
        natural = [e for e in entries if e.kind == "natural"]
        if natural:
            write(dest, "grace", assignment, answered(assignment, natural[0].answer))
    first = course.ASSIGNMENTS[0]
    write(dest, "erin", first, raw=b'{"cells": [ this is not json')
    forger = next(a for a in hostile.attacks() if a.slug == "patch_allclose")
    write(dest, "frank", forger.assignment, answered(forger.assignment, forger.answer))


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
