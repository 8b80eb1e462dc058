"""Command line of the proof: python -m proof {try,demo} ...

`try` scores an assignment's reference, blank stub and catalogued answers on the quick path
(grader/judging/quick.py), with hidden inputs and sizes drawn from a fresh secret or from
`--secret S` (the same secret draws the same inputs and sizes again: how a maintainer reproduces
one grading's draw); `demo` grades the built-in demo class (proof/demo.py, `make demo`).
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys

from grader import course
from proof import answers


def cmd_try(args) -> int:
    """Score the reference, the blank stub and catalogue answers of one assignment, quickly."""
    if args.assignment not in course.ASSIGNMENTS:
        return _unknown(f"no assignment named {args.assignment!r}", args.assignment, course.ASSIGNMENTS, "solutions/")
    entries = {f"{e.kind}_{e.slug}": e for e in answers.entries(args.assignment)}  # the file's name, as printed
    named = {**entries, **{e.slug: e for e in entries.values()}}
    if unknown := [name for name in args.only if name not in named]:
        what = f"no catalogued {args.assignment} answer named {unknown[0]!r}"
        return _unknown(what, unknown[0], named, f"proof/catalogue/{args.assignment}/")
    candidates = [("reference", None), ("blank", "raise NotImplementedError()")]
    picked = [name for name, e in entries.items() if not args.only or {name, e.slug} & set(args.only)]
    candidates += [(name, entries[name].answer) for name in picked]
    for name, answer in candidates:
        got = answers.quick_score(args.assignment, answer, secret=args.secret)
        print(f"{name:<40} {got.points:5.1f} / {got.max_points:<5.1f} {' '.join(got.flags)}")
        for line in got.notes + got.failed:
            print(f"    - {line}")
    return 0


def _unknown(what: str, name: str, known, folder: str) -> int:
    """One line for a name `try` does not know, with the closest known one; exit status 2."""
    close = difflib.get_close_matches(name, known, n=1)
    print(
        f"python -m proof try: {what}; " + (f"did you mean {close[0]}?" if close else f"see {folder}"), file=sys.stderr
    )
    return 2


def cmd_demo(args) -> int:
    from proof import demo

    return demo.main(args)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m proof", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    trial = sub.add_parser("try", help="score reference, blank and catalogue answers of an assignment")
    trial.add_argument("assignment")
    trial.add_argument("only", nargs="*", help="catalogue answers to try, by slug or file name (default: all)")
    trial.add_argument("--secret", help="draw the hidden inputs and sizes from this secret (default: a fresh one)")
    trial.set_defaults(func=cmd_try)

    demo = sub.add_parser("demo", help="grade the built-in demo class and print the score table")
    demo.add_argument("--out", default="build/demo", help="where the class, grades.csv and feedback go")
    demo.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    demo.set_defaults(
        func=cmd_demo,
        ceiling=course.CEILING_SECONDS,
        cell_timeout=course.CELL_TIMEOUT,
        scheduler=None,
        db=None,
        tls=None,
    )

    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
