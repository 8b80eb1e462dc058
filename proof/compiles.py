"""How many XLA compilations each cell of a graded notebook makes, and their CPU.

`measure(assignment, answer)` runs the kernel version of an assignment's source notebook (hidden
tests included, verdicts cut: what a graded kernel runs, as `answers.quick_score` does) with a
recorder in the kernel, then the judge here on the programs it exported, and returns one
`CellCompiles` per cell: compilations in the kernel (a test cell only exports: none), their CPU,
the cell's CPU, and the compilations the judge made for that test's verdict.

The recorder uses JAX's public monitoring hooks (`jax.monitoring`): the scalar event that JAX
records when a backend compilation starts and the duration event when it ends
(`/jax/core/compile/backend_compile_duration`), so each compilation is counted once, whichever
path asked for it (jit, an eager primitive, a custom rule), and its CPU is the kernel process's
CPU between the two (XLA's compiler threads included). Names and argument shapes come from the
debug line JAX logs as it lowers a program ("Compiling <name> with global shapes and types
..."), read with a logging handler, not by setting `jax_log_compiles`.

Used by `python -m proof.benchmark --compiles` and by the compile budget test
(tests/test_compile_budget.py), which holds each verdict's compilations in the judge on the
reference answer under the `ch4.compile_budget` written in that cell's metadata.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from dataclasses import dataclass, field

import nbformat

from grader import course
from proof import answers

BUDGET_KEY = "ch4"  # cell metadata: {"ch4": {"compile_budget": N}} beside nbgrader's points
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
_LOWERING = re.compile(r"Compiling (\S+) with global shapes and types (.*?)\. Argument mapping", re.S)
_MARK = "__ch4_compiles__"


def budget(cell) -> int | None:
    """The compile budget written in a test cell's metadata, or None."""
    value = cell.get("metadata", {}).get(BUDGET_KEY, {}).get("compile_budget")
    return value if type(value) is int else None


# ---------------------------------------------------------------------------------------------
# The kernel side: `start()` in a cell before the setup cell, `take()` after each cell.

_records: list[dict] = []
_open: dict[str, list[float]] = {}
_lowered: list[tuple[str, str]] = []
_cell_cpu = [0.0]


def start() -> None:
    import logging

    import jax

    def started(event, value, **kwargs):
        if event == COMPILE_EVENT:
            _open.setdefault(kwargs.get("fun_name", "?"), []).append(time.process_time())

    def finished(event, duration, **kwargs):
        if event != COMPILE_EVENT:
            return
        name = kwargs.get("fun_name", "?")
        cpu = time.process_time() - _open[name].pop() if _open.get(name) else float("nan")
        shapes = next((s for n, s in reversed(_lowered) if n == name), "")
        _records.append({"name": name, "shapes": shapes, "cpu": cpu, "wall": duration})

    class Lowered(logging.Handler):
        def emit(self, record):
            found = _LOWERING.match(record.getMessage())
            if found:
                _lowered.append((found.group(1), found.group(2)))
                del _lowered[:-50]

    logger = logging.getLogger("jax._src.interpreters.pxla")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(Lowered(logging.DEBUG))
    logger.propagate = False  # the debug lines go to the handler only, never to the cell's output
    jax.monitoring.register_scalar_listener(started)
    jax.monitoring.register_event_duration_secs_listener(finished)
    _cell_cpu[0] = time.process_time()


def take() -> None:
    """Print, as one JSON line, the compilations since the last call and the CPU since then."""
    now = time.process_time()
    print(_MARK + json.dumps({"records": _records[:], "cpu": now - _cell_cpu[0]}))
    _records.clear()
    _cell_cpu[0] = time.process_time()


# ---------------------------------------------------------------------------------------------
# The grader side


@dataclass
class CellCompiles:
    cell: str  # grade_id ("setup", "answer", "test_...") or "cell <k>"
    hidden: bool
    budget: int | None
    records: list[dict] = field(default_factory=list)  # {"name", "shapes", "cpu", "wall"} each
    cpu: float = 0.0  # the kernel's CPU seconds while the cell ran
    verdict_compiles: int = 0  # compilations the judge made for this test's verdict (caches cleared)

    @property
    def count(self) -> int:
        return len(self.records)

    @property
    def compile_cpu(self) -> float:
        return sum(r["cpu"] for r in self.records)


def _code(source: str):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = ["ch4-compiles"]
    return cell


def measure(assignment: str, answer: str | None = None, secret: str | None = None) -> list[CellCompiles]:
    """Per cell of the kernel notebook (the reference answer when `answer` is None): what it
    compiled, in the kernel and in the judge."""
    import secrets

    from grader.judging import verdict

    source = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
    answer = answers.reference_answer(assignment) if answer is None else answer
    nb = verdict.kernel_notebook(answers.with_answer(source, answer))
    hidden = verdict.hidden_tests(assignment)
    cells, run = [], [_code("import proof.compiles as _c\n_c.start()")]
    for k, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        gid = cell.metadata.get("nbgrader", {}).get("grade_id", f"cell {k}")
        original = next((c for c in source.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid), None)
        cells.append(CellCompiles(gid, gid in hidden, budget(original) if original is not None else None))
        run += [cell, _code("_c.take()")]
    out = nbformat.v4.new_notebook(cells=run, metadata=nb.metadata)
    secret = secret or secrets.token_hex(16)
    answers.run_in_kernel(out, assignment, secret=secret)  # the hidden tests' sizes are drawn from it
    marks = [c for c in out.cells if "ch4-compiles" in c.metadata.get("tags", [])][1:]
    for cell, mark in zip(cells, marks, strict=True):
        text = "".join(o.get("text", "") for o in mark.get("outputs", []) if o.get("name") == "stdout")
        line = next((line for line in text.splitlines() if line.startswith(_MARK)), None)
        if line is None:
            raise RuntimeError(f"{assignment}: no compile record after {cell.cell}: {mark.get('outputs')}")
        data = json.loads(line[len(_MARK) :])
        cell.records, cell.cpu = data["records"], data["cpu"]
    programs, _ = verdict.read_programs(out)
    for cell, count in _verdict_compiles(assignment, programs, secret).items():
        next(c for c in cells if c.cell == cell).verdict_compiles = count
    return cells


def _verdict_compiles(assignment: str, programs: dict, secret: str) -> dict[str, int]:
    """Compilations each verdict makes in a judge, with JAX's caches cleared first (a fresh judge),
    one test at a time so that each count is that verdict's own."""
    import io

    import ch4judge
    import jax

    from grader.judging import verdict

    counts: dict[str, int] = {}
    current = [None]

    def finished(event, duration, **kwargs):
        if event == COMPILE_EVENT and current[0] is not None:
            counts[current[0]] = counts.get(current[0], 0) + 1

    jax.clear_caches()
    jax.monitoring.register_event_duration_secs_listener(finished)
    try:
        for test in verdict.test_cells(assignment):
            current[0] = test["id"]
            counts.setdefault(test["id"], 0)
            ch4judge.judge({"secret": secret, "tests": [test], "programs": programs}, out=io.StringIO())
    finally:
        current[0] = None
        jax.monitoring.unregister_event_duration_listener(finished)
    return counts


def repeats(cells: list[CellCompiles]) -> tuple[Counter, dict[str, set[str]]]:
    """(programs compiled more than once in the notebook, by name and shapes; names compiled
    for more than one set of shapes, with those shapes)."""
    same = Counter((r["name"], r["shapes"]) for c in cells for r in c.records)
    shapes: dict[str, set[str]] = {}
    for c in cells:
        for r in c.records:
            shapes.setdefault(r["name"], set()).add(r["shapes"])
    return (
        Counter({k: n for k, n in same.items() if n > 1}),
        {name: s for name, s in shapes.items() if len(s) > 1},
    )


def report(detail: bool) -> list[tuple[str, int, int, float]]:
    """Per assignment (reference answer): compilations in the kernel's test cells, in its
    verdicts, and their CPU; with `detail`, per test cell and what repeats."""
    totals = []
    for assignment in course.ASSIGNMENTS:
        cells = [c for c in measure(assignment) if c.cell.startswith("test")]
        totals.append((assignment, sum(c.count for c in cells), sum(c.verdict_compiles for c in cells),
                       sum(c.compile_cpu for c in cells)))  # fmt: skip
        if not detail:
            continue
        print(f"\n{assignment}: {totals[-1][1]} compilations in the test cells, {totals[-1][3]:.2f} s CPU")
        print(f"  {'test cell':<28} {'kind':>7} {'compiles':>8} {'budget':>6} {'compile CPU':>11} {'cell CPU':>8} "
              f"{'verdict':>7}")  # fmt: skip
        for c in cells:
            budget = "" if c.budget is None else str(c.budget)
            print(f"  {c.cell:<28} {'hidden' if c.hidden else 'visible':>7} {c.count:>8} {budget:>6} "
                  f"{c.compile_cpu:>11.2f} {c.cpu:>8.2f} {c.verdict_compiles:>7}")  # fmt: skip
        same, shapes = repeats(cells)
        if same:
            print("  compiled again with the same name and shapes (a new trace of the same program, or the same")
            print("  primitive under another transformation):")
            for (name, shape), n in same.most_common(8):
                print(f"    {n}x {name} {shape[:100]}")
        if shapes:
            print("  compiled for more than one set of shapes:")
            for name, found in sorted(shapes.items(), key=lambda kv: -len(kv[1]))[:8]:
                print(f"    {name}: {len(found)} shapes")
    print("\ncompilations per assignment (reference answer, test cells): kernel / verdicts in the grader / kernel CPU")
    for assignment, kernel, verdicts, cpu in totals:
        print(f"  {assignment:<18} {kernel:>5} {verdicts:>5} {cpu:>7.2f} s")
    return totals
