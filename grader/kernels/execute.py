"""nbgrader's Execute step as the grader runs it: outputs capped as they arrive, each test cell
stopped at its own time limit (`TestTimeLimit`), and a cell stuck where no interrupt reaches it
restarted instead of failing the notebook.

Everything in a submission's outputs is written by the student, and the autograded notebook and
the feedback page keep them. So outputs are capped while the kernel runs (`OutputCap`): every MIME
entry, stream text and traceback at `MAX_OUTPUT_CHARS`, every cell at `MAX_OUTPUTS` outputs and
`MAX_CELL_CHARS` characters, before nbgrader stores anything. A test cell's exported programs
(`ch4protocol.MIME`) pass unchanged, one per cell of at most `MAX_PROGRAMS_CHARS`: a further or
larger one keeps only a stub, which the grader reads as repeated or malformed
(grader/judging/verdict.py). What the page then does with them is grader/output/feedback.py.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
from pathlib import Path

from ch4protocol import MIME as EVIDENCE_MIME
from nbclient.exceptions import CellTimeoutError
from nbclient.util import ensure_async, run_sync
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute

from grader import course, messages

MAX_OUTPUT_CHARS = 100_000  # one MIME entry, stream text or traceback
MAX_OUTPUTS = 1000  # outputs of one cell: a flood of tiny outputs stops here
MAX_CELL_CHARS = 2_000_000  # all outputs of one cell together
MARK = "…[输出过"  # starts every note below: how a capped output is recognised
TRIMMED = MARK + "长，已截断]"
DROPPED = MARK + "长（{mime}，{size} 字符），已删去]"
TOO_MANY = MARK + f"多（单个单元格超过 {MAX_OUTPUTS} 个输出或 {MAX_CELL_CHARS} 字符），其余已省略]"
OUTPUT_MESSAGES = {"stream", "display_data", "execute_result", "error", "update_display_data"}


def _size(value) -> int:
    return len(value) if isinstance(value, str) else len(json.dumps(value))


def _cut(text: str) -> str:
    return text if len(text) <= MAX_OUTPUT_CHARS else text[:MAX_OUTPUT_CHARS] + "\n" + TRIMMED + "\n"


MAX_PROGRAMS_CHARS = 16 * 2**20  # one test's programs, base64: a few hundred kB on the reference
PROGRAMS_DROPPED = "（这一份导出的程序没有保留：一个单元格只保留一份，且不超过大小上限）"


def _stub_programs(out: dict) -> None:
    """Keep a small mark of a programs output that is not kept, so the grader still sees it."""
    out["data"] = {EVIDENCE_MIME: {"dropped": True}, "text/plain": PROGRAMS_DROPPED}
    out["metadata"] = {}


def cap_output(out: dict) -> bool:
    """Cap one output in place: an nbformat output or a kernel message's content (they share
    the keys). Plain text is cut; any other over-size MIME entry is dropped and named in the
    text/plain entry. True if anything was capped; evidence outputs are never touched."""
    if _is_evidence(out):
        return False
    data = out.get("data")
    capped = False
    if isinstance(out.get("text"), str) and len(out["text"]) > MAX_OUTPUT_CHARS:
        out["text"], capped = _cut(out["text"]), True
    if isinstance(data, dict):
        dropped = [(mime, _size(v)) for mime, v in data.items() if mime != "text/plain" and _size(v) > MAX_OUTPUT_CHARS]
        for mime, _ in dropped:
            del data[mime]
        plain = data.get("text/plain", "")
        if dropped or _size(plain) > MAX_OUTPUT_CHARS:
            plain = _cut(plain if isinstance(plain, str) else json.dumps(plain))
            notes = [DROPPED.format(mime=mime, size=size) for mime, size in dropped]
            data["text/plain"] = "\n".join([plain, *notes] if plain else notes)
            capped = True
    if _size(out.get("metadata", {})) > MAX_OUTPUT_CHARS:
        out["metadata"], capped = {}, True
    for key in ("ename", "evalue"):
        if isinstance(out.get(key), str) and len(out[key]) > MAX_OUTPUT_CHARS:
            out[key], capped = _cut(out[key]), True
    traceback = out.get("traceback")
    if isinstance(traceback, list) and sum(_size(line) for line in traceback) > MAX_OUTPUT_CHARS:
        kept, budget = [], MAX_OUTPUT_CHARS
        for line in map(str, traceback):
            kept.append(line[:budget])
            budget -= len(kept[-1])
            if budget <= 0:
                break
        out["traceback"], capped = [*kept, TRIMMED], True
    return capped


def is_capped(out: dict) -> bool:
    """Whether an output carries one of the notes above (for the grader's notes)."""
    texts = [out.get("text"), out.get("data", {}).get("text/plain"), *(out.get("traceback") or [])[-1:]]
    return any(isinstance(text, str) and MARK in text for text in texts)


def _is_evidence(out: dict) -> bool:
    return isinstance(out.get("data"), dict) and EVIDENCE_MIME in out["data"]


def _output_size(out: dict) -> int:
    data = out.get("data") or {}
    return _size(out.get("text", "")) + sum(map(_size, data.values())) + sum(map(_size, out.get("traceback", [])))


KERNEL_RESTARTED = "中断停不下这个单元格：内核已重启"  # the error a stuck cell keeps (RestartStuckKernel)


def _is_full_note(out: dict) -> bool:
    return out.get("text") == TOO_MANY + "\n"


def cell_is_full(outputs: list) -> bool:
    """A cell takes no more outputs once it has MAX_OUTPUTS or MAX_CELL_CHARS of them (evidence
    not counted)."""
    if len(outputs) >= MAX_OUTPUTS or (outputs and _is_full_note(outputs[-1])):
        return True
    return sum(_output_size(o) for o in outputs if not _is_evidence(o)) >= MAX_CELL_CHARS


class OutputCap:
    """Mixin for nbclient's NotebookClient (nbgrader's Execute): caps each output as its kernel
    message arrives, so no uncapped output is kept while the notebook runs or when it is stored."""

    def process_message(self, msg, cell, cell_index):
        content = msg.get("content")
        if msg.get("msg_type") in OUTPUT_MESSAGES and isinstance(content, dict) and _is_evidence(content):
            kept = [o for o in cell.outputs if _is_evidence(o)]
            if kept and len(cell.outputs) >= MAX_OUTPUTS:
                return None  # a flood: the stubs already say there was more than one
            if kept or _size(content["data"][EVIDENCE_MIME]) > MAX_PROGRAMS_CHARS:
                _stub_programs(content)
        elif msg.get("msg_type") in OUTPUT_MESSAGES and isinstance(content, dict):
            if msg["msg_type"] != "update_display_data" and cell_is_full(cell.outputs):
                if not (cell.outputs and _is_full_note(cell.outputs[-1])):
                    cell.outputs.append(new_output("stream", name="stderr", text=TOO_MANY + "\n"))
                return None
            cap_output(content)
        return super().process_message(msg, cell, cell_index)

    def on_cell_executed(self, **kwargs):
        # nbgrader adds the reply's error here when no error output arrived: cap that one too.
        super().on_cell_executed(**kwargs)
        for out in kwargs["cell"].get("outputs", []):
            cap_output(out)


TIMED_OUT = "TestTimedOut"  # the error a test cell stopped at its time limit keeps; its value: the limit in seconds


def test_id(cell) -> str | None:
    """The grade id of a test cell (None for any other cell)."""
    meta = cell.get("metadata", {}).get("nbgrader")
    if cell.get("cell_type") != "code" or not isinstance(meta, dict) or not meta.get("grade"):
        return None
    return meta.get("grade_id") if isinstance(meta.get("grade_id"), str) else None


def timed_out_error(seconds: float) -> dict:
    """The one error output of a test cell stopped at its limit (`seconds`)."""
    return new_output("error", ename=TIMED_OUT, evalue=f"{seconds:g}", traceback=[messages.test_stopped(seconds)])


class CpuClock:
    """CPU seconds a process tree spent since `restart` (its live processes and their threads, and
    the children they waited for), and wall seconds. A limit in CPU seconds is not tripped by a
    machine busy with other work: an honest ODE answer written as Python loops compiles for half a
    minute of CPU, several times that in wall time on a loaded machine."""

    def __init__(self, pid: int | None) -> None:
        self.pid = pid
        self.restart()

    def restart(self) -> None:
        self._cpu, self._wall = self._total(), time.monotonic()

    def cpu(self) -> float:
        return self._total() - self._cpu

    def wall(self) -> float:
        return time.monotonic() - self._wall

    def _total(self) -> float:
        import psutil

        try:
            root = psutil.Process(self.pid) if self.pid is not None else None
            processes = [root, *root.children(recursive=True)] if root is not None else []
        except psutil.NoSuchProcess:
            return 0.0
        total = 0.0
        for process in processes:
            try:
                times = process.cpu_times()
                total += times.user + times.system + times.children_user + times.children_system
            except psutil.NoSuchProcess:
                pass
        return total


def process_root(process) -> int | None:
    """The process whose tree runs a kernel: for one forked from a fork server, the server's child
    behind its pidfd (the sandbox's placeholder, its `pid`, is not its parent; a forked judge says
    it as `cpu_root`)."""
    pidfd = getattr(process, "pidfd", None)
    if not isinstance(pidfd, int):
        return getattr(process, "pid", None)
    try:
        fdinfo = Path(f"/proc/self/fdinfo/{pidfd}").read_text()
        return int(next(line.split()[1] for line in fdinfo.splitlines() if line.startswith("Pid:")))
    except (OSError, StopIteration, ValueError):  # gone already: nothing to measure
        return None


class TestTimeLimit:
    """Mixin for nbclient's NotebookClient (nbgrader's Execute, the quick path's client): each test
    cell has its own time limit (`course.time_limit`), so an endless loop while the student's
    functions are traced costs that test, not the submission's ceiling. The limit is in seconds of
    the kernel's CPU (`CpuClock`); a cell that waits without computing meets the per-cell timeout
    instead. Either way the kernel is interrupted and the cell keeps one error instead of the
    interrupt's traceback through the kit: `TIMED_OUT`, with the limit as its value.
    grader/judging/verdict.read_programs reads it, and the test fails, named, with its limit."""

    _stopped_at: float | None = None  # the limit the running test cell was stopped at

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        self._stopped_at = None
        test = test_id(cell)
        watch = asyncio.ensure_future(self._stop_at_limit(test)) if test is not None else None
        try:
            await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        except CellTimeoutError:  # stuck past the interrupt: RestartStuckKernel restarts the kernel
            if self._stopped_at is not None:
                cell.outputs.append(timed_out_error(self._stopped_at))
            raise
        finally:
            if watch is not None:
                watch.cancel()
        if self._stopped_at is not None:  # the interrupt's traceback, and nbgrader's copy of the reply, go
            cell.outputs = [out for out in cell.outputs if out.get("output_type") != "error"]
            cell.outputs.append(timed_out_error(self._stopped_at))
        return cell

    execute_cell = run_sync(async_execute_cell)  # nbclient's calls its own async_execute_cell, not this one

    async def _stop_at_limit(self, test: str) -> None:
        """Interrupt the kernel once this cell has cost it the test's limit of CPU."""
        nbgrader = (self.resources or {}).get("nbgrader") or {}
        limit = course.time_limit(nbgrader.get("assignment"), test).export
        clock = CpuClock(process_root(getattr(getattr(self.km, "provisioner", None), "process", None)))
        while clock.cpu() <= limit:
            await asyncio.sleep(0.5)
        self._stopped_at = limit
        try:
            await ensure_async(self.km.interrupt_kernel())
        except RuntimeError:  # the kernel is gone: nbclient says so for the cell
            pass

    async def _async_handle_timeout(self, timeout, cell=None):
        reply = await super()._async_handle_timeout(timeout, cell)  # the per-cell timeout: interrupted
        if cell is None or test_id(cell) is None:
            return reply
        self._stopped_at = timeout
        return {"content": {"status": "error", "ename": TIMED_OUT, "evalue": f"{timeout:g}", "traceback": []}}


class RestartStuckKernel:
    """Mixin for nbgrader's Execute: a cell past its time limit is interrupted; one stuck where
    Python cannot be interrupted (a C loop, such as a regular expression that backtracks without
    end) never answers, and nbclient then fails the whole notebook ("Timeout waiting for IOPub
    output": 0 points). Restart the kernel instead, run the code cells before it again (not the
    test cells: their programs are already out; not a cell that was stuck), and go on: the cell
    keeps a time-out error that says so."""

    def preprocess_cell(self, cell, resources, index):
        try:
            return super().preprocess_cell(cell, resources, index)
        except CellTimeoutError as err:
            if "IOPub" not in str(err):
                raise
        run_sync(self._restart_and_replay)(index)
        cell.outputs.append(new_output("error", ename="CellTimeoutError", evalue=KERNEL_RESTARTED, traceback=[]))
        return cell, self.resources

    async def _restart_and_replay(self, index: int) -> None:
        await ensure_async(self.km.restart_kernel(now=True))
        await ensure_async(self.kc.wait_for_ready(timeout=self.startup_timeout))
        for earlier, cell in enumerate(self.nb.cells[:index]):
            test = (cell.get("metadata", {}).get("nbgrader") or {}).get("grade")
            stuck = any(out.get("evalue") == KERNEL_RESTARTED for out in cell.get("outputs", []))
            if cell.cell_type == "code" and not test and not stuck:
                try:
                    await self.async_execute_cell(copy.deepcopy(cell), earlier, store_history=False)
                except CellTimeoutError:
                    return  # stuck again: the cells after it run in what there is


class CappedExecute(RestartStuckKernel, TestTimeLimit, OutputCap, Execute):
    """nbgrader's Execute step with the output caps and the tests' time limits (the unsandboxed path)."""


def autograde_preprocessors(execute=CappedExecute) -> list:
    """nbgrader's autograde steps with `execute` (capped, or sandboxed and capped) as Execute."""
    from nbgrader.converters import Autograde

    steps = Autograde.class_traits()["autograde_preprocessors"].default()
    return [execute if step is Execute else step for step in steps]
