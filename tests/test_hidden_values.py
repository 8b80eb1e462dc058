"""No value derived from a hidden input reaches any page (#44, docs/methods.md).

A hidden test's inputs are the judge's secret, and what a verdict computes from them would tell
them. So a hidden test's failure says only text the course wrote (kit/ch4judge.py, `Hidden`), and
its inputs come from a key that changes with the submission's content (grader/pipeline/worker.py,
`student_seed`). Proven here in three ways:

* the gate itself, on messages a careless test would have written (a hidden value in an
  f-string, an error message quoting one, check_close's "得到 …");
* on the demo class (tests/demo_run.py), whose failing students include the naive softplus that
  once printed hidden points: each hidden verdict runs again here, recording every number it
  computed that changes with the key (run again with another key: fixed points and visible
  values drop out), and none of them, in the formats Python and NumPy print to six or more
  significant digits, is on any feedback page, in grades.csv or in the class report;
* the keys: the same submission draws the same inputs again, a changed one draws new ones.

The whole catalogue's hidden messages are checked in tests/test_selfproof.py (`unexplained_numbers`:
no number in them that the course did not write).
"""

import html
import io
import json
import re

import ch4judge
import nbformat
import numpy as np
import pytest
from demo_run import COPIED_IN, DELIMITERS, PROBED, PROBER, in_its_group
from helpers import float_leaves, hidden_inputs, significant_digits, unexplained_numbers

from grader import course
from grader.judging import quick, verdict
from grader.pipeline import worker
from proof import answers

# —— the gate ——

BODY = """# 🧪 隐藏测试 9（1 分）：一个例子
_x = np.random.default_rng(seed_for("t")).normal(size=3)
for _name in ("alpha", "beta"):
    assert False, f"{_name} 在随机点上不对"
"""


def judged(body: str, secret: str = "s") -> str:
    """The message the judge gives a hidden test with `body` (no programs)."""
    out = io.StringIO()
    ch4judge.judge({"secret": secret, "tests": [{"id": "t", "points": 1, "body": body, "hidden": True}]}, out)
    return json.loads(out.getvalue())["message"]


def test_a_message_made_of_the_bodys_own_pieces_is_shown():
    assert judged(BODY) == "alpha 在随机点上不对"


@pytest.mark.parametrize(
    "line",
    [
        'assert False, f"例如 x = {_x[:3]}"',
        'assert False, f"原始梯度范数 {float(np.linalg.norm(_x)):.4f}"',
        'assert False, "x = " + str(_x[0])',
        "raise ValueError(str(_x))",
        'check_close(_x, _x + 1.0, f"在 x = {_x[0]} 处的值")',
        'check_close(_x, _x + 1.0, "值")',
        'attempt(lambda: np.linalg.solve(np.zeros((2, 2)) + _x[0], np.ones(2)), "求解")',
    ],
    ids=["f-string", "a norm", "concatenation", "another exception", "check_close's case", "check_close", "attempt"],
)
def test_no_hidden_value_passes_the_gate(line):
    body = BODY.replace('    assert False, f"{_name} 在随机点上不对"', "    " + line)
    secret = "a secret"
    message = judged(body, secret)
    values = np.random.default_rng(ch4judge.derive_seed(secret, "t")).normal(size=3)
    shown = {f(v) for v in values for f in (repr, str, "{:.4f}".format, "{:.3f}".format, "{:.2e}".format)}
    assert not [s for s in shown if s in message], message
    assert not unexplained_numbers(message, body), message


def test_check_close_in_a_hidden_test_says_what_failed_only():
    """Neither how far nor how many: an answer chooses its outputs, so an error's size or a count
    of bad values could spell a hidden input."""
    for check, said in (
        ('check_close(_x, _x * 1.001, "值", hint="检查公式。")', "值不对：检查公式。"),
        ('check_close(np.where(_x > 0, np.nan, _x), _x, "值", finite=True)', "值出现了 nan/inf。"),
        ('check_close(_x[:2], _x, "值")', "值的形状不对。"),
    ):
        assert judged(BODY.replace('assert False, f"{_name} 在随机点上不对"', check)) == said


def test_a_message_with_a_hidden_value_becomes_the_tests_title():
    body = BODY.replace('f"{_name} 在随机点上不对"', 'f"{_name} 在 {_x[0]} 处不对"')
    assert judged(body).startswith("隐藏测试未通过：🧪 隐藏测试 9（1 分）：一个例子")


def test_a_visible_test_still_shows_its_values():
    out = io.StringIO()
    body = 'check_close(np.ones(2), np.zeros(2), "值")'
    ch4judge.judge({"secret": "s", "tests": [{"id": "t", "points": 1, "body": body, "hidden": False}]}, out)
    assert "得到 [1, 1]" in out.getvalue()


# —— the keys ——


def test_a_changed_submission_draws_new_hidden_inputs_and_the_same_one_the_same(tmp_path):
    (tmp_path / "grading-secret").write_text("class secret")
    seeds = {
        content: worker.student_seed(tmp_path, "alice", "residuals", content)
        for content in (b"answer one", b"answer one", b"answer two")
    }
    assert len(seeds) == 2 and seeds[b"answer one"] != seeds[b"answer two"]
    first, again, changed = (
        hidden_inputs("residuals", worker.student_seed(tmp_path, "alice", "residuals", c))
        for c in (b"answer one", b"answer one", b"answer two")
    )
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not any(np.array_equal(a, b) for a, b in zip(first, changed, strict=True))


# —— the demo class: every page, grades.csv and the report ——

# A number printed with fewer significant digits (leading and trailing zeros aside) recurs by
# chance on a page of numbers: 1.136 or 9.932 were on some page in every run. Six digits are
# specific to an input; the gate (above) keeps shorter forms out of hidden messages.
SIGNIFICANT = 6
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def printed_forms(v: float) -> set[str]:
    """How Python and NumPy print a value (as float64, and as float32 the way NumPy's arrays and
    scalars show it, or widened to a Python float), without the sign."""
    v32 = np.float32(v)
    in_array = np.array2string(np.array([v32]))[1:-1].strip()  # NumPy's arrays cap it at 8 digits
    forms = {repr(float(v)), str(v32), in_array, repr(float(v32)), f"{float(v):.6f}", f"{float(v32):.6f}"}
    return {f.lstrip("-") for f in forms if len(significant_digits(f.lstrip("-"))) >= SIGNIFICANT}


def numbers_in(value, found: set) -> None:
    """Every float a verdict's namespace holds (arrays, scalars, in containers), as printed."""
    for leaf in float_leaves(value):
        for v in leaf.ravel()[:5000]:
            if np.isfinite(v):
                found.update(printed_forms(float(v)))


def hidden_numbers(out, student: str, assignment: str) -> set[str]:
    """What each hidden verdict of this submission computed from its hidden inputs: its kernel
    exports again (the autograded notebook keeps no programs), the judge runs here with the
    student's key and records each hidden test's namespace. A number the same tests also compute
    with another key (a fixed point, a visible value) is not derived from the hidden inputs."""
    submitted = course.notebook_path(out / "course" / "submitted" / student, assignment)
    nb = verdict.kernel_notebook(answers.with_answer(
        nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4),
        quick.answer_cell(nbformat.read(submitted, as_version=4)).source,
    ))  # fmt: skip
    seed = worker.student_seed(out / "course", student, assignment)
    quick.run_in_kernel(nb, assignment, secret=seed)
    programs, _ = verdict.read_programs(nb)
    tests = [t for t in verdict.test_cells(assignment) if t["hidden"]]

    def computed(secret: str) -> set[str]:
        record: dict = {}
        job = {"secret": secret, "sizes_secret": seed, "tests": tests, "programs": programs}
        ch4judge.judge(job, io.StringIO(), record=record)
        found: set = set()
        for space in record.values():
            for name, value in space.items():
                if name.startswith("_") and not name.startswith("__"):
                    numbers_in(value, found)
        return found

    return computed(seed) - computed(seed[::-1])


def failed_hidden(demo_run) -> list[tuple[str, str]]:
    """The submissions with a failed hidden test (only a failure has a message), the ODE's left
    out: its Python-loop answers cost a minute of compiling each here, and tests/test_selfproof.py
    checks every ODE message in the catalogue."""
    found = []
    for (student, assignment), rows in demo_run.gradebook.items():
        if not demo_run.journal[(student, assignment)]["graded"]:
            continue  # an unreadable file (erin's) scores 0 with no test run
        full = {t["id"]: t["points"] for t in verdict.test_cells(assignment) if t["hidden"]}
        (row,) = rows  # {test: (auto score, manual score)}
        if assignment != "ode_adjoint" and any((row[t][0] or 0) < points for t, points in full.items() if t in row):
            found.append((student, assignment))
    return sorted(found)


def test_the_page_search_finds_a_value_as_python_and_numpy_print_it():
    """The demo pages' search is no blind scan: an array printed by NumPy, an entry of it in an
    f-string or after float(), is found; a number rounded to four digits is not searched for."""
    x = np.random.default_rng(1).normal(size=(3, 4)).astype(np.float32) * 100
    found: set = set()
    numbers_in(x, found)
    for page in (f"余切 {x}", f"g = {float(x[0, 2])}", f"例如 x = {x[1, 1:3]!r}", f"范数 {x[2, 3]}", f"{-x[2, 0]:.6f}"):
        assert found & set(NUMBER.findall(page)), page
    assert not found & set(NUMBER.findall(f"{x[0, 0]:.4g}"))


def printed_by_visible_tests(out) -> set[str]:
    """The numbers the class report quotes from visible tests' messages: made from the visible
    inputs, which every student has, so they are public whatever else they equal."""
    report = json.loads((out / "report" / "class.json").read_text(encoding="utf-8"))
    tests = [test for assignment in report["assignments"] for test in assignment["tests"] if not test["hidden"]]
    return {n for test in tests for message in test["messages"] for n in NUMBER.findall(message["example"])}


@in_its_group
def test_no_hidden_value_reaches_a_page_the_csv_or_the_report(demo_run):
    out = demo_run.out
    # A submission's hidden inputs exist only where it is graded: they could reach its own page,
    # and the class's CSV and report. Another student's page holds thousands of six-digit numbers
    # of its own, and one of them matched one of 10⁴ hidden numbers by chance (0.633598); so did a
    # visible softplus message the report quotes (softplus(−3) = 0.0485873, a clip_global_norm
    # hidden number): the report's quotes of visible tests are public and not searched.
    shared = [*out.glob("*.csv"), *out.glob("report/*.*")]
    public = printed_by_visible_tests(out)
    probed = failed_hidden(demo_run)
    assert (PROBER, PROBED) in probed and len(probed) >= 5, f"too few hidden failures to prove anything: {probed}"
    leaks, recorded = [], {}
    for student, assignment in probed:
        # A blank answer can fail every hidden test before it draws an input: nothing to leak then.
        numbers = hidden_numbers(out, student, assignment)
        recorded[(student, assignment)] = len(numbers)
        own = list(out.glob(f"feedback/{student}/{assignment}/*.html"))
        assert own, f"{student}/{assignment} has no feedback page to search"
        for path in [*own, *shared]:
            printed = set(NUMBER.findall(html.unescape(path.read_text(encoding="utf-8", errors="replace"))))
            printed -= public if path in shared else set()
            leaks += [f"{student}/{assignment}: {n} in {path.relative_to(out)}" for n in numbers & printed]
    searched = [key for key, count in recorded.items() if count > 100]
    assert (PROBER, PROBED) in searched and len(searched) >= 5, f"too few hidden numbers to prove anything: {recorded}"
    assert not leaks, leaks[:10]


@in_its_group
def test_an_answer_holding_the_hidden_test_markers_gets_its_page(demo_run):
    """nbgrader's ClearHiddenTests used to raise on the answer's "BEGIN HIDDEN TESTS" string."""
    page = demo_run.out / "feedback" / DELIMITERS / COPIED_IN / f"{COPIED_IN}.html"
    assert page.is_file(), demo_run.journal[(DELIMITERS, COPIED_IN)]["notes"]
    row = demo_run.long[(DELIMITERS, COPIED_IN)]
    assert float(row["score"]) == float(row["max_score"]) and row["flags"] == "", row
