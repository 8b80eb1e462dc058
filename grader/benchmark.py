"""Benchmark grading against its floor and across class sizes:
`python -m grader.benchmark [--sizes 20 100 400] [--repeats 3] [--modes local cluster1 cluster2]`.

A class of N notebooks (the reference answers and the catalogue's answers of every assignment,
shuffled with a fixed seed) is graded from scratch:

* `local`: `grader grade --jobs 2` (a local Dask cluster of two processes);
* `cluster1`, `cluster2`: a Dask scheduler and `python -m grader worker --nworkers 1` or `2`,
  graded with `--scheduler`, as on real machines.

The floor is plain nbclient executing the very notebooks the graders executed (the autograded
ones, hidden tests included) with cold kernels, no sandbox and no nbgrader, with as many
parallel processes as the mode has workers. Everything runs in this one process run, several
repeats, and the table gives medians: notebooks per second, seconds per notebook, the ratio to
the floor, and how the time per notebook changes with N. A benchmark, not a test.

It also gives the CPU each side spent per notebook (core-seconds the whole machine was busy,
from /proc/stat: kernels, graders and Dask together) and the lowest ratio that CPU allows:
no schedule on this machine's cores can grade faster than its CPU per notebook divided by
the number of cores.

`--breakdown` says where one notebook's time goes instead (each assignment's reference answer,
one process, medians of the repeats): starting the kernel, the cells (their time and the CPU the
machine spent on them), stopping it, for the floor and for the grader's sandboxed kernels, and
the rest of `worker.grade_task` around its kernel (nbgrader's steps, the verdicts, the feedback
page).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from grader import answers, course, engine, sample_classes

WORKERS = {"local": 2, "cluster1": 1, "cluster2": 2}


def busy_seconds() -> float:
    """Core-seconds this machine has spent busy since boot (every process, every core)."""
    with open("/proc/stat") as stat:
        ticks = [int(t) for t in stat.readline().split()[1:]]
    idle, iowait = ticks[3], ticks[4]
    return (sum(ticks) - idle - iowait) / os.sysconf("SC_CLK_TCK")


def measured(run) -> tuple[float, float]:
    """(wall seconds, busy core-seconds) of calling run()."""
    wall, busy = time.perf_counter(), busy_seconds()
    run()
    return time.perf_counter() - wall, busy_seconds() - busy


def make_class(dest: Path, size: int) -> None:
    pool = [(a, answers.reference_answer(a)) for a in course.ASSIGNMENTS]
    pool += [(e.assignment, e.answer) for e in answers.entries()]
    random.Random(0).shuffle(pool)
    for k in range(size):
        assignment, answer = pool[k % len(pool)]
        sample_classes.write(dest, f"student{k:04d}", assignment, sample_classes.answered(assignment, answer))


def _execute(path: str) -> None:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=course.CELL_TIMEOUT, kernel_name="python3", allow_errors=True, extra_arguments=course.KERNEL_ARGS
    )
    client.execute()


def floor(notebooks: list[Path], jobs: int) -> tuple[float, float]:
    def run():
        with ProcessPoolExecutor(jobs) as pool:
            list(pool.map(_execute, [str(p) for p in notebooks]))

    return measured(run)


def pipeline(submitted: Path, out: Path, mode: str, scratch: Path) -> tuple[float, float]:
    from grader import grade

    quiet = lambda *a: None  # noqa: E731
    if mode == "local":
        return measured(lambda: grade.grade(submitted, out, WORKERS[mode], echo=quiet))
    logs = Path(tempfile.mkdtemp(dir=scratch))
    with engine.scheduler_with_workers(logs, WORKERS[mode]) as cluster:
        # measured once the workers are up: an instructor's cluster is started once
        return measured(
            lambda: grade.grade(submitted, out, WORKERS[mode], echo=quiet, scheduler=cluster.address, tls=cluster.tls)
        )


def _phases(path: Path, sandboxed: bool) -> tuple[float, float, float, float]:
    """(start, cells, stop, CPU of the cells) seconds of executing one notebook: cold nbclient, or
    as grading does."""
    import nbformat
    from nbclient import NotebookClient

    from grader import sandbox

    nb = nbformat.read(path, as_version=4)
    options = {"kernel_manager_class": sandbox.SandboxKernelManager, "shutdown_kernel": "immediate"}
    client = NotebookClient(
        nb, timeout=course.CELL_TIMEOUT, kernel_name="python3", allow_errors=True, extra_arguments=course.KERNEL_ARGS,
        **(options if sandboxed else {}),
    )  # fmt: skip
    marks = [time.perf_counter()]
    with client.setup_kernel():
        marks.append(time.perf_counter())
        busy = busy_seconds()
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        busy = busy_seconds() - busy
        marks.append(time.perf_counter())
    marks.append(time.perf_counter())
    return (*(b - a for a, b in zip(marks, marks[1:], strict=False)), busy)


@contextlib.contextmanager
def _timed(cls, method: str):
    """Collects the durations of every call of cls.method inside the block."""
    original, durations = getattr(cls, method), []

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            durations.append(time.perf_counter() - start)

    setattr(cls, method, timed)
    try:
        yield durations
    finally:
        setattr(cls, method, original)


def breakdown(scratch: Path, repeats: int) -> None:
    from grader import grade, sandbox, staging, worker

    submitted, out = scratch / "references", scratch / "references-out"
    for assignment in course.ASSIGNMENTS:
        answer = sample_classes.answered(assignment, answers.reference_answer(assignment))
        sample_classes.write(submitted, f"ref-{assignment}", assignment, answer)
    grade.grade(submitted, out, 1, echo=lambda *a: None)
    header = ("assignment", "floor start", "cells", "cells CPU", "stop", "grader start", "cells", "cells CPU", "stop",
              "rest", "total")  # fmt: skip
    print("\n" + "  ".join(f"{h:>16}" if i == 0 else f"{h:>12}" for i, h in enumerate(header)))
    for assignment in course.ASSIGNMENTS:
        student = f"ref-{assignment}"
        path = course.notebook_path(out / "course" / "autograded" / student, assignment)
        notebook = course.notebook_path(out / "course" / "submitted" / student, assignment).read_bytes()
        seed = worker.student_seed(out / "course", student, assignment)
        task = worker.Task(
            student, assignment, notebook, seed, staging.source_digest(assignment), course.CELL_TIMEOUT, 600
        )
        worker.grade_task(task)  # stages the assignment in this process, outside the timing
        floors, ours, rests, totals = [], [], [], []
        for _ in range(repeats):
            floors.append(_phases(path, sandboxed=False))
            ours.append(_phases(path, sandboxed=True))
            start = time.perf_counter()
            with _timed(sandbox.SandboxExecute, "preprocess") as executing:
                worker.grade_task(task)
            totals.append(time.perf_counter() - start)
            rests.append(totals[-1] - sum(executing))
        floor_phases = [statistics.median(p[i] for p in floors) for i in (0, 1, 3, 2)]
        our_phases = [statistics.median(p[i] for p in ours) for i in (0, 1, 3, 2)]
        cells = [assignment, *floor_phases, *our_phases, statistics.median(rests), statistics.median(totals)]
        print("  ".join(f"{c:>16}" if isinstance(c, str) else f"{c:12.2f}" for c in cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 100, 400])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--modes", nargs="+", default=list(WORKERS), choices=list(WORKERS))
    parser.add_argument("--breakdown", action="store_true", help="where one notebook's time goes, per assignment")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="ch04-bench-") as scratch:
        scratch = Path(scratch)
        if args.breakdown:
            return breakdown(scratch, args.repeats)
        for size in args.sizes:
            submitted = scratch / f"class-{size}"
            make_class(submitted, size)
            runs: dict[tuple[str, str], list[tuple[float, float]]] = {}  # (wall, CPU) per notebook
            for repeat in range(args.repeats):
                for mode in args.modes:
                    out = scratch / f"out-{size}-{mode}-{repeat}"  # a fresh folder: nothing cached
                    wall, cpu = pipeline(submitted, out, mode, scratch)
                    runs.setdefault((mode, "grader"), []).append((wall / size, cpu / size))
                    autograded = sorted((out / "course" / "autograded").rglob("*.ipynb"))
                    wall, cpu = floor(autograded, WORKERS[mode])
                    runs.setdefault((mode, "floor"), []).append((wall / len(autograded), cpu / len(autograded)))
                    print(f"  {size} notebooks, {mode}, repeat {repeat + 1}/{args.repeats} done", flush=True)
            for mode in args.modes:
                medians = {
                    kind: [statistics.median(r[i] for r in runs[(mode, kind)]) for i in (0, 1)]
                    for kind in ("grader", "floor")
                }
                rows.append((size, mode, medians["grader"], medians["floor"]))
    cores = len(os.sched_getaffinity(0))
    header = ("N", "mode", "notebooks/s", "s/notebook", "floor s/nb", "ratio", "s/nb vs first N",
              "CPU/nb", "floor CPU/nb", "ratio >=")  # fmt: skip
    print("\n" + "  ".join(f"{h:>{len(h) if i > 1 else 8}}" for i, h in enumerate(header)))
    first = {mode: ours[0] for size, mode, ours, _ in rows if size == args.sizes[0]}
    for size, mode, (ours, our_cpu), (base, base_cpu) in rows:
        cells = (f"{size:>8}", f"{mode:>8}", f"{1 / ours:11.2f}", f"{ours:10.2f}", f"{base:10.2f}")
        cells += (f"{ours / base:5.2f}", f"{ours / first[mode]:15.2f}", f"{our_cpu:6.2f}", f"{base_cpu:12.2f}")
        print("  ".join(cells + (f"{our_cpu / cores / base:8.2f}",)))
    print(f"\nCPU/nb: core-seconds the machine was busy per notebook; ratio >=: the lowest ratio on {cores} cores")


if __name__ == "__main__":
    main()
