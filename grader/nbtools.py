"""Execute course notebooks headless and keep their sources tidy.

One executor for the whole project: the pytest harness, `python -m grader run` and the
graders all call `execute_notebook`, so "a notebook passes" means the same thing everywhere.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from grader import REPO, course

# A cell tagged `raises-exception` must name the exception class it raises in this metadata
# key (the class name exactly as Python prints it, e.g. "TypeError", "UnexpectedTracerError").
RAISES_TAG = "raises-exception"
RAISES_KEY = "expected_exception"

# The slowest cell in the course (a benchmark sweep) takes well under a minute on 2 busy
# cores; 300 s leaves room for a loaded CI machine without letting a hung kernel block CI.
CELL_TIMEOUT = 300

# Headless and deterministic: CPU only (the course claims are made on CPU) and a
# non-interactive matplotlib backend so plots render without a display.
HEADLESS_ENV = {"JAX_PLATFORMS": "cpu", "MPLBACKEND": "Agg"}
# The kernel itself draws with matplotlib's inline backend, as JupyterLab does: as headless as Agg,
# and each figure becomes a PNG output, which the website shows (see EXECUTED below).
KERNEL_BACKEND = "module://matplotlib_inline.backend_inline"


KERNEL_METADATA = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


# Executed copies: `make test` keeps every chapter notebook it ran, outputs and all, under
# build/executed/ (same relative path), with the SHA-256 of the source it ran recorded in the
# copy's metadata. The website (`make book`, docs/book.md) renders these copies instead of
# executing the chapter a second time, and executes again any notebook whose source changed since.
EXECUTED = REPO / "build" / "executed"
SOURCE_DIGEST_KEY = "ch4_source_sha256"


def source_digest(path: Path) -> str:
    """The notebook's bytes and how it is run: a change to either makes the executed copy stale."""
    how = repr((KERNEL_BACKEND, HEADLESS_ENV, course.KERNEL_ARGS)).encode()
    return hashlib.sha256(how + b"\0" + Path(path).read_bytes()).hexdigest()


def executed_copy(path: Path, cache: Path = EXECUTED, root: Path = REPO) -> Path:
    """Where the executed copy of a notebook under `root` is kept."""
    return cache / Path(path).resolve().relative_to(root.resolve())


def fresh_executed_copy(path: Path, copy: Path):
    """The executed notebook at `copy` when it was executed from exactly `path` as it is now, else None."""
    if not copy.exists():
        return None
    try:
        nb = nbformat.read(copy, as_version=4)
    except Exception:  # a torn or foreign file is no copy at all
        return None
    return nb if nb.metadata.get(SOURCE_DIGEST_KEY) == source_digest(path) else None


@contextlib.contextmanager
def keeping(copy: Path):
    """Held while a notebook is executed into `copy`: the book waits for a run of `make test` in
    progress instead of executing the same notebook beside it."""
    copy.parent.mkdir(parents=True, exist_ok=True)
    with open(copy.with_name(f".{copy.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def keep(nb, copy: Path) -> None:
    """Write an executed notebook (stamped by `execute_notebook` with its source's digest) to `copy`."""
    copy.parent.mkdir(parents=True, exist_ok=True)
    partial = copy.with_name(f".{copy.name}.{os.getpid()}")  # parallel workers never see a torn file
    nbformat.write(nb, partial)
    partial.replace(copy)


@dataclass
class RunResult:
    path: Path
    problems: list[str] = field(default_factory=list)
    notebook: nbformat.NotebookNode | None = field(default=None, repr=False)  # as executed

    @property
    def ok(self) -> bool:
        return not self.problems


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else text


def raised_exception(cell) -> str | None:
    """The class name of the exception a cell raised, or None when it raised nothing."""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return out.get("ename")
    return None


def _error_text(cell) -> str:
    return next(
        (str(out.get("evalue", "")) for out in cell.get("outputs", []) if out.get("output_type") == "error"), ""
    )


def check_expected_exceptions(nb) -> list[str]:
    """Each `raises-exception` cell must have raised exactly the class it names. An exercise's
    answer and test cells (nbgrader's) carry the tag with no class: it is there so that a student's
    Run All goes on past a failing test (CONTRIBUTING, "Adding an exercise"); in the source, with
    the reference answer, they must raise nothing."""
    problems = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or RAISES_TAG not in cell.metadata.get("tags", []):
            continue
        expected = cell.metadata.get(RAISES_KEY)
        got = raised_exception(cell)
        where = f"cell {index} ({_last_line(cell.source)[:60]!r})"
        if not expected and "nbgrader" in cell.metadata:
            if got is not None:
                grade_id = (cell.metadata["nbgrader"] or {}).get("grade_id", "?")
                problems.append(f"cell {index} ({grade_id}) failed: {got}: {_last_line(_error_text(cell))}")
            continue
        if not expected:
            problems.append(f"{where}: tagged {RAISES_TAG} but names no exception in '{RAISES_KEY}'")
        elif got is None:
            problems.append(f"{where}: expected {expected}, but the cell raised nothing")
        elif got != expected:
            problems.append(f"{where}: expected {expected}, but the cell raised {got}")
    return problems


# Matplotlib's warning for a character no named font has: the figure shows a box there.
MISSING_GLYPH = "missing from font"


def check_figure_glyphs(nb) -> list[str]:
    """Every character of every figure was drawn: no output warns of a missing glyph (the fonts are
    named in kit/ch4style.py; without one of them installed, this fails every notebook that draws)."""
    problems = []
    for index, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            text = out.get("text", "") if out.get("output_type") == "stream" else ""
            missing = [line.split("Warning: ")[-1] for line in text.splitlines() if MISSING_GLYPH in line]
            if missing:
                problems.append(f"cell {index}: a figure shows a box: {missing[0]}")
    return problems


def execute_notebook(path: Path, timeout: int = CELL_TIMEOUT, keep_at: Path | None = None) -> RunResult:
    """Run a notebook top to bottom in a fresh kernel, in its own folder, and judge it; when it
    passes and `keep_at` is given, write the executed notebook there (see EXECUTED)."""
    if keep_at is None:
        return _execute(Path(path), timeout)
    with keeping(keep_at):
        result = _execute(Path(path), timeout)
        if result.ok:
            keep(result.notebook, keep_at)
        return result


def _execute(path: Path, timeout: int) -> RunResult:
    digest = source_digest(path)
    nb = nbformat.read(path, as_version=4)
    os.environ.update(HEADLESS_ENV)  # the kernel inherits this process's environment
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        extra_arguments=course.KERNEL_ARGS,
        resources={"metadata": {"path": str(path.parent)}},
    )
    nb.metadata[SOURCE_DIGEST_KEY] = digest  # the source this run saw, even if it changes meanwhile
    result = RunResult(path, notebook=nb)
    try:
        client.execute(env={**os.environ, "MPLBACKEND": KERNEL_BACKEND})
    except CellExecutionError as err:
        failed = next(
            (
                i
                for i, c in enumerate(nb.cells)
                if c.cell_type == "code" and raised_exception(c) and RAISES_TAG not in c.metadata.get("tags", [])
            ),
            "?",
        )
        result.problems.append(f"cell {failed} failed: {err.ename}: {_last_line(str(err.evalue))}")
    except Exception as err:  # kernel death, timeout: still a verdict about this notebook
        result.problems.append(f"{type(err).__name__}: {_last_line(str(err))}")
    else:
        result.problems.extend(check_expected_exceptions(nb))
        result.problems.extend(check_figure_glyphs(nb))
    return result


def tidy(path: Path) -> bool:
    """Strip outputs, execution counts and editor metadata; return True when the file changed."""
    path = Path(path)
    before = path.read_text(encoding="utf-8")
    nb = nbformat.reads(before, as_version=4)
    # Keep only what the course needs: nbgrader's own metadata lives in cell metadata.
    nb.metadata = nbformat.from_dict({k: v for k, v in KERNEL_METADATA.items()})
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        hidden = cell.metadata.get("jupyter", {}).get("source_hidden")
        for key in ("collapsed", "scrolled", "execution", "jupyter", "ExecuteTime", "lines_to_next_cell"):
            cell.metadata.pop(key, None)
        if hidden:  # a collapsed evidence cell stays collapsed: it is part of the lesson's layout
            cell.metadata["jupyter"] = {"source_hidden": True}
    after = nbformat.writes(nb) + "\n"
    if after != before:
        path.write_text(after, encoding="utf-8")
    return after != before


# Study time, the one measure every notebook's stated time is checked against (CONTRIBUTING.md,
# "One sitting per notebook"). It is computed from the text alone, so it is the same on every
# machine: a learner reads Chinese prose at about 200 characters a minute and code at about 6
# non-blank lines a minute (10 s a line: read it, predict what it prints); each visible cell costs
# another half minute to run, wait for and read its output. A collapsed evidence cell is run and its
# output read (a quarter of a minute), and its code is skimmed by the reader who opens it, at a
# quarter of the reading cost (24 lines a minute): less than a visible cell, but not nothing when it
# is long. A ✍️ task cell costs the minutes it takes to solve, a 🤔 prompt the pause to predict.
# Calibration: a reviewer reading 4.6, 4.7, 4.8 and 4.10 as they were needed 75-100 minutes each;
# this measure gives 78-89 for them.
PROSE_CHARS_PER_MINUTE = 200
CODE_LINES_PER_MINUTE = 6
CELL_MINUTES = 0.5
COLLAPSED_CELL_MINUTES = 0.25
COLLAPSED_LINES_PER_MINUTE = 24
TASK_MINUTES = 5
PREDICT_MINUTES = 0.5
TASK_CELL = re.compile(r"\A\s*# ✍️")  # an ungraded task: a code cell whose first line is `# ✍️ …`
PREDICT = "🤔"
STATED_TIME = re.compile(r"预计学习时间：约 (\d+) 分钟")


def is_collapsed(cell) -> bool:
    return bool(cell.metadata.get("jupyter", {}).get("source_hidden"))


def is_task(cell) -> bool:
    return cell.cell_type == "code" and bool(TASK_CELL.match(cell.source))


def cell_minutes(cell) -> float:
    """The minutes one cell costs a learner by the measure above."""
    if cell.cell_type == "markdown":
        prose = len(re.sub(r"\s", "", cell.source)) / PROSE_CHARS_PER_MINUTE
        return prose + PREDICT_MINUTES * cell.source.count(PREDICT)
    if cell.cell_type != "code":
        return 0.0
    lines = sum(1 for line in cell.source.splitlines() if line.strip())
    if is_collapsed(cell):
        return COLLAPSED_CELL_MINUTES + lines / COLLAPSED_LINES_PER_MINUTE
    return CELL_MINUTES + lines / CODE_LINES_PER_MINUTE + (TASK_MINUTES if is_task(cell) else 0.0)


def study_minutes(nb) -> float:
    """The expected study time of a notebook by the measure above."""
    return sum(cell_minutes(cell) for cell in nb.cells)


def stated_minutes(nb) -> int | None:
    """The time a notebook's first cell promises ("预计学习时间：约 N 分钟"), if it says one."""
    match = STATED_TIME.search(nb.cells[0].source) if nb.cells else None
    return int(match.group(1)) if match else None


def hygiene_problems(path: Path) -> list[str]:
    """What keeps a committed notebook from being clean (outputs, counts, stray metadata)."""
    nb = nbformat.read(path, as_version=4)
    problems = []
    if dict(nb.metadata) != KERNEL_METADATA:
        extra = sorted(set(nb.metadata) ^ set(KERNEL_METADATA)) or ["kernelspec/language_info"]
        problems.append(f"notebook metadata differs from the course kernel: {', '.join(extra)}")
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None):
            problems.append(f"cell {index} carries outputs or an execution count")
    return problems
