"""The trusted half of every test: verdicts from solutions/, run by the judge on exported programs.

A graded kernel runs each test cell without its verdict (`kernel_notebook`): the cell exports the
student's functions with `jax.export` and the programs leave as a cell output (`read_programs`).
`judge` then hands the programs, the source test cells and the student's key to the judge
(`python -m ch4judge`, kit/ch4judge.py) in a sandbox of its own: no network, no files, its own
memory cap. It checks every program against its allow-policy, draws the inputs from the key and
runs each verdict. The key and the inputs never exist where the student's code runs.
"""

from __future__ import annotations

import base64
import copy
import functools
import json
import os
import queue
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import nbformat
from ch4protocol import MIME, VERDICT_MARKER, split_test_cell

from grader import course, messages
from grader.kernels import execute

HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
MAX_PAYLOAD_CHARS = 64 * 2**20  # all programs of one submission, base64: far above what the tests export
JUDGE_MEMORY = 4096 * 2**20


def _meta(cell) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta if isinstance(meta, dict) else {}


def is_test(cell) -> bool:
    return cell.cell_type == "code" and bool(_meta(cell).get("grade"))


@functools.cache
def _source(assignment: str):
    return nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)


def hidden_tests(assignment: str) -> set[str]:
    """The grade ids of the tests a student never sees (a hidden block in the source)."""
    return {_meta(c)["grade_id"] for c in _source(assignment).cells if is_test(c) and HIDDEN_BEGIN in c.source}


def kernel_source(source: str) -> str:
    """A test cell as a graded kernel runs it: the export part, the verdict cut out."""
    lines = source.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == VERDICT_MARKER]
    if len(starts) != 1:
        raise ValueError(f"a test cell needs exactly one line {VERDICT_MARKER!r}, found {len(starts)}")
    end = next((i for i in range(starts[0], len(lines)) if lines[i].strip() == HIDDEN_END), len(lines))
    return "\n".join(lines[: starts[0]] + lines[end:])


def kernel_notebook(nb):
    """A copy of a source notebook whose test cells are their kernel versions."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if is_test(cell):
            cell.source = kernel_source(cell.source)
    return nb


def _well_formed(payload) -> bool:
    """{"test": str, "programs": {name: {"program": base64 text[, "backward": base64 text]} | {"error": text}}}."""
    if not (isinstance(payload, dict) and isinstance(payload.get("programs"), dict)):
        return False
    for name, item in payload["programs"].items():
        if not (isinstance(name, str) and isinstance(item, dict)):
            return False
        if set(item) not in ({"error"}, {"program"}, {"program", "backward"}):
            return False
        if not all(isinstance(value, str) for value in item.values()):
            return False
        for kind in ("program", "backward"):
            try:
                base64.b64decode(item.get(kind, ""), validate=True)
            except ValueError:
                return False
    return True


class Exported(dict):
    """The programs a kernel exported, by test id; `stopped`: the tests whose cell the kernel
    stopped at its time limit (kernels/execute.TestTimeLimit), with that limit in seconds: they
    fail with that reason, whatever they exported."""

    def __init__(self) -> None:
        super().__init__()
        self.stopped: dict[str, float] = {}


def _stopped_at(cell) -> float | None:
    """The limit a test cell was stopped at (its TIMED_OUT error), or None."""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error" and out.get("ename") == execute.TIMED_OUT:
            try:
                return float(out.get("evalue"))
            except (TypeError, ValueError):
                return None  # not the grader's: only code of the student's could write it
    return None


def read_programs(nb) -> tuple[Exported, list[str]]:
    """(programs by test id, anomalies). Only a test cell's own outputs count, exactly one payload
    per test, labelled with that test. Whatever else an answer leaves in the notebook is not read;
    a payload that could only come from code writing outputs of its own is an anomaly for a person
    to look at (it can only take programs away from a test, never give it points)."""
    found, anomalies, total = Exported(), [], 0
    for cell in nb.cells:
        payloads = [
            out["data"][MIME]
            for out in cell.get("outputs", [])
            if out.get("output_type") in ("display_data", "execute_result") and MIME in out.get("data", {})
        ]
        test = _meta(cell).get("grade_id") if is_test(cell) else None
        if test is None:
            if payloads:
                anomalies.append(messages.programs_outside_tests())
            continue
        if (seconds := _stopped_at(cell)) is not None:
            found.stopped[test] = seconds
        if len(payloads) > 1:
            anomalies.append(messages.programs_repeated(test))
            continue
        if not payloads:
            continue  # the cell did not get that far: the verdict says "no program"
        payload = payloads[0]
        if not _well_formed(payload) or payload.get("test") != test:
            anomalies.append(messages.programs_malformed(test))
            continue
        total += len(json.dumps(payload["programs"]))
        if total > MAX_PAYLOAD_CHARS:
            anomalies.append(messages.programs_malformed(test))
            continue
        found[test] = payload["programs"]
    return found, anomalies


@dataclass
class TestResult:
    test: str
    points: float
    max_points: float
    message: str | None  # None: passed

    @property
    def passed(self) -> bool:
        return self.message is None


def test_cells(assignment: str) -> list[dict]:
    """Every test of the source notebook as the judge reads it: id, points, body, hidden or not."""
    hidden = hidden_tests(assignment)
    return [
        {
            "id": _meta(c)["grade_id"],
            "points": float(_meta(c).get("points", 0)),
            "body": split_test_cell(c.source),
            "hidden": _meta(c)["grade_id"] in hidden,
        }
        for c in _source(assignment).cells
        if is_test(c)
    ]


JUDGE_ENV = {"JAX_PLATFORMS": "cpu", "LANG": "C.UTF-8"}


def _start_judge(box):
    """The judge process: forked from the pre-imported server into `box` where that works (root,
    the full sandbox), else `python -m ch4judge` in `box` (or bare, without a sandbox)."""
    from grader.kernels import forkserver, sandbox

    if box is not None and forkserver.available():
        return forkserver.start_judge(box, sandbox.kernel_env(JUDGE_ENV))
    prefix = box.command(JUDGE_ENV) if box is not None else []
    env = None if box is not None else {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONPATH": str(sandbox.KIT)}
    return subprocess.Popen(
        [*prefix, sys.executable, "-m", "ch4judge"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True, env=env,
    )  # fmt: skip


CACHE_FOLDER = "judge-cache"


def new_cache(parent: Path) -> Path:
    """An empty folder `parent/CACHE_FOLDER` for `judge(cache=...)`, writable by the sandboxed judges."""
    from grader.kernels import sandbox

    folder = parent / CACHE_FOLDER
    folder.mkdir()
    sandbox.give_to_sandbox(folder)
    return folder


def _run_judge(
    tests: list[dict], programs: dict, secret: str, limits: dict[str, float], cache: Path | None
) -> tuple[dict[str, dict], str | None]:
    """One judge process on `tests`: ({test id: its line}, why it stopped early: None, the
    message for the test whose verdict ran past its limit in `limits`, or for a judge that died).
    The judge prints a line per test, in order: the test without a line is the one running."""
    from grader.kernels import sandbox

    job = json.dumps({
        "secret": secret, "cache": str(cache) if cache else None,
        "tests": tests, "programs": {t["id"]: programs[t["id"]] for t in tests if t["id"] in programs},
    })  # fmt: skip
    box = sandbox.Box(memory=JUDGE_MEMORY, shared=cache) if sandbox.probe() is None else None
    lines, cut = {}, None
    try:
        judge = _start_judge(box)
        received: queue.Queue = queue.Queue()
        threading.Thread(target=_forward_lines, args=(judge, job, received), daemon=True).start()
        clock = execute.CpuClock(getattr(judge, "cpu_root", judge.pid))
        while True:
            try:
                line = received.get(timeout=0.5)
            except queue.Empty:
                running = next((t["id"] for t in tests if t["id"] not in lines), None)
                if running is not None and _over(clock, limits[running]):
                    judge.kill()
                    cut = messages.test_timed_out(running, limits[running])
                    break
                continue
            if line is None:
                break
            clock.restart()
            try:
                item = json.loads(line)
                lines[item["test"]] = item
            except (ValueError, KeyError, TypeError):
                continue
        judge.wait()
        if cut is None and judge.returncode != 0:
            cut = messages.JUDGE_DIED
    finally:
        if box is not None:
            box.close()
    return lines, cut


WALL_FACTOR = 10  # a judge that waits without computing is cut after this many times its limit in wall time


def _over(clock: execute.CpuClock, limit: float) -> bool:
    """Whether a verdict has run past its limit: in the judge's CPU seconds from the line before
    (the first, from the judge's start), so a slow program on a machine busy with other work is
    not a hung one; a judge that waits without computing, after WALL_FACTOR times as long."""
    return clock.cpu() > limit or clock.wall() > limit * WALL_FACTOR


def _forward_lines(judge: subprocess.Popen, job: str, received: queue.Queue) -> None:
    """Feed the judge its job, then pass each line it prints on; None when it closes."""
    try:
        judge.stdin.write(job)
        judge.stdin.close()
        for line in judge.stdout:
            received.put(line)
    except (OSError, ValueError):  # the judge was killed while we wrote or read
        pass
    received.put(None)


def judge(
    assignment: str, programs: dict[str, dict], secret: str, timeout: float = 120, cache: Path | None = None
) -> tuple[list[TestResult], list[str]]:
    """Judge every test of `assignment` on the kernel's `programs` with the student's key:
    (results in notebook order, refusals: programs the judge's policy did not accept). Each verdict
    has its own time limit (`course.time_limit`, at most `timeout`) of the judge's CPU; one that
    runs past it fails, named, and the rest are judged in a new process, so a test that hangs costs
    only its own points. A test whose cell the kernel stopped at its limit (`Exported.stopped`)
    fails with that reason. `cache`: a folder the judges of one grading process keep XLA's compiled
    programs in (kit/ch4judge.keep_compiled_programs); no kernel sees it."""
    tests = test_cells(assignment)
    limits = {t["id"]: min(timeout, course.time_limit(assignment, t["id"]).verdict) for t in tests}
    stopped = getattr(programs, "stopped", {})
    lines = {t["id"]: _failed(messages.test_timed_out(t["id"], stopped[t["id"]])) for t in tests if t["id"] in stopped}
    while todo := [t for t in tests if t["id"] not in lines]:
        got, cut = _run_judge(todo, programs, secret, limits, cache)
        lines.update(got)
        stuck = next((t for t in todo if t["id"] not in got), None)
        if stuck is not None:  # so every round settles at least one test
            lines[stuck["id"]] = _failed(cut or messages.JUDGE_DIED)
    results, refusals = [], []
    for test in tests:
        line = lines[test["id"]]
        passed = line.get("passed") is True
        message = None if passed else str(line.get("message") or messages.ASSERTION_FAILED)[:4000]
        results.append(TestResult(test["id"], test["points"] if passed else 0.0, test["points"], message))
        refusals += [str(r)[:300] for r in line.get("refused", []) if isinstance(r, str)]
    return results, refusals


def _failed(message: str) -> dict:
    """A judge's line for a test that got no verdict."""
    return {"passed": False, "message": message, "refused": []}
