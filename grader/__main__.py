"""Command line: python -m grader {run,tidy,release,grade,demo} ..."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from grader import nbtools


def cmd_run(args) -> int:
    failed = 0
    for path in args.notebooks:
        start = time.perf_counter()
        result = nbtools.execute_notebook(Path(path))
        status = "ok  " if result.ok else "FAIL"
        print(f"{status} {path}  ({time.perf_counter() - start:.1f} s)")
        for problem in result.problems:
            print(f"     {problem}")
        failed += not result.ok
    return 1 if failed else 0


def cmd_tidy(args) -> int:
    for path in args.notebooks:
        if nbtools.tidy(Path(path)):
            print(f"tidied {path}")
    return 0


def cmd_not_yet(args) -> int:
    print(f"grader {args.command}: not built yet; it will {args.what}.", file=sys.stderr)
    return 2


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="execute notebooks headless and check raises-exception cells")
    run.add_argument("notebooks", nargs="+")
    run.set_defaults(func=cmd_run)

    tidy = sub.add_parser("tidy", help="strip outputs and editor metadata from notebooks")
    tidy.add_argument("notebooks", nargs="+")
    tidy.set_defaults(func=cmd_tidy)

    for name, what in [
        ("release", "regenerate exercises/ from solutions/ with nbgrader"),
        ("grade", "grade SUBMITTED_DIR into OUT_DIR/grades.csv and feedback"),
        ("demo", "grade the built-in demo class and print the score table"),
    ]:
        p = sub.add_parser(name, help=what)
        p.add_argument("rest", nargs="*")
        p.set_defaults(func=cmd_not_yet, what=what)

    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
