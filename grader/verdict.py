"""The trusted half of every test: verdicts from solutions/, run here on a kernel's evidence.

A graded kernel runs each test cell without its verdict (`kernel_notebook`); `collect` in the
kernel sends the evidence out as a cell output (`read_evidence`). `judge` then runs the full test
cells of the *source* notebook in this process, with the same per-student seed, where `collect`
returns the kernel's evidence instead of calling anything. Whatever the student's code did to
its kernel, a test passes only if the numbers it produced pass an assert that ran here.
"""

from __future__ import annotations

import builtins
import copy
import functools
from dataclasses import dataclass

import nbformat
from ch4check import (
    MIME,
    VERDICT_MARKER,
    check_close,
    decode,
    derive_seed,
    run_test_body,
    split_test_cell,
    test_namespace,
)

from grader import course, messages

HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"


def _meta(cell) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta if isinstance(meta, dict) else {}


def is_test(cell) -> bool:
    return cell.cell_type == "code" and bool(_meta(cell).get("grade"))


def hidden_tests(assignment: str) -> set[str]:
    """The grade ids of the tests a student never sees (a hidden block in the source)."""
    return {_meta(c)["grade_id"] for c in _source(assignment).cells if is_test(c) and HIDDEN_BEGIN in c.source}


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


def refused_accesses(nb) -> list[str]:
    """What the guard refused while the answer ran, as the last evidence output reports it
    (the kit keeps the list; an answer cannot reach it). Only well-formed lists of short texts."""
    reports = [
        out["data"][MIME].get("refused")
        for cell in nb.cells
        if is_test(cell)
        for out in cell.get("outputs", [])
        if MIME in out.get("data", {}) and isinstance(out["data"][MIME], dict)
    ]
    for report in reversed(reports):
        if isinstance(report, list) and all(isinstance(r, str) for r in report):
            return [r[:300] for r in report[:50]]
    return []


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
                anomalies.append(messages.evidence_outside_tests(len(payloads)))
            continue
        if len(payloads) > 1:
            anomalies.append(messages.evidence_repeated(test, len(payloads)))
            continue
        if not payloads:
            continue  # the cell did not get that far: the verdict says "no evidence"
        payload = payloads[0]
        if not isinstance(payload, dict) or payload.get("test") != test:
            anomalies.append(messages.evidence_mislabelled(test))
            continue
        changed = payload.get("changed")
        if not isinstance(changed, list) or not all(isinstance(name, str) for name in changed):
            anomalies.append(messages.evidence_without_check(test))
            continue
        if changed:
            anomalies.append(messages.functions_changed(test, changed))
            continue
        try:
            evidence = decode(payload.get("evidence"))
            if not isinstance(evidence, dict) or "error" not in evidence:
                raise ValueError("证据缺少 error 字段")
        except Exception as err:  # noqa: BLE001 - whatever arrived, it is not our evidence
            anomalies.append(messages.evidence_malformed(test, err))
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


def _given(evidence: dict, cell_test: str, test_id: str, compute=None) -> dict:
    if test_id != cell_test:
        raise RuntimeError(f"course bug: cell {cell_test} collects evidence as {test_id}")
    if test_id not in evidence:
        raise AssertionError(messages.NO_EVIDENCE)
    return copy.deepcopy(evidence[test_id])


def _message(err: BaseException) -> str:
    if isinstance(err, AssertionError):
        return str(err).strip() or messages.ASSERTION_FAILED
    return messages.judging_failed(err)


@functools.cache
def _source(assignment: str):
    return nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)


def _error_kind(text):
    """An error of the answer's, reduced to its exception class when that class is Python's or
    JAX's own: what the answer raised may carry a hidden test's inputs."""
    if not isinstance(text, str):
        return text
    name = text.split(":", 1)[0].strip()
    known = isinstance(getattr(builtins, name, None), type) or name in _JAX_ERRORS
    return name if known else "Exception"


_JAX_ERRORS = {
    "TracerBoolConversionError", "ConcretizationTypeError", "TracerArrayConversionError",
    "TracerIntegerConversionError", "UnexpectedTracerError", "KeyReuseError", "JaxRuntimeError",
}  # fmt: skip


def _without_answer_text(evidence: dict) -> dict:
    """A hidden test's evidence with the answer's error messages cut to their class."""
    return {
        key: _error_kind(value) if key == "error" or key.endswith("_error") else value
        for key, value in evidence.items()
    }


def judge(assignment: str, evidence: dict[str, dict], secret: str) -> list[TestResult]:
    """Run every test cell of the source notebook here, on `evidence`, with the student's seed.

    Each body gets the namespace a test cell gets in the kernel, built by the kit, with no
    interface objects: `collect` returns the kernel's evidence instead of calling anything.
    A hidden test's messages never repeat what the answer produced (its error texts, its
    numbers): an answer could write the hidden inputs into them."""
    seed = functools.partial(derive_seed, secret)
    hidden = hidden_tests(assignment)
    results = []
    for cell in _source(assignment).cells:
        if not is_test(cell):
            continue
        meta = _meta(cell)
        test, points = meta["grade_id"], float(meta.get("points", 0))
        body = split_test_cell(cell.source)
        given = dict(evidence)
        extra = {}
        if test in hidden:
            given = {k: _without_answer_text(v) if k == test and isinstance(v, dict) else v for k, v in given.items()}
            extra["check_close"] = functools.partial(check_close, reveal=False)
        namespace = test_namespace(body, {}, collect=functools.partial(_given, given, test), seed_for=seed, **extra)
        try:
            run_test_body(body, namespace, f"<{assignment}:{test}>")
            results.append(TestResult(test, points, points, None))
        except Exception as err:  # noqa: BLE001 - a failed verdict of any kind scores 0
            results.append(TestResult(test, 0.0, points, _message(err)))
    return results
