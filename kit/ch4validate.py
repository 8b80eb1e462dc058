"""Check exercises from a terminal, the way the Validate button does, with an honest exit code.

    python -m ch4validate exercises/softplus/softplus.ipynb [more notebooks ...]

Runs nbgrader's own Validator (a fresh kernel executes the whole notebook) and prints one line
per notebook, then each failing test's message, whole (a message may span lines: the values it
got). Exit code 0 when every notebook passes its visible tests, 1 when one does not (plain
`nbgrader validate` exits 0 either way), 2 when a path is not a notebook, 130 when stopped by
Ctrl+C. Messages are in Chinese, like the course.

A notebook that runs long says which cell it is running (`_Progress`: a test by its id), and Ctrl+C
ends the check with one line (`STOPPED`), leaving no kernel behind.

Two things make a second check fast, and neither changes a verdict:
- notebooks are checked side by side, one kernel per core and one more (on Linux; one by one
  elsewhere);
- the kernels keep XLA's compiled programs in the student's own cache folder
  (`$XDG_CACHE_HOME/ch4-autodiff/jax`, else `~/.cache/...`), JAX's persistent compilation
  cache: a test whose code did not change loads its programs instead of compiling them again.
  Only these kernels use it; graded kernels start with a clean environment and no cache.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path

import ch4fork

# The kernel's start-up warnings (ipykernel warns, on every start, that its local TCP sockets are
# unencrypted) would reach the student's terminal once per notebook; only errors do.
KERNEL_ARGS = ["--IPKernelApp.log_level=ERROR", "--HistoryManager.hist_file=:memory:"]
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def message(error: str) -> str:
    """A failed test's message as the student reads it under the cell. The kit makes the message
    the whole error output (kit/ch4check.py); anything else (an error outside the kit) is a
    Python traceback, whose last line says what went wrong."""
    lines = [line.rstrip() for line in _ANSI.sub("", error).strip().splitlines() if line.strip()]
    if not lines:
        return "（没有错误信息）"
    if lines[0].lstrip().startswith(("Traceback", "---")) or lines[0].lstrip().startswith("Cell In"):
        return lines[-1].strip()
    return "\n".join(lines)


def check(path: Path) -> list[str]:
    """The problems nbgrader's Validator finds in one notebook (empty: the visible tests pass)."""
    from nbgrader.preprocessors import Execute
    from nbgrader.validator import Validator
    from traitlets.config import Config

    config = Config()
    config.Execute.extra_arguments = KERNEL_ARGS
    # After a cell's reply its outputs may lag on a loaded machine; nbclient gives up after 4 s and
    # the whole check fails (a Python-loop ODE answer met it). Wait as long as a cell may run.
    config.Execute.iopub_timeout = config.Execute.timeout = CELL_TIMEOUT
    config.Execute.shutdown_kernel = "immediate"  # nothing to save: a Ctrl+C does not wait for a busy kernel
    if ch4fork.available():
        config.Execute.kernel_manager_class = ch4fork.ForkKernelManager
    progress = _Progress(path)

    class Watched(Execute):
        """nbgrader's Execute step, telling `progress` when each cell starts and ends."""

        def preprocess_cell(self, cell, resources, index):
            progress.cell_started(cell, index)
            try:
                return super().preprocess_cell(cell, resources, index)
            finally:
                progress.cell_finished()

    validator = Validator(config=config)
    validator.preprocessors = [Watched if step is Execute else step for step in validator.preprocessors]
    try:
        results = validator.validate(str(path))
    finally:
        progress.close()
    if results.get("type_changed"):
        return ["有单元格的类型被改动了（例如代码单元格改成了 Markdown）：请从 exercises/ 重新取一份原题再作答"]
    if results.get("changed"):
        return ["有测试单元格被改动了：请恢复原样（评分时会用原题的测试单元格）"]
    return [message(failed["raw_error"]) for failed in results.get("failed", [])]


CELL_TIMEOUT = 600  # seconds a cell may run: a first check compiles every program (grader/course.py uses 600 too)
SLOW = 5.0  # seconds without a line after which a notebook says what it is running
AGAIN = 30.0  # and again this often while the same cell runs


class _Progress:
    """What a notebook's check says while it runs, so the terminal is never silent for long (a first
    check compiles every program, a Python-loop ODE answer takes a quarter of a minute, an endless
    loop never ends). Once the notebook has run for SLOW seconds, a line as each visible test starts;
    and whenever a cell has run SLOW seconds without a line, one that names it (a test by its id)
    and says for how long, then again every AGAIN seconds. (Hidden tests are empty placeholders
    here.) A thread of its own prints, until `close`."""

    def __init__(self, path: Path) -> None:
        import json

        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        self.name, self.start, self.started = path.stem, time.monotonic(), 0
        self.total = sum(1 for c in cells if self._visible_test("".join(c.get("source", ""))))
        self.said = self.start  # when this notebook last printed a line
        self.running: tuple[str, float, int] | None = None  # (what, since when, lines about it)
        self._lock, self._closed = threading.Lock(), threading.Event()
        threading.Thread(target=self._watch, daemon=True).start()

    @staticmethod
    def _visible_test(source: str) -> bool:
        return source.lstrip().startswith("%%ch4test") and "programs(" in source

    @staticmethod
    def _what(cell, index: int) -> str:
        """The cell as the student knows it: a test by its id, the answer cell, or its place."""
        meta = cell.get("metadata", {}).get("nbgrader") or {}
        if meta.get("grade") and meta.get("grade_id"):
            return f"测试 {meta['grade_id']}"
        return "作答区" if meta.get("solution") else f"第 {index + 1} 个单元格"

    def cell_started(self, cell, index: int) -> None:
        if cell.get("cell_type") != "code" or not cell.source.strip():
            return  # nbclient skips it
        now = time.monotonic()
        with self._lock:
            self.running = (self._what(cell, index), now, 0)
            if not self._visible_test(cell.source):
                return
            self.started += 1
            if now - self.start >= SLOW:
                done, test = f"{self.started}/{self.total}", cell.metadata.get("nbgrader", {}).get("grade_id", "")
                self._say(now, f"正在运行第 {done} 个测试 {test}（已用 {now - self.start:.0f} 秒）")

    def cell_finished(self) -> None:
        with self._lock:
            self.running = None

    def tick(self, now: float) -> None:
        """Say what is running, if it has run long enough without a line."""
        with self._lock:
            if self.running is None:
                return
            what, since, lines = self.running
            if now - max(since, self.said) < (AGAIN if lines else SLOW):
                return
            self.running = (what, since, lines + 1)
            if lines:
                self._say(now, f"仍在运行{what}（已 {now - since:.0f} 秒；要停下，按 Ctrl+C）")
            else:
                self._say(now, f"正在运行{what}（已 {now - since:.0f} 秒）")

    def _say(self, now: float, text: str) -> None:
        self.said = now
        print(f"   … {self.name}：{text}", flush=True)

    def _watch(self) -> None:
        while not self._closed.wait(1.0):
            self.tick(time.monotonic())

    def close(self) -> None:
        self._closed.set()


def compile_cache() -> dict[str, str]:
    """The environment that points the kernels at the student's own compilation cache. Every
    program is kept (JAX's default keeps only those that took a second to compile; a test cell
    compiles dozens of small ones)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return {
        "JAX_COMPILATION_CACHE_DIR": str(base / "ch4-autodiff" / "jax"),
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
    }


STOPPED = "⏹ 已停止（Ctrl+C）：这次检查没有做完，没有结果"


def main(argv: list[str]) -> int:
    """Check every notebook of `argv`. Ctrl+C ends it with one line, STOPPED: the workers ignore it
    and end with the pool, and every kernel with the fork server (kit/ch4fork.py)."""
    try:
        return _check_all(argv)
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl+C does not cut the line short
        print(STOPPED, flush=True)
        return 130


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _check_all(argv: list[str]) -> int:
    if not argv:
        print("用法：python -m ch4validate exercises/<练习名>/<练习名>.ipynb …", file=sys.stderr)
        return 2
    missing = [name for name in argv if not (Path(name).is_file() and name.endswith(".ipynb"))]
    if missing:
        print(f"找不到这个 notebook：{missing[0]}（请给出 .ipynb 文件的路径）", file=sys.stderr)
        return 2
    os.environ.update(compile_cache())  # the kernels inherit it
    from nbgrader.validator import Validator  # noqa: F401  imported once, before the workers fork

    if ch4fork.available():
        ch4fork.ForkServer.start()  # one server for every worker, started while it still is one process

    # one kernel more than cores: while a kernel starts, or nbclient waits on it, a core would idle
    jobs = min(len(argv), len(os.sched_getaffinity(0)) + 1) if sys.platform == "linux" else 1  # fork is Linux's
    print(f"… 正在运行 {len(argv)} 个 notebook（同时运行 {jobs} 个）", flush=True)
    paths = [Path(name) for name in argv]
    if jobs == 1:
        failing = sum(report(name, check(path)) for name, path in zip(argv, paths, strict=True))
    else:
        with multiprocessing.get_context("fork").Pool(jobs, initializer=_ignore_interrupts) as pool:
            failing = sum(report(name, problems) for name, problems in zip(argv, pool.imap(check, paths), strict=True))
    if failing:
        print(f"{failing} 个 notebook 未通过：改好后再运行一次。提交后评分时还会运行隐藏测试。")
    return 1 if failing else 0


# kit/ch4judge.missing_name, under the test's "❌ <test> 未通过："
_MISSING = re.compile(r"^❌ \S+ 未通过：没有找到 (.+?)：还没有作答")


def summarised(problems: list[str]) -> list[str]:
    """The lines to print: a blank or half-written answer fails every test that needs a missing
    name, so those become one line naming all of them; other problems once each."""
    missing = {name: None for p in problems if (m := _MISSING.match(p)) for name in m.group(1).split("、")}
    lines = list(dict.fromkeys(p for p in problems if not _MISSING.match(p)))
    if missing:
        count = sum(1 for p in problems if _MISSING.match(p))
        names = "、".join(missing)
        lines.insert(0, f"还没有作答：没有找到 {names}（{count} 个测试因此未通过）。请在作答区定义，并先运行作答区。")
    return lines


def report(name: str, problems: list[str]) -> int:
    """Print one notebook's result; 1 when it failed."""
    if problems:
        print(f"❌ {name}：{len(problems)} 处未通过")
        for line in summarised(problems):
            print("   · " + line.replace("\n", "\n     "))
    else:
        print(f"✅ {name}：可见测试全部通过")
    sys.stdout.flush()
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
