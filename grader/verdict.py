"""The trusted half of every test: verdicts from solutions/, run here on a kernel's evidence.

A graded kernel runs each test cell without its verdict (`kernel_notebook`); `collect` in the
kernel sends the evidence out as a cell output (`read_evidence`). `judge` then runs the full test
cells of the *source* notebook in this process, with the same per-student seed, where `collect`
returns the kernel's evidence instead of calling anything. Whatever the student's code did to
its kernel, a test passes only if the numbers it produced pass an assert that ran here.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass

import nbformat
from ch4check import MIME, VERDICT_MARKER, decode, derive_seed, run_test_body, split_test_cell, test_namespace

from grader import course

HIDDEN_END = "### END HIDDEN TESTS"


def _meta(cell) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta if isinstance(meta, dict) else {}


def is_test(cell) -> bool:
    return cell.cell_type == "code" and bool(_meta(cell).get("grade"))


def kernel_source(source: str) -> str:
    """A test cell as a graded kernel runs it: inputs and evidence, the verdict cut out."""
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


def read_evidence(nb) -> tuple[dict[str, dict], list[str]]:
    """(evidence by test id, anomalies). Only a test cell's own outputs count, exactly one
    evidence output per test; anything else can only come from code that forges evidence."""
    found, anomalies = {}, []
    for cell in nb.cells:
        payloads = [
            out["data"][MIME]
            for out in cell.get("outputs", [])
            if out.get("output_type") in ("display_data", "execute_result") and MIME in out.get("data", {})
        ]
        test = _meta(cell).get("grade_id") if is_test(cell) else None
        if test is None:
            if payloads:
                anomalies.append(f"测试单元格以外的单元格输出了 {len(payloads)} 份评分证据")
            continue
        if len(payloads) > 1:
            anomalies.append(f"测试 {test} 输出了 {len(payloads)} 份评分证据（只应有一份）")
            continue
        if not payloads:
            continue  # the cell did not get that far: the verdict says "no evidence"
        payload = payloads[0]
        if not isinstance(payload, dict) or payload.get("test") != test:
            anomalies.append(f"测试 {test} 的评分证据标着别的测试名")
            continue
        changed = payload.get("changed")
        if not isinstance(changed, list) or not all(isinstance(name, str) for name in changed):
            anomalies.append(f"测试 {test} 的评分证据格式不对（缺少运行时检查）")
            continue
        if changed:
            anomalies.append(f"测试 {test} 运行时，这些函数或钩子已被改动：{', '.join(changed[:8])}")
            continue
        try:
            evidence = decode(payload.get("evidence"))
            if not isinstance(evidence, dict) or "error" not in evidence:
                raise ValueError("证据缺少 error 字段")
        except Exception as err:  # noqa: BLE001 - whatever arrived, it is not our evidence
            anomalies.append(f"测试 {test} 的评分证据格式不对（{err}）")
            continue
        found[test] = evidence
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


NO_EVIDENCE = "没有收到这个测试的证据：前面的单元格出错、超时或内核中断时，测试没能运行到收集证据这一步。"


def _given(evidence: dict, cell_test: str, test_id: str, compute=None) -> dict:
    if test_id != cell_test:
        raise RuntimeError(f"course bug: cell {cell_test} collects evidence as {test_id}")
    if test_id not in evidence:
        raise AssertionError(NO_EVIDENCE)
    return copy.deepcopy(evidence[test_id])


def _message(err: BaseException) -> str:
    text = str(err).strip()
    if isinstance(err, AssertionError):
        return text or "断言失败"
    return f"判定时出错（{type(err).__name__}: {text.splitlines()[0][:200] if text else ''}）：证据的形状或类型不对"


@functools.cache
def _source(assignment: str):
    return nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)


def judge(assignment: str, evidence: dict[str, dict], secret: str) -> list[TestResult]:
    """Run every test cell of the source notebook here, on `evidence`, with the student's seed.

    Each body gets the namespace a test cell gets in the kernel, built by the kit, with no
    interface objects: `collect` returns the kernel's evidence instead of calling anything."""
    seed = functools.partial(derive_seed, secret)
    results = []
    for cell in _source(assignment).cells:
        if not is_test(cell):
            continue
        meta = _meta(cell)
        test, points = meta["grade_id"], float(meta.get("points", 0))
        body = split_test_cell(cell.source)
        namespace = test_namespace(body, {}, collect=functools.partial(_given, evidence, test), seed_for=seed)
        try:
            run_test_body(body, namespace, f"<{assignment}:{test}>")
            results.append(TestResult(test, points, points, None))
        except Exception as err:  # noqa: BLE001 - a failed verdict of any kind scores 0
            results.append(TestResult(test, 0.0, points, _message(err)))
    return results
