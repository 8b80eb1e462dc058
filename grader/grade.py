"""Grade a class: `python -m grader grade SUBMITTED_DIR --out OUT_DIR [--jobs N]`.

nbgrader does the grading (gradebook, autograde, feedback); this module makes it one command
that a broken submission cannot derail:

* The submissions are only read. Each is checked first in this process (empty file, invalid
  JSON, wrong file name, cells deleted or edited, ...): unusable ones get a score of 0 and a
  reason, the others are copied into a course folder under OUT_DIR with what was wrong noted.
* N worker processes, each with one long-lived nbgrader API (start-up paid once per worker, not
  per submission), autograde the copies. A per-cell timeout is nbgrader's; the per-submission
  ceiling is enforced here by killing the kernel of a submission that runs too long.
* All workers write one SQLite gradebook (students are registered up front, and SQLite waits
  for its lock), then grades.csv and the feedback HTML are written from it.
* A submission whose bytes and whose assignment source have not changed since the last run in
  the same OUT_DIR is not graded again: re-runs are idempotent and only new work is done.

Tamper resistance (grader/README.md has the threat model): the student's code is checked
against the answering rules before it runs (kit/ch4rules.py; a broken rule: not run, 0, flag
`rules`); kernels run in a sandbox (grader/sandbox.py) and run each test without its verdict;
the verdicts run here, on the evidence the kernel sent out, with inputs from a per-student
secret seed (grader/verdict.py), and their points replace nbgrader's in the gradebook before
the feedback is written.
"""

from __future__ import annotations

import copy
import csv
import hashlib
import hmac
import html
import json
import multiprocessing as mp
import os
import queue
import shutil
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import ch4check
import ch4rules
import nbformat
from ch4check import SEED_ENV
from nbformat.corpus.words import generate_corpus_id

from grader import REPO, course, feedback, nbgrader_guard, sandbox, verdict

CEILING_SECONDS = 300  # per submission; a correct one needs ~10-30 s on a busy 2-core machine


class UsageError(Exception):
    """Input that cannot be graded at all: one line for the instructor, exit code 2."""


@dataclass
class Outcome:
    student: str
    assignment: str
    score: float = 0.0
    max_score: float = 0.0
    notes: list[str] = field(default_factory=list)
    digest: str = ""
    graded: bool = False  # False: nbgrader produced no score (the notes say why)
    flags: list[str] = field(default_factory=list)  # "tampering", "rules", "unsandboxed": for the instructor


# ---------------------------------------------------------------------------------------------
# Checking a submission before nbgrader sees it


RULES_NOTE = (
    "作答区没有遵守作答规则，因此没有运行，本题记 0 分。修改后可以重新提交"
    "（在 JupyterLab 里运行作答区时会看到同样的提示）。问题如下（每条一处）："
)
# nbgrader's cell metadata and the types it must have; a cell with anything else is unmarked.
NBGRADER_TYPES = {
    "grade_id": str,
    "grade": bool,
    "solution": bool,
    "locked": bool,
    "task": bool,
    "points": (int, float),
}


def _nbgrader_meta(cell) -> dict | None:
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta if isinstance(meta, dict) else None


def _source(cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source  # JSON keeps lines


def _grade_ids(nb) -> dict[str, dict]:
    found = {}
    for cell in nb.cells:
        meta = _nbgrader_meta(cell)
        if meta is not None and "grade_id" in meta:
            found.setdefault(meta["grade_id"], {"meta": meta, "source": _source(cell)})
    return found


def _well_typed(meta: dict) -> bool:
    """Flags are real booleans, grade_id is text, points a number (and not a boolean)."""
    for key, kind in NBGRADER_TYPES.items():
        if key not in meta:
            continue
        value = meta[key]
        if (type(value) is bool) != (kind is bool) or not isinstance(value, kind):
            return False
    return True


def drop_malformed_metadata(nb, release) -> list[str]:
    """Unmark cells whose nbgrader metadata has the wrong types (a list as grade_id, text as
    points), a grade_id the release does not have, or one seen before in the notebook: nbgrader
    then restores the real cell from the release, as for a deleted one."""
    known, seen, dropped = set(_grade_ids(release)), set(), []
    for index, cell in enumerate(nb.cells):
        if "nbgrader" not in cell.get("metadata", {}):
            continue
        meta = _nbgrader_meta(cell)
        if meta is None or not _well_typed(meta) or meta.get("grade_id") not in known or meta["grade_id"] in seen:
            del cell.metadata["nbgrader"]
            dropped.append(str(index + 1))
        else:
            seen.add(meta["grade_id"])
    if not dropped:
        return []
    where = "、".join(dropped)
    return [f"第 {where} 个单元格的评分元数据不对（类型、名称或重复），已当作未标记的单元格（评分单元格按发布版恢复）"]


def compare_with_release(submitted, release) -> list[str]:
    """What the student changed that nbgrader will undo (reported, never held against them)."""
    notes = []
    theirs, ours = _grade_ids(submitted), _grade_ids(release)
    missing = [gid for gid in ours if gid not in theirs]
    if missing:
        notes.append(f"删除了或取消了标记的单元格 {', '.join(missing)}：已按发布版恢复后评分")
    edited = [
        gid
        for gid, cell in ours.items()
        if gid in theirs and cell["meta"].get("locked") and theirs[gid]["source"] != cell["source"]
    ]
    if edited:
        notes.append(f"修改了只读单元格 {', '.join(edited)}：已恢复原文后评分")
    keys = ("grade", "solution", "locked", "points")
    retagged = [
        gid
        for gid, cell in ours.items()
        if gid in theirs and any(theirs[gid]["meta"].get(k) != cell["meta"].get(k) for k in keys)
    ]
    if retagged:
        notes.append(f"改动了单元格 {', '.join(retagged)} 的评分元数据（分值或标记）：已恢复")
    added = sum(1 for c in submitted.cells if _nbgrader_meta(c) is None)
    if added:
        notes.append(f"新增了 {added} 个单元格：它们会照常运行，但不计分")
    return notes


def drop_unmarked_course_cells(nb, release) -> list[str]:
    """Unmarked copies of the course's locked cells, and unmarked `%%ch4test` cells (a copied or
    edited test, or one whose metadata was lost), are not the student's answer and cannot earn
    points: they are left out, and the locked cells are restored as released."""
    ours = {_source(c).strip() for c in release.cells if (_nbgrader_meta(c) or {}).get("locked")}
    kept, tests = [], 0
    for cell in nb.cells:
        source = _source(cell).strip()
        if _nbgrader_meta(cell) is None and (source in ours or source.startswith(ch4check.TEST_MAGIC)):
            tests += source not in ours
            continue
        kept.append(cell)
    nb.cells = kept
    return [f"{tests} 个没有评分标记的测试单元格（%%ch4test）不计分，评分时没有运行"] if tests else []


def restore_locked_cells(nb, release) -> None:
    """Put back the locked cells a student deleted or unmarked: after the release cell before
    them, or at the end when that one (the answer) is missing too, so tests still come last.
    nbgrader would restore them as well, but with a comment line above the source, and a test
    cell's first line must stay `%%ch4test`."""
    present = set(_grade_ids(nb))
    cursor = 0
    for cell in release.cells:
        meta = _nbgrader_meta(cell) or {}
        if "grade_id" not in meta:
            continue
        if meta["grade_id"] in present:
            ids = [(_nbgrader_meta(c) or {}).get("grade_id") for c in nb.cells]
            cursor = ids.index(meta["grade_id"]) + 1
        elif meta.get("locked"):
            restored = copy.deepcopy(cell)
            restored["id"] = generate_corpus_id()  # the student may have kept a cell with the old id
            nb.cells.insert(cursor, restored)
            cursor += 1
        else:
            cursor = len(nb.cells)  # the answer lost its marking: whatever follows goes after it


def read_submission(folder: Path, assignment: str, release) -> tuple[object | None, list[str]]:
    """(notebook, notes), or (None, notes) when nothing gradable was handed in."""
    expected = f"{assignment}.ipynb"
    if folder.is_symlink():
        return None, [f"作业文件夹 {folder.name} 是符号链接：为安全起见不跟随，请提交文件本身"]
    notebooks = sorted(p for p in folder.glob("*.ipynb") if not p.name.startswith("."))
    path = folder / expected
    notes = []
    if not path.exists():
        if len(notebooks) != 1:
            found = ", ".join(p.name for p in notebooks) or "没有任何 .ipynb 文件"
            return None, [f"缺少 notebook {expected}（收到：{found}）"]
        path = notebooks[0]
        notes.append(f"文件名应为 {expected}，收到 {path.name}：已按 {expected} 评分")
    if path.is_symlink() or not path.is_file():
        return None, notes + [f"{path.name} 是符号链接或不是普通文件：为安全起见不跟随，请提交文件本身"]
    raw = path.read_bytes()
    if not raw.strip():
        return None, notes + [f"{path.name} 是空文件"]
    try:
        json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        return None, notes + [f"{path.name} 不是合法的 JSON（{err}），无法作为 notebook 打开"]
    try:
        with warnings.catch_warnings():  # old notebooks without cell ids are fine to grade
            warnings.simplefilter("ignore")
            nb = nbformat.reads(raw.decode("utf-8"), as_version=4)
            nbformat.validate(nb)
    except Exception as err:  # nbformat raises several classes; any of them means "not a notebook"
        message = (str(err).strip().splitlines() or [""])[0][:200]
        return None, notes + [f"{path.name} 不是合法的 notebook（{message}）"]
    notes += drop_malformed_metadata(nb, release)
    notes += drop_unmarked_course_cells(nb, release)
    notes += compare_with_release(nb, release)
    restore_locked_cells(nb, release)
    return nb, notes


def student_code_problems(nb, release) -> list[str]:
    """The answering rules broken in the code cells the student wrote: every code cell except
    the locked ones, which nbgrader puts back as released before anything runs."""
    restored = {gid for gid, cell in _grade_ids(release).items() if cell["meta"].get("locked")}
    found = []
    for cell in nb.cells:
        meta = _nbgrader_meta(cell) or {}
        if cell.get("cell_type") == "code" and meta.get("grade_id") not in restored:
            found += ch4rules.problems(_source(cell))
    return found


def folder_digest(folder: Path) -> str:
    """What a submission folder holds (symbolic links count by where they point, unread)."""
    sha = hashlib.sha256()
    if folder.is_symlink():
        return hashlib.sha256(str(folder.readlink()).encode()).hexdigest()
    for path in sorted(p for p in folder.rglob("*") if p.is_symlink()):
        sha.update(str(path.relative_to(folder)).encode() + b"\0->" + str(path.readlink()).encode())
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        sha.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return sha.hexdigest()


def source_digest(assignment: str) -> str:
    """Changes to an assignment's source or to this grader invalidate earlier grades."""
    sha = hashlib.sha256()
    # feedback.py too: its output caps change what is stored
    for module in (course, verdict, ch4rules, sandbox, feedback, ch4check):
        sha.update(Path(module.__file__).read_bytes())
    sha.update(Path(__file__).read_bytes())
    sha.update(course.notebook_path(course.SOLUTIONS, assignment).read_bytes())
    return sha.hexdigest()


# ---------------------------------------------------------------------------------------------
# The course folder and the workers


def prepare_course(root: Path) -> None:
    """Copy the sources and register the assignments in the gradebook, redoing only what changed.

    If nbgrader refuses to update an assignment that already has submissions, the course folder
    is rebuilt from scratch (its cached grades are then recomputed, never reused stale).
    """
    from grader.release import generate_release

    stamp = root / "sources.json"
    done = json.loads(stamp.read_text()) if stamp.exists() and (root / "gradebook.db").exists() else {}
    changed = [a for a in course.available() if done.get(a) != source_digest(a)]
    if not changed:
        return
    for attempt in ("update", "rebuild"):
        if attempt == "rebuild" or not done:
            shutil.rmtree(root, ignore_errors=True)
            done, changed = {}, course.available()
        for assignment in changed:
            shutil.rmtree(root / "source" / assignment, ignore_errors=True)
            shutil.copytree(course.SOLUTIONS / assignment, root / "source" / assignment)
            # nbgrader restores test cells from this source: the kernel never sees a verdict.
            path = course.notebook_path(root / "source", assignment)
            nbformat.write(verdict.kernel_notebook(nbformat.read(path, as_version=4)), path)
        try:
            generate_release(changed, source=root / "source", release=root / "release", course_root=root)
            break
        except RuntimeError:
            if attempt == "rebuild":
                raise
    done.update({a: source_digest(a) for a in changed})
    stamp.write_text(json.dumps(done, indent=1))


def _api(root: Path, cell_timeout: int, sandboxed: bool):
    import logging

    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import ClearHiddenTests, GetGrades

    config = course.nbgrader_config(root, source=root / "source", release=root / "release", cell_timeout=cell_timeout)
    config.OverwriteCells.add_missing_cells = True  # a deleted test cell is put back, not scored 0
    if sandboxed:
        config.Autograde.autograde_preprocessors = sandbox.autograde_preprocessors()
    else:  # outputs are capped either way
        config.Autograde.autograde_preprocessors = feedback.autograde_preprocessors()
    # Feedback shows each test's outcome and message but not the hidden tests' code, so an
    # assignment can be reused next term. Nothing the student wrote is live in it (grader/feedback.py).
    config.GenerateFeedback.preprocessors = [
        GetGrades,
        ClearHiddenTests,
        CSSHTMLHeaderPreprocessor,
        feedback.SanitizeFeedback,
    ]
    feedback.configure(config)
    api = NbGraderAPI(CourseDirectory(config=config), config=config)
    api.log.setLevel(logging.ERROR)
    return api


def _failure_reason(log: str) -> str:
    if "DeadKernelError" in log or "Kernel died" in log or "kernel died" in log:
        return "内核在运行中崩溃（例如 os._exit、段错误或内存耗尽），没有得到成绩"
    last = [line for line in log.strip().splitlines() if line.strip()]
    return "nbgrader 无法评分：" + (last[-1][:200] if last else "未知原因")


def review_autograded(path: Path, cell_timeout: int) -> list[str]:
    """Notes about how the run went (timeouts, huge output capped while it ran)."""
    nb = nbformat.read(path, as_version=4)
    notes, trimmed = [], False
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error" and out.get("ename") == "CellTimeoutError":
                where = cell.metadata.get("nbgrader", {}).get("grade_id", "一个未标记的单元格")
                notes.append(f"单元格 {where} 超过 {cell_timeout} 秒未结束，已被中断（可能有死循环）")
            elif out.get("output_type") == "error" and cell.metadata.get("nbgrader", {}).get("solution"):
                if out.get("ename") == "NotImplementedError":
                    notes.append("作答区还没有作答（仍是 raise NotImplementedError()）")
                else:
                    notes.append(f"作答区运行时报错：{out.get('ename')}: {str(out.get('evalue', ''))[:120]}")
            trimmed = trimmed or feedback.is_capped(out)
    if trimmed:
        notes.append(f"输出过长（单个输出超过 {feedback.MAX_OUTPUT_CHARS} 字符，或单元格输出过多）：反馈中已截断")
    return notes


def make_grading_secret(root: Path) -> None:
    """Once per OUT_DIR, before the workers start: the key of every student's seed."""
    key = root / "grading-secret"
    if not key.exists():
        key.write_text(os.urandom(32).hex())
        key.chmod(0o600)


def student_seed(root: Path, student: str, assignment: str) -> str:
    """The seed of a student's test inputs: secret, fixed for this OUT_DIR (so re-grading gives
    the same grades), different for every student and assignment."""
    key = (root / "grading-secret").read_text().encode()
    return hmac.new(key, f"{student}/{assignment}".encode(), hashlib.sha256).hexdigest()


def judge_autograded(root: Path, student: str, assignment: str, seed: str) -> tuple[list[str], list[str]]:
    """Run the verdicts here on the kernel's evidence; their points replace nbgrader's.

    Each test cell's feedback gets the verdict as an output; evidence payloads are reduced to
    their one-line text. Returns (notes, flags)."""
    from nbgrader.api import Gradebook

    path = course.notebook_path(root / "autograded" / student, assignment)
    nb = nbformat.read(path, as_version=4)
    evidence, anomalies = verdict.read_evidence(nb)
    results = {r.test: r for r in verdict.judge(assignment, evidence, seed)}
    notes, flags = [], []
    if anomalies:
        flags.append("tampering")
        notes.append("检测到篡改评分的迹象（伪造或被改动的评分证据），本作业记 0 分：" + "；".join(anomalies))
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if verdict.MIME in out.get("data", {}):
                out["data"] = {"text/plain": out["data"].get("text/plain", "")}
        result = results.get(cell.metadata.get("nbgrader", {}).get("grade_id")) if verdict.is_test(cell) else None
        if result is not None:
            text = (
                f"评分程序判定：✅ 通过（{result.points:g} / {result.max_points:g} 分）\n"
                if result.passed and not anomalies
                else f"评分程序判定：❌ 未通过（0 / {result.max_points:g} 分）：{result.message or '见上方说明'}\n"
            )
            cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=text))
    nbformat.write(nb, path)
    failed = [r.test for r in results.values() if not r.passed]
    if failed and not anomalies:
        notes.append(f"未通过的测试：{', '.join(failed)}（原因写在各测试单元格下方）")
    with Gradebook(course.nbgrader_config(root).CourseDirectory.db_url, "ch04") as gb:
        for test, result in results.items():
            grade = gb.find_grade(test, assignment, assignment, student)
            grade.auto_score = 0.0 if anomalies else result.points
            grade.needs_manual_grade = False
        gb.db.commit()
    return notes, flags


def _worker(root: str, cell_timeout: int, sandboxed: bool, tasks, results) -> None:
    """Autograde (student, assignment) pairs until told to stop; one nbgrader API for all."""
    root = Path(root)
    os.environ.update({"JAX_PLATFORMS": "cpu", "MPLBACKEND": "Agg"})
    warnings.simplefilter("ignore")  # nbgrader's SQLAlchemy and nbformat chatter is not news here
    api = _api(root, cell_timeout, sandboxed)
    while (task := tasks.get()) is not None:
        student, assignment = task
        results.put(("start", student, assignment, os.getpid()))
        try:
            succeeded, notes, flags = _grade_one(api, root, student, assignment, cell_timeout)
        except Exception as err:  # noqa: BLE001 - this submission gets 0 with the reason; the rest go on
            reason = f"评分程序处理这份提交时出错（{type(err).__name__}），记 0 分；请联系助教"
            succeeded, notes, flags = False, [reason], []
        results.put(("done", student, assignment, succeeded, notes, flags))


def _grade_one(api, root: Path, student: str, assignment: str, cell_timeout: int) -> tuple[bool, list[str], list[str]]:
    notes, flags = [], []
    seed = student_seed(root, student, assignment)
    os.environ[SEED_ENV] = seed  # the kernel's test inputs; the sandbox passes it on
    try:
        result = api.autograde(assignment, student, force=True, create=True)
    finally:
        del os.environ[SEED_ENV]
    autograded = course.notebook_path(root / "autograded" / student, assignment)
    if result["success"] and autograded.exists():
        notes += review_autograded(autograded, cell_timeout)
        judged_notes, flags = judge_autograded(root, student, assignment, seed)
        notes += judged_notes
        pages = api.generate_feedback(assignment, student, force=True)
        if not pages["success"]:
            notes.append("未能生成 HTML 反馈：" + _failure_reason(pages.get("log", "")))
    else:
        notes.append(_failure_reason(result.get("log", "") + result.get("error", "")))
    return result["success"], notes, flags


def _kill_kernels(worker_pid: int) -> None:
    import psutil

    try:
        for child in psutil.Process(worker_pid).children(recursive=True):
            child.kill()
    except psutil.NoSuchProcess:
        pass


def run_workers(
    root: Path, pending: list[tuple[str, str]], jobs: int, ceiling: float, cell_timeout: int, progress, sandboxed: bool
) -> dict[tuple[str, str], tuple[bool, list[str], list[str]]]:
    """Autograde `pending` with `jobs` workers; return (autograde succeeded, notes, flags) for each."""
    ctx = mp.get_context("spawn")
    tasks, results = ctx.Queue(), ctx.Queue()
    for task in pending:
        tasks.put(task)
    workers = [
        ctx.Process(target=_worker, args=(str(root), cell_timeout, sandboxed, tasks, results), daemon=True)
        for _ in range(min(jobs, len(pending)))
    ]
    for w in workers:
        tasks.put(None)
        w.start()
    running: dict[tuple[str, str], tuple[int, float]] = {}
    killed: set[tuple[str, str]] = set()
    notes: dict[tuple[str, str], tuple[bool, list[str], list[str]]] = {}
    try:
        while len(notes) < len(pending):
            try:
                message = results.get(timeout=1.0)
            except queue.Empty:
                message = None
            if message and message[0] == "start":
                running[(message[1], message[2])] = (message[3], time.monotonic())
            elif message and message[0] == "done":
                key = (message[1], message[2])
                running.pop(key, None)
                notes[key] = (message[3], message[4], message[5])
                if key in killed:
                    notes[key] = (False, [f"超过每份提交 {ceiling:.0f} 秒的时间上限，已终止（可能有死循环）"], [])
                progress(key, notes[key][1])
            for key, (pid, started) in list(running.items()):
                if time.monotonic() - started > ceiling and key not in killed:
                    killed.add(key)
                    _kill_kernels(pid)
            if not any(w.is_alive() for w in workers) and results.empty() and len(notes) < len(pending):
                for key in pending:  # a worker itself died: whatever it held gets a reason
                    if key not in notes:
                        notes[key] = (False, ["评分进程意外退出，没有得到成绩"], [])
                        progress(key, notes[key][1])
    finally:
        for w in workers:
            w.join(timeout=5)
            if w.is_alive():
                w.kill()
    return notes


# ---------------------------------------------------------------------------------------------
# The command


def discover(submitted: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(known, unknown) (student, assignment) pairs in nbgrader's submitted layout."""
    known, unknown = [], []
    for student in sorted(p for p in submitted.iterdir() if p.is_dir() and not p.is_symlink() and p.name[0] != "."):
        for folder in sorted(p for p in student.iterdir() if p.is_dir() and not p.name.startswith(".")):
            (known if folder.name in course.available() else unknown).append((student.name, folder.name))
    return known, unknown


def _overlaps(a: Path, b: Path) -> bool:
    return a == b or a in b.parents or b in a.parents


def grade(
    submitted: Path,
    out: Path,
    jobs: int,
    ceiling: float = CEILING_SECONDS,
    cell_timeout: int = course.CELL_TIMEOUT,
    echo=print,
    scan_code: bool = True,
) -> list[Outcome]:
    """`scan_code=False` skips the tampering scan (tests use it to prove the verdicts alone)."""
    submitted, out = Path(submitted).resolve(), Path(out).resolve()
    if not submitted.is_dir():
        raise UsageError(f"no such folder: {submitted}")
    for protected in (submitted, course.SOLUTIONS, course.EXERCISES, REPO / "grader"):
        if _overlaps(out, protected.resolve()):
            raise UsageError(f"--out {out} overlaps {protected}; choose a separate output folder")
    known, unknown = discover(submitted)
    for link in sorted(p.name for p in submitted.iterdir() if p.is_symlink()):
        echo(f"  skip  {link}: a symbolic link, not followed (hand in the folder itself)")
    for student, name in unknown:
        echo(f"  skip  {student}/{name}: unknown assignment (known: {', '.join(course.available())})")
    if not known:
        hint = " (only unknown assignments)" if unknown else ""
        raise UsageError(f"nothing to grade in {submitted}: expected <student>/<assignment>/<notebook>.ipynb{hint}")

    root = out / "course"
    echo(f"Grading {len(known)} submission(s) from {submitted} with {jobs} job(s)")
    sandboxed = sandbox.probe() is None
    echo(f"  {sandbox.describe()}")
    if not sandboxed:
        print(f"grader grade: {sandbox.describe()}; every row is flagged 'unsandboxed'", file=sys.stderr)
    prepare_course(root)
    nbgrader_guard.guard_course_folder(root)  # nbgrader run inside OUT/course refuses to grade around us
    make_grading_secret(root)
    cache_path = root / "outcomes.json"
    cache = json.loads(cache_path.read_text()) if cache_path.exists() else {}

    releases = {  # what students were given
        a: nbformat.read(course.notebook_path(course.EXERCISES, a), as_version=4) for a in {a for _, a in known}
    }
    sources = {a: source_digest(a) for a in releases}
    outcomes: dict[tuple[str, str], Outcome] = {}
    pending = []
    for student, assignment in known:
        folder = submitted / student / assignment
        digest = folder_digest(folder) + sources[assignment] + f"/{ceiling}/{cell_timeout}/{sandboxed}/{scan_code}"
        previous = cache.get(f"{student}/{assignment}")
        if previous and previous["digest"] == digest:
            outcomes[(student, assignment)] = Outcome(**previous)
            continue
        outcome = Outcome(student, assignment, digest=digest)
        nb, outcome.notes, outcome.flags = intake(folder, assignment, releases[assignment], scan_code)
        outcome.flags += [] if sandboxed else ["unsandboxed"]
        target = course.notebook_path(root / "submitted" / student, assignment)
        shutil.rmtree(target.parent, ignore_errors=True)
        shutil.rmtree(root / "autograded" / student / assignment, ignore_errors=True)
        shutil.rmtree(root / "feedback" / student / assignment, ignore_errors=True)
        if nb is not None and _write_for_grading(nb, target, outcome):
            pending.append((student, assignment))
        outcomes[(student, assignment)] = outcome
    echo(f"  {len(known) - len(pending)} unchanged or unreadable, {len(pending)} to autograde")

    _register_students(root, {s for s, _ in pending})
    done = [0]

    def progress(key, notes):
        done[0] += 1
        status = "ok" if not notes else notes[0][:70]
        echo(f"  [{done[0]:>{len(str(len(pending)))}}/{len(pending)}] {key[0]}/{key[1]}: {status}")

    run_notes = run_workers(root, pending, jobs, ceiling, cell_timeout, progress, sandboxed) if pending else {}
    _collect_scores(root, outcomes, run_notes)
    for key, outcome in outcomes.items():
        cache[f"{key[0]}/{key[1]}"] = asdict(outcome)
    cache_path.write_text(json.dumps(cache, indent=1, ensure_ascii=False))
    _write_outputs(root, out, outcomes)
    return [outcomes[k] for k in sorted(outcomes)]


def intake(folder: Path, assignment: str, release, scan_code: bool) -> tuple[object | None, list[str], list[str]]:
    """(notebook to grade or None, notes, flags) for one submission. Never raises: whatever a
    submission holds, the worst it gets is a 0 with the reason, and the class goes on."""
    try:
        nb, notes = read_submission(folder, assignment, release)
        found = student_code_problems(nb, release) if nb is not None and scan_code else []
    except Exception as err:  # noqa: BLE001 - one odd file must not stop the class
        return None, [f"评分程序无法读取这份提交（{type(err).__name__}），本作业记 0 分；请联系助教"], []
    if found:  # not run: nothing of it reaches a kernel
        return None, notes + [RULES_NOTE, *found], ["rules"]  # one note, one line of the feedback, per problem
    return nb, notes, []


def _write_for_grading(nb, target: Path, outcome: Outcome) -> bool:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        return True
    except Exception as err:  # noqa: BLE001 - e.g. text nbformat cannot write back
        outcome.notes.append(f"评分程序无法保存这份提交（{type(err).__name__}），本作业记 0 分；请联系助教")
        return False


def _register_students(root: Path, students: set[str]) -> None:
    """Create students before the workers start, so parallel workers never race to insert one."""
    from nbgrader.api import Gradebook

    with Gradebook(course.nbgrader_config(root).CourseDirectory.db_url, "ch04") as gb:
        for student in sorted(students):
            gb.update_or_create_student(student)


def _collect_scores(root: Path, outcomes: dict, run_notes: dict) -> None:
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(course.nbgrader_config(root).CourseDirectory.db_url, "ch04") as gb:
        for key, outcome in outcomes.items():
            outcome.max_score = gb.find_assignment(outcome.assignment).max_score
            if key not in run_notes:
                continue  # unchanged (cached) or unreadable: keeps what it has
            succeeded, notes, flags = run_notes[key]
            outcome.notes += notes
            outcome.flags = flags + outcome.flags
            try:
                submission = gb.find_submission(outcome.assignment, outcome.student)
            except MissingEntry:
                submission = None
            produced = course.notebook_path(root / "autograded" / outcome.student, outcome.assignment)
            if succeeded and submission is not None and produced.exists():
                outcome.score, outcome.graded = submission.score, True
            else:
                outcome.score, outcome.graded = 0.0, False


def _notes_html(outcome: Outcome) -> str:
    items = "".join(f"<li>{html.escape(n)}</li>" for n in outcome.notes)
    return (
        f'<div style="border:2px solid #c60;padding:8px;margin:8px;font-family:sans-serif">'
        f"<b>评分说明（{html.escape(outcome.student)} / {html.escape(outcome.assignment)}）</b>"
        f"<ul>{items}</ul></div>"
    )


def _write_outputs(root: Path, out: Path, outcomes: dict) -> None:
    feedback.copy_mathjax(out / "feedback")  # the pages load it from there
    for (student, assignment), outcome in outcomes.items():
        target = out / "feedback" / student / assignment
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True, exist_ok=True)
        produced = sorted((root / "feedback" / student / assignment).glob("*.html"))
        if outcome.graded and produced:
            for page in produced:
                text = page.read_text(encoding="utf-8")
                if outcome.notes:
                    text = (
                        text.replace("<body>", "<body>" + _notes_html(outcome), 1)
                        if "<body>" in text
                        else _notes_html(outcome) + text
                    )
                (target / page.name).write_text(text, encoding="utf-8")
        else:
            page = (
                f'<!DOCTYPE html><html lang="zh"><meta charset="utf-8"><title>{html.escape(assignment)}'
                f"</title><body><h1>{html.escape(assignment)}：{outcome.score:g} / {outcome.max_score:g}</h1>"
                f"{_notes_html(outcome)}<p>请按说明修正后重新提交。</p></body></html>"
            )
            (target / f"{assignment}.html").write_text(page, encoding="utf-8")
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student_id", "assignment", "score", "max_score", "flags"])
        for key in sorted(outcomes):
            o = outcomes[key]
            writer.writerow([o.student, o.assignment, f"{o.score:g}", f"{o.max_score:g}", " ".join(o.flags)])


def print_table(outcomes: list[Outcome], echo=print) -> None:
    width = max([len(o.student) for o in outcomes] + [7])
    echo(f"\n{'student':<{width}}  {'assignment':<16} {'score':>11}  {'flags':<11} notes")
    for o in outcomes:
        note = "; ".join(o.notes) if o.notes else ""
        flags = " ".join(o.flags)
        echo(f"{o.student:<{width}}  {o.assignment:<16} {o.score:>5g} / {o.max_score:<3g}  {flags:<11} {note}")


def main(args) -> int:
    try:
        outcomes = grade(
            Path(args.submitted), Path(args.out), args.jobs, args.ceiling, args.cell_timeout, scan_code=args.scan_code
        )
    except UsageError as err:
        print(f"grader grade: {err}", file=sys.stderr)
        return 2
    print_table(outcomes)
    print(f"\nWrote {Path(args.out) / 'grades.csv'} and feedback under {Path(args.out) / 'feedback'}")
    return 0
