"""Benchmark the grading pipeline against its floor: `python -m grader.benchmark [--students K]`.

A class of K students x every assignment (reference answers) is graded from scratch with
`--jobs 1` and `--jobs 2`. The floor is plain nbclient executing the very notebooks nbgrader
executed (the autograded ones, hidden tests included), with the same number of parallel
processes and no nbgrader at all. All runs happen in this one process run, several repeats,
and the medians and ratios are printed: a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from grader import answers, course, sample_classes


def make_class(dest: Path, students: int) -> int:
    for assignment in course.ASSIGNMENTS:
        nb = sample_classes.answered(assignment, answers.reference_answer(assignment))
        for k in range(students):
            sample_classes.write(dest, f"student{k:03d}", assignment, nb)
    return students * len(course.ASSIGNMENTS)


def _execute(path: str) -> None:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=course.CELL_TIMEOUT, kernel_name="python3", allow_errors=True, extra_arguments=course.KERNEL_ARGS
    )
    client.execute()


def floor(notebooks: list[Path], jobs: int) -> float:
    start = time.perf_counter()
    with ProcessPoolExecutor(jobs) as pool:
        list(pool.map(_execute, [str(p) for p in notebooks]))
    return time.perf_counter() - start


def pipeline(submitted: Path, out: Path, jobs: int) -> float:
    from grader import grade

    start = time.perf_counter()
    grade.grade(submitted, out, jobs, echo=lambda *a: None)
    return time.perf_counter() - start


def main() -> None:
    import os

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    os.environ.update({"JAX_PLATFORMS": "cpu", "MPLBACKEND": "Agg"})
    with tempfile.TemporaryDirectory(prefix="ch04-bench-") as scratch:
        scratch = Path(scratch)
        n = make_class(scratch / "class", args.students)
        print(f"class: {args.students} students x {len(course.ASSIGNMENTS)} assignments = {n} notebooks")
        times = {}
        for repeat in range(args.repeats):
            for jobs in (1, 2):
                out = scratch / f"out-{jobs}-{repeat}"  # fresh folder: nothing cached
                times.setdefault(("nbgrader", jobs), []).append(pipeline(scratch / "class", out, jobs) / n)
                autograded = sorted((out / "course" / "autograded").rglob("*.ipynb"))
                assert len(autograded) == n, f"expected {n} autograded notebooks, found {len(autograded)}"
                times.setdefault(("floor", jobs), []).append(floor(autograded, jobs) / n)
            print(f"  repeat {repeat + 1}/{args.repeats} done")
        print(f"\n{'jobs':>4}  {'pipeline s/nb':>13}  {'nbclient floor s/nb':>19}  {'ratio':>5}")
        for jobs in (1, 2):
            ours = statistics.median(times[("nbgrader", jobs)])
            base = statistics.median(times[("floor", jobs)])
            print(f"{jobs:>4}  {ours:13.2f}  {base:19.2f}  {ours / base:5.2f}")


if __name__ == "__main__":
    main()
