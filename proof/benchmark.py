"""Benchmark grading against its floor and across class sizes:
`python -m proof.benchmark [--sizes 20 100 400] [--repeats 3] [--modes local cluster1 cluster2]`.

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

The peer is plain `nbgrader autograde` (what an instructor would run without this course) on the
same class in the same run: a course folder per process whose source is `solutions/` as it is
(so its kernels run every test cell whole, verdicts included), cold kernels, nbgrader's own
Execute, as many processes as the mode has workers, each autograding its share of the class.
The table gives the ratio to it beside the ratio to the floor.

CPU is counted for this process tree only when it can be: the benchmark moves itself into a
cgroup of its own (`cpuacct`, v1, or the unified hierarchy, v2) and every process it starts
inherits it, so other users of a shared machine do not count (the sandbox moves kernels into
their own pids and memory cgroups, not out of this one). Otherwise it falls back to the whole
machine's busy time (/proc/stat), which the table then says.

`--compiles` prints, for each assignment's reference answer, the XLA compilations per test cell
(visible and hidden), their CPU, the cell's CPU, the compilations its verdict makes in the
grader, the cell's compile budget (`ch4.compile_budget` in its metadata), and which programs
were compiled more than once in the notebook or only for other shapes (`proof/compiles.py`).
Every class run ends with the compilations per assignment.

`--against REV` compares what grading and checking cost in this tree and in the tree of a git
revision REV (checked out into a scratch worktree with a venv of its own, built by its `make
setup`: the processes a grader starts import the grader their venv installed), in the same run:
every reference answer and every natural answer of the catalogue graded with `grader grade
--jobs 2` (CPU per graded notebook, this process tree's; a run where a reference misses full
marks stops the benchmark), and `python -m ch4validate` (what `make check` runs) on the references, warm
(after one run that fills the student's compilation cache), wall seconds. The trees take turns
in every repeat; medians of the repeats.

`--against REV --alone` grades each of those notebooks alone instead (a class of one, `--jobs 1`),
the trees taking turns notebook by notebook, and prints each notebook's difference in CPU and the
median difference per assignment: which notebooks a change made dearer (proof/against.py).

`--loops` grades two correct ODE answers alone, one written with Python `for` loops (its exported
programs unroll 100 RK4 steps) and one with `lax.fori_loop`, in the same run: CPU to grade each,
and the wall time of its first `make check` (an empty compilation cache).

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
import subprocess
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from grader import REPO, course
from grader.cluster import engine
from proof import accounting, answers, compiles, sample_classes
from proof.against import against, alone, in_tree

WORKERS = {"local": 2, "cluster1": 1, "cluster2": 2}


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

    return accounting.measured(run)


def _stage_share(root: Path, submitted: Path, students: list[str]) -> None:
    """A plain nbgrader course folder: the assignments released from `solutions/` as they are
    (registered in its gradebook) and this share of the class submitted."""
    import shutil

    from grader.pipeline import release

    release.generate_release(course.ASSIGNMENTS, release=root / "release", course_root=root)
    for student in students:
        shutil.copytree(submitted / student, root / "submitted" / student)


def _autograde_share(root: str) -> None:
    """`nbgrader autograde` of every submission in a course folder staged by `_stage_share`."""
    import logging
    import warnings

    warnings.simplefilter("ignore")  # nbgrader's SQLAlchemy chatter, as in the grader's workers

    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    root_path = Path(root)
    config = course.nbgrader_config(root_path, release=root_path / "release")
    api = NbGraderAPI(CourseDirectory(config=config), config=config)
    api.log.setLevel(logging.ERROR)
    for folder in sorted((root_path / "submitted").iterdir()):
        for assignment in sorted(p.name for p in folder.iterdir()):
            api.autograde(assignment, folder.name, force=True, create=True)


def nbgrader_peer(submitted: Path, scratch: Path, jobs: int) -> tuple[float, float]:
    """Plain `nbgrader autograde` of the class in `jobs` processes (course folders staged first,
    outside the timing)."""
    students = sorted(p.name for p in submitted.iterdir() if p.is_dir())
    shares = [students[k::jobs] for k in range(jobs)]
    roots = [Path(tempfile.mkdtemp(dir=scratch, prefix="nbgrader-")) for _ in shares]
    for root, share in zip(roots, shares, strict=True):
        _stage_share(root, submitted, share)

    def run():
        with ProcessPoolExecutor(jobs) as pool:
            list(pool.map(_autograde_share, [str(r) for r in roots]))

    return accounting.measured(run)


def pipeline(submitted: Path, out: Path, mode: str, scratch: Path) -> tuple[float, float]:
    from grader import grade

    quiet = lambda *a: None  # noqa: E731
    if mode == "local":
        return accounting.measured(lambda: grade.grade(submitted, out, WORKERS[mode], echo=quiet))
    logs = Path(tempfile.mkdtemp(dir=scratch))
    with engine.scheduler_with_workers(logs, WORKERS[mode]) as cluster:
        # measured once the workers are up: an instructor's cluster is started once
        return accounting.measured(
            lambda: grade.grade(submitted, out, WORKERS[mode], echo=quiet, scheduler=cluster.address, tls=cluster.tls)
        )


def _phases(path: Path, sandboxed: bool) -> tuple[float, float, float, float]:
    """(start, cells, stop, CPU of the cells) seconds of executing one notebook: cold nbclient, or
    as grading does."""
    import nbformat
    from nbclient import NotebookClient

    from grader.kernels import manager

    nb = nbformat.read(path, as_version=4)
    options = {"kernel_manager_class": manager.SandboxKernelManager, "shutdown_kernel": "immediate"}
    client = NotebookClient(
        nb, timeout=course.CELL_TIMEOUT, kernel_name="python3", allow_errors=True, extra_arguments=course.KERNEL_ARGS,
        **(options if sandboxed else {}),
    )  # fmt: skip
    marks = [time.perf_counter()]
    with client.setup_kernel():
        marks.append(time.perf_counter())
        busy = accounting.busy_seconds()
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        busy = accounting.busy_seconds() - busy
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
    from grader import grade
    from grader.kernels import manager
    from grader.pipeline import staging, worker

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
        seed = worker.student_seed(out / "course", student, assignment, notebook)
        task = worker.Task(
            student, assignment, notebook, seed, staging.source_digest(assignment), course.CELL_TIMEOUT, 600
        )
        worker.grade_task(task)  # stages the assignment in this process, outside the timing
        floors, ours, rests, totals = [], [], [], []
        for _ in range(repeats):
            floors.append(_phases(path, sandboxed=False))
            ours.append(_phases(path, sandboxed=True))
            start = time.perf_counter()
            with _timed(manager.SandboxExecute, "preprocess") as executing:
                worker.grade_task(task)
            totals.append(time.perf_counter() - start)
            rests.append(totals[-1] - sum(executing))
        floor_phases = [statistics.median(p[i] for p in floors) for i in (0, 1, 3, 2)]
        our_phases = [statistics.median(p[i] for p in ours) for i in (0, 1, 3, 2)]
        cells = [assignment, *floor_phases, *our_phases, statistics.median(rests), statistics.median(totals)]
        print("  ".join(f"{c:>16}" if isinstance(c, str) else f"{c:12.2f}" for c in cells))


# Two correct ODE answers that differ in how they loop: Python `for` loops (unrolled into large
# programs that the judge must compile whole) and `lax.fori_loop` (a loop the program keeps).
LOOP_ANSWERS = {"Python loops": "python_loop_prints", "fori_loop": "magics_fori"}  # natural_<slug>.py


def loops(scratch: Path, repeats: int) -> None:
    """Each of LOOP_ANSWERS graded alone (`grader grade --jobs 1` on a class of that one notebook,
    core-seconds of this process tree) and checked the first time (`python -m ch4validate` with an
    empty compilation cache, what a student's first `make check` runs: wall seconds), the two
    answers taking turns within each repeat; medians."""
    entries = {e.slug: e for e in answers.entries("ode_adjoint")}
    graded, checked = {label: [] for label in LOOP_ANSWERS}, {label: [] for label in LOOP_ANSWERS}
    for repeat in range(repeats):
        for label, slug in LOOP_ANSWERS.items():
            mine = scratch / f"{slug}-{repeat}"
            notebook = sample_classes.answered("ode_adjoint", entries[slug].answer)
            sample_classes.write(mine / "class", "student", "ode_adjoint", notebook)
            grade = ["-m", "grader", "grade", str(mine / "class"), "--jobs", "1", "--out", str(mine / "out")]
            graded[label].append(accounting.measured(lambda: in_tree(REPO, REPO, *grade))[1])  # noqa: B023
            _require_scores(mine / "out" / "grades.csv", label)
            check = [str(REPO / ".venv" / "bin" / "python"), "-m", "ch4validate",
                     str(course.notebook_path(mine / "class" / "student", "ode_adjoint"))]  # fmt: skip
            env = {**os.environ, "XDG_CACHE_HOME": str(mine / "empty-cache")}  # nothing compiled yet
            checked[label].append(accounting.measured(lambda: subprocess.run(check, env=env, check=True))[0])  # noqa: B023
            print(f"  {label}, repeat {repeat + 1}/{repeats}: graded alone {graded[label][-1]:.1f} core-s, "
                  f"first make check {checked[label][-1]:.1f} s", flush=True)  # fmt: skip
    print(f"\n{'ode_adjoint answer':>20}  {'graded alone, core-s':>21}  {'first make check, s':>20}")
    for label in LOOP_ANSWERS:
        print(f"{label:>20}  {statistics.median(graded[label]):21.1f}  {statistics.median(checked[label]):20.1f}")
    print(f"\nmedians of {repeats} repeats; the two answers took turns within each repeat")


def _require_scores(grades: Path, label: str) -> None:
    """A correct answer that misses full marks measured something else: stop."""
    import csv

    with open(grades, encoding="utf-8") as f:
        (row,) = list(csv.DictReader(f))
    if row["score"] != row["max_score"]:
        raise SystemExit(f"{label}: {row['score']}/{row['max_score']}, not full marks; not a measurement")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 100, 400])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--modes", nargs="+", default=list(WORKERS), choices=list(WORKERS))
    parser.add_argument("--breakdown", action="store_true", help="where one notebook's time goes, per assignment")
    parser.add_argument("--compiles", action="store_true", help="XLA compilations per test cell of each reference")
    parser.add_argument("--no-peer", action="store_true", help="skip plain nbgrader autograde")
    parser.add_argument("--against", metavar="REV", help="CPU per graded notebook and make check, here and at REV")
    parser.add_argument("--alone", action="store_true", help="with --against: each notebook graded alone in both trees")
    parser.add_argument("--loops", action="store_true", help="a Python-loop and a fori_loop ODE answer, graded alone")
    args = parser.parse_args()
    if args.compiles:
        compiles.report(detail=True)
        return
    counted = accounting.start()
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="ch04-bench-") as scratch:
            scratch = Path(scratch)
            if args.breakdown:
                return breakdown(scratch, args.repeats)
            if args.against:
                return alone(scratch, args.against) if args.alone else against(scratch, args.against, args.repeats)
            if args.loops:
                return loops(scratch, args.repeats)
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
                        if not args.no_peer:
                            wall, cpu = nbgrader_peer(submitted, scratch, WORKERS[mode])
                            runs.setdefault((mode, "nbgrader"), []).append((wall / size, cpu / size))
                        print(f"  {size} notebooks, {mode}, repeat {repeat + 1}/{args.repeats} done", flush=True)
                for mode in args.modes:
                    medians = {
                        kind: [statistics.median(r[i] for r in runs[(mode, kind)]) for i in (0, 1)]
                        for kind in ("grader", "floor", "nbgrader")
                        if (mode, kind) in runs
                    }
                    rows.append((size, mode, medians))
    finally:
        accounting.stop()
    cores = len(os.sched_getaffinity(0))
    header = ("N", "mode", "notebooks/s", "s/notebook", "floor s/nb", "ratio", "nbgrader s/nb", "ratio",
              "s/nb vs first N", "CPU/nb", "floor CPU/nb", "nbgrader CPU/nb", "ratio >=")  # fmt: skip
    print("\n" + "  ".join(f"{h:>{len(h) if i > 1 else 8}}" for i, h in enumerate(header)))
    first = {mode: m["grader"][0] for size, mode, m in rows if size == args.sizes[0]}
    for size, mode, m in rows:
        (ours, our_cpu), (base, base_cpu) = m["grader"], m["floor"]
        peer, peer_cpu = m.get("nbgrader", (float("nan"), float("nan")))
        cells = (f"{size:>8}", f"{mode:>8}", f"{1 / ours:11.2f}", f"{ours:10.2f}", f"{base:10.2f}")
        cells += (f"{ours / base:5.2f}", f"{peer:13.2f}", f"{ours / peer:5.2f}", f"{ours / first[mode]:15.2f}")
        cells += (f"{our_cpu:6.2f}", f"{base_cpu:12.2f}", f"{peer_cpu:15.2f}", f"{our_cpu / cores / base:8.2f}")
        print("  ".join(cells))
    print(f"\nCPU/nb: core-seconds of {counted} per notebook; ratio >=: the lowest ratio to the floor on {cores} cores")
    compiles.report(detail=False)


if __name__ == "__main__":
    main()
