"""This tree against the tree of a git revision, for `python -m proof.benchmark --against REV`.

The revision is checked out into a scratch worktree with a venv of its own, built by its `make
setup` (the processes a grader starts import the grader their venv installed). Both trees grade
the same answer texts, each in its own release notebooks: every reference answer and every
natural answer of this tree's catalogue.

* `against`: the whole pool as one class, `grader grade --jobs 2` (CPU per graded notebook, this
  process tree's), and `python -m ch4validate` (what `make check` runs) on the references, warm
  (after one run that fills the student's compilation cache), wall seconds. The trees take turns
  in every repeat; medians of the repeats.
* `alone` (`--alone`): each notebook of the pool graded alone, a class of one (`--jobs 1`), the
  two trees taking turns notebook by notebook: which notebooks a change made dearer, and by how
  much. Each run includes the fixed cost of starting Dask and the fork servers, the same in both
  trees to within the noise, so the differences are what the notebooks cost.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import statistics
import subprocess
from pathlib import Path

from grader import REPO, course
from proof import accounting, answers


def in_tree(tree: Path, cwd: Path, *args: str) -> None:
    """`python ARGS` in `tree`'s own venv, with its kit and grader first on the path. Its own venv:
    the processes the grader starts (fork server, judge) import the grader the venv installed."""
    env = {**os.environ, "PYTHONPATH": f"{tree / 'kit'}:{tree}"}
    subprocess.run([str(tree / ".venv" / "bin" / "python"), *args], cwd=cwd, env=env, check=True, capture_output=True)


# Run in each tree: the same answer texts in that tree's own release notebooks (the class to
# grade, and the references in an exercises/ folder for make check).
_WRITE_ANSWERS = """
import json, sys
from pathlib import Path
import nbformat
try:
    from proof import sample_classes
except ImportError:  # a revision from before the proof package
    from grader import sample_classes
pool, dest = json.loads(Path(sys.argv[1]).read_text()), Path(sys.argv[2])
for student, assignment, answer in pool:
    notebook = sample_classes.answered(assignment, answer)
    sample_classes.write(dest / "class", student, assignment, notebook)
    if student.startswith("reference-"):
        (dest / "check" / assignment).mkdir(parents=True)
        nbformat.write(notebook, dest / "check" / assignment / f"{assignment}.ipynb")
"""


def _pool() -> list[tuple[str, str, str]]:
    """(student, assignment, answer): the references and the catalogue's natural answers."""
    pool = [(f"reference-{a}", a, answers.reference_answer(a)) for a in course.ASSIGNMENTS]
    return pool + [(f"natural-{e.assignment}-{e.slug}", e.assignment, e.answer)
                   for e in answers.entries() if e.kind == "natural"]  # fmt: skip


def _write(tree: Path, pool: list, dest: Path) -> None:
    """`pool` as a class (and the references for make check) under `dest`, in `tree`'s notebooks."""
    dest.mkdir(parents=True)
    (dest / "pool.json").write_text(json.dumps(pool), encoding="utf-8")
    in_tree(tree, dest, "-c", _WRITE_ANSWERS, str(dest / "pool.json"), str(dest))


def _require_full_marks(grades: Path, label: str, references: int) -> None:
    """A run whose `references` reference answers did not all get full marks measured something
    else: stop."""
    with open(grades, encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["student_id"].startswith("reference-")]
    short = [f"{r['assignment']} {r['score']}/{r['max_score']}" for r in rows if r["score"] != r["max_score"]]
    if len(rows) != references or short:
        raise SystemExit(f"{label}: the references did not all get full marks ({short or rows}); not a measurement")


@contextlib.contextmanager
def _worktree(scratch: Path, revision: str):
    """`revision` checked out in a scratch worktree with its own venv; removed afterwards."""
    worktree = scratch / "against"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(worktree), revision],
                   check=True, capture_output=True)  # fmt: skip
    try:
        print(f"  {revision}: make setup in a scratch worktree (its own pins, its grader installed)", flush=True)
        subprocess.run(["make", "-C", str(worktree), "setup"], check=True, capture_output=True)
        yield worktree
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(worktree)], capture_output=True)


def _grade(tree: Path, folder: Path, out: str, jobs: int) -> float:
    """Core-seconds to grade `folder`/class into `out` (a fresh folder: nothing reused)."""
    grade = ["-m", "grader", "grade", str(folder / "class"), "--jobs", str(jobs), "--out", out]
    return accounting.measured(lambda: in_tree(tree, tree, *grade))[1]


def against(scratch: Path, revision: str, repeats: int) -> None:
    """This tree against `revision`: CPU per graded notebook, and `make check` warm (see above)."""
    pool = _pool()
    references = sum(student.startswith("reference-") for student, _, _ in pool)
    with _worktree(scratch, revision) as worktree:
        trees = {"this tree": (REPO, scratch / "0"), revision: (worktree, scratch / "1")}
        checks = {}
        for label, (tree, mine) in trees.items():
            _write(tree, pool, mine)
            checks[label] = ["-m", "ch4validate", *sorted(str(p) for p in (mine / "check").rglob("*.ipynb"))]
            in_tree(tree, mine, *checks[label])  # fills the compilation cache: the runs below are warm
        graded, checked = {label: [] for label in trees}, {label: [] for label in trees}
        # The trees take turns within each repeat, so a drift of the machine reaches both sides.
        for repeat in range(repeats):
            for label, (tree, mine) in trees.items():
                out = str(mine / f"out-{repeat}")
                graded[label].append(_grade(tree, mine, out, jobs=2))
                _require_full_marks(Path(out) / "grades.csv", label, references)
                check = checks[label]
                checked[label].append(accounting.measured(lambda: in_tree(tree, mine, *check))[0])  # noqa: B023
                print(f"  {label}, repeat {repeat + 1}/{repeats}: {graded[label][-1] / len(pool):.2f} core-s per "
                      f"graded notebook, make check {checked[label][-1]:.2f} s", flush=True)  # fmt: skip
        rows = {label: (statistics.median(graded[label]) / len(pool), statistics.median(checked[label]))
                for label in trees}  # fmt: skip
    (cpu, check_s), (old_cpu, old_check_s) = rows["this tree"], rows[revision]
    print(f"\n{'tree':>12}  {'CPU/graded notebook':>20}  {f'make check, {references} answers, warm':>28}")
    for label, (c, w) in rows.items():
        print(f"{label[:12]:>12}  {c:18.2f} s  {w:26.2f} s")
    print(f"{'ratio':>12}  {cpu / old_cpu:20.2f}  {check_s / old_check_s:28.2f}")
    print(f"\n{len(pool)} notebooks graded per run (references and natural answers), medians of {repeats} repeats")


def alone(scratch: Path, revision: str) -> None:
    """Each notebook of the pool graded alone in this tree and in `revision` (see above)."""
    pool = _pool()
    costs: dict[str, dict[str, float]] = {}
    with _worktree(scratch, revision) as worktree:
        trees = {"this tree": REPO, revision: worktree}
        for k, entry in enumerate(pool):
            student = entry[0]
            for n, (label, tree) in enumerate(trees.items()):
                mine = scratch / str(n) / student
                _write(tree, [entry], mine)
                costs.setdefault(student, {})[label] = _grade(tree, mine, str(mine / "out"), jobs=1)
                _require_full_marks(mine / "out" / "grades.csv", label, int(student.startswith("reference-")))
            here, there = costs[student]["this tree"], costs[student][revision]
            print(f"  {k + 1:2}/{len(pool)} {student:<48} {here:6.1f} {there:6.1f} core-s  {here - there:+5.1f}",
                  flush=True)  # fmt: skip
    print(f"\n{'assignment':>18}  {'notebooks':>9}  {'median difference, core-s':>26}  {'largest':>8}")
    for assignment in course.ASSIGNMENTS:
        if not (more := [costs[s]["this tree"] - costs[s][revision] for s, a, _ in pool if a == assignment]):
            continue
        print(f"{assignment:>18}  {len(more):9}  {statistics.median(more):26.1f}  {max(more):8.1f}")
    print(f"\neach notebook graded alone (a class of one, --jobs 1), this tree minus {revision}")
