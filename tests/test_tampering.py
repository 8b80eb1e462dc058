"""Hostile submissions earn nothing and reach nothing (grader/README.md, "How a score is decided").

The grade is a function of the programs a graded kernel exports; the judge, in a sandbox of its
own, alone holds the key and draws the hidden inputs (issue #31). So the student's cells run as
written and may do anything inside their kernel: every attack here does, and must still score
no more than the answer it rides on, and leak nothing (no key, no seed, no hidden input, no
hidden verdict's source) into what the student gets back.

Two real grading runs (each grades the class once, in two rounds: the honest students first,
then the attacks into the same folder, so the honest results can be compared before and after):

* the local run (SQLite, local workers): the attacks on the grade itself, one per attack class
  of issue #31, and proof/attacks has one file each (`# class:`): str-subclass formatting,
  objects carried back by exceptions, closure/globals walks, answer-defined array and buffer
  protocols, the environment, linecache, moved test cells, recorded tracer values, programs
  outside their test cell or repeated in it, an artifact made from a wrong function, artifacts
  the judge must refuse (an operation or a custom_call outside its allow-list), the libraries
  patched in the kernel; a probe that searches the whole kernel (environment, files, objects,
  raw memory) for the key, the seeds and the hidden inputs; honest Python (`match`,
  `__init_subclass__`) that must keep full marks with no flag;
* the distributed run (a Dask cluster, PostgreSQL): the attacks on the machine (files, network,
  processes, disk, outputs): none of them reads or changes solutions/, exercises/, the
  gradebook, other students' results or the submissions.

Most attacks ride on the residuals exercise: its kernels are the quickest to grade.
"""

import base64
import dataclasses
import functools
import hashlib
import html
import json
import re
import subprocess
import sys
from pathlib import Path

import ch4judge
import ch4messages
import nbformat
import numpy as np
import pytest
from ch4protocol import SIZES_ENV, VERDICT_MARKER, derive_seed, split_test_cell
from helpers import gradebook_rows, hidden_inputs, read_csv, settle, significant_digits

from grader import REPO, course, grade, messages
from grader.judging import verdict
from grader.kernels import sandbox
from grader.pipeline import intake, worker
from proof import answers, hostile

# The distributed run grades on the servers tests/test_scale_out.py uses too (tests/conftest.py):
# one pytest worker owns them. The local run is another worker's.
on_the_cluster = pytest.mark.xdist_group("cluster")
local = pytest.mark.xdist_group("tampering")
RUNS = {"local_run": "tampering", "cluster_run": "cluster"}
ATTACKS = hostile.attacks()
LOCAL = [a for a in ATTACKS if a.run == "local"]
CLUSTER = [a for a in ATTACKS if a.run == "cluster"]
BY_SLUG = {a.slug: a for a in ATTACKS}
# What an attack prints when it got somewhere: found a file, wrote outside its /tmp, connected,
# killed a process, filled a disk or started its 3000 processes.
FORBIDDEN_OUTPUT = re.compile(r"^(FOUND|WROTE|CONNECTED|KILLED|FILLED|STARTED)\b(.*)$", re.MULTILINE)
# The distributed run's --cell-timeout: no cell of its attacks needs more than a few seconds.
CLUSTER_CELL_TIMEOUT = 20
PROBE = "scan_for_the_key"
# How JAX shows a value it traces with abstract shapes only: a tracer, or a jaxpr variable.
ABSTRACT = re.compile(r"Tracer\(|Traced<|Var\(id=")
# A test body the linecache attack printed (the kit names each body `<测试单元格 N>`).
TEST_BODY_PRINTED = r"^LINECACHE \w+ <测试单元格 \d+>:\n(.*?)(?=^LINECACHE |^FRAME SOURCE |^HISTORY |\Z)"

# —— honest Python the old answer guard refused (issue #31): variants of the residuals reference ——

MATCH_ANSWER = '''\
def _sum_sin_sq(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _rules(policy: str):
    """前向和反向规则：按残差策略选。"""
    match policy:
        case "save":
            def fwd(x):
                s, c = jnp.sin(x), jnp.cos(x)
                return jnp.sum(s * s), (s, c)

            def bwd(residuals, g):
                match residuals:
                    case (s, c):
                        return (2.0 * g * s * c,)
                    case _:
                        raise TypeError("残差应是 (sin x, cos x)")
        case "recompute":
            def fwd(x):
                return _sum_sin_sq(x), x

            def bwd(x, g):
                return (g * jnp.sin(2.0 * x),)
        case other:
            raise ValueError(f"没有这种策略：{other}")
    return fwd, bwd


sin2_save = jax.custom_vjp(_sum_sin_sq)
sin2_save.defvjp(*_rules("save"))
sin2_recompute = jax.custom_vjp(_sum_sin_sq)
sin2_recompute.defvjp(*_rules("recompute"))
'''

INIT_SUBCLASS_ANSWER = '''\
class Policy:
    """每种残差策略一个子类，定义时用 __init_subclass__ 登记。"""

    registry: dict = {}

    def __init_subclass__(cls, /, name: str, **kwargs):
        super().__init_subclass__(**kwargs)
        Policy.registry[name] = cls

    @staticmethod
    def value(x):
        return jnp.sum(jnp.sin(x) ** 2)

    @classmethod
    def build(cls):
        f = jax.custom_vjp(cls.value)
        f.defvjp(cls.fwd, cls.bwd)
        return f


class Save(Policy, name="save"):
    @staticmethod
    def fwd(x):
        s, c = jnp.sin(x), jnp.cos(x)
        return jnp.sum(s * s), (s, c)

    @staticmethod
    def bwd(residuals, g):
        s, c = residuals
        return (2.0 * g * s * c,)


class Recompute(Policy, name="recompute"):
    @staticmethod
    def fwd(x):
        return Policy.value(x), x

    @staticmethod
    def bwd(x, g):
        return (g * jnp.sin(2.0 * x),)


sin2_save = Policy.registry["save"].build()
sin2_recompute = Policy.registry["recompute"].build()
'''

HONEST = {"honest-match": ("residuals", MATCH_ANSWER), "honest-init_subclass": ("residuals", INIT_SUBCLASS_ANSWER)}

tree_digest = intake.folder_digest


# —— what the judge alone knows: the key, the seeds and the hidden inputs of a student ——


def student_key(out: Path, student: str, assignment: str) -> str:
    return worker.student_seed(out / "course", student, assignment)


def key_as_graded(submitted: Path, out: Path, student: str, assignment: str, scratch: Path) -> str:
    """The key the grader will draw for a submission not graded yet: its notebook read and
    written back as the grader does (the key hashes those bytes)."""
    release = nbformat.read(course.notebook_path(course.EXERCISES, assignment), as_version=4)
    nb, _, _ = intake.receive(submitted / student / assignment, assignment, release)
    nbformat.write(nb, scratch)
    return worker.student_seed(out / "course", student, assignment, scratch.read_bytes())


def probe_targets(out: Path, key: str, assignment: str) -> dict:
    """What the probe looks for, by SHA-256 only: the course's secret, the student's key, every
    test's seed (as text and as an 8-byte integer) and the first 16 bytes of each hidden input."""
    secret = (out / "course" / "grading-secret").read_text()
    seeds = [derive_seed(key, t["id"]) for t in verdict.test_cells(assignment)]
    arrays = hidden_inputs(assignment, key)

    def digest(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()

    raw = [seed.to_bytes(8, "little") for seed in seeds] + [a.tobytes()[:16] for a in arrays]
    return {
        "text": [digest(secret.encode()), digest(key.encode())] + [digest(str(s).encode()) for s in seeds],
        "raw": [(int.from_bytes(r[:4], "little"), len(r), digest(r)) for r in raw],
        "sizes": sorted({a.size for a in arrays}),
    }


def leaks_in(text: str, out: Path, student: str, assignment: str) -> list[str]:
    """What of the judge's knowledge is in `text`: the secret, the student's key, a hidden input
    (see `secret_values`). test_hidden_values searches every number a hidden verdict computes."""
    secret = (out / "course" / "grading-secret").read_text()
    key = student_key(out, student, assignment)
    found = [what for what, value in (("the course's secret", secret), ("the student's key", key)) if value in text]
    printed = printed_numbers(text)
    for values in secret_values(assignment, key):
        found += hidden_values_in(printed, values)
    return found


@functools.cache
def secret_values(assignment: str, key: str) -> tuple[np.ndarray, ...]:
    """Four values in a row from each array the hidden tests draw or give their first program,
    from its first value that another key's draw does not also hold (softplus's inputs start with a
    public grid, the same for every student)."""
    other = hashlib.sha256(f"another student than {key}".encode()).hexdigest()
    public = {float(v) for array in hidden_inputs(assignment, other) for v in array.ravel()}
    chosen = []
    for array in hidden_inputs(assignment, key):
        values = array.ravel().astype(np.float32)
        secret = [i for i, v in enumerate(values) if float(v) not in public]
        if secret:
            chosen.append(values[secret[0] : secret[0] + 4])
    return tuple(chosen)


NUMBER = re.compile(r"(?<![\d.])\d+\.\d+(?:[eE][-+]?\d+)?")  # a whole number, never digits inside a longer one
# Times of day and durations (nbclient's timestamps, a timedelta's str): their seconds hold every
# short decimal sooner or later (CI once found the hidden 0.26182 in `03:09:20.261827Z`).
CLOCK = re.compile(r"\b\d{1,2}:\d\d(?::\d\d)?\.\d+")


def printed_numbers(text: str) -> np.ndarray:
    """Each number `text` writes, in order, as a row: its magnitude and half a unit of its last
    digit; NaN for one with fewer than five significant digits (0.5 or 1.25 are on any page) or
    an exponent beyond float64's."""
    printed = []
    for number in NUMBER.findall(CLOCK.sub(" ", text)):
        mantissa, _, exponent = number.lower().partition("e")
        if len(significant_digits(number)) < 5 or len(exponent.lstrip("+-")) > 3:
            printed.append((np.nan, np.nan))
            continue
        last_digit = min(int(exponent or 0) - len(mantissa.partition(".")[2]), 300)
        printed.append((float(number), 0.5 * 10.0**last_digit))
    return np.array(printed, dtype=np.float64).reshape(-1, 2)


def hidden_values_in(printed: np.ndarray, values: np.ndarray) -> list[str]:
    """Which of `values` (float32) the printed numbers show: one alone written as a number that is
    it in float32 (whatever its digits or exponent), or two neighbours written one after the
    other, each rounded to the digits it shows (a message's 6 digits, NumPy's 8)."""
    magnitude, half = printed[:, 0], printed[:, 1]
    with np.errstate(all="ignore"):  # NaN rows compare False; a page's 1e40 is inf in float32
        exact = set(magnitude[np.isfinite(magnitude)].astype(np.float32))
        near = [np.abs(magnitude - abs(float(v))) <= half * (1 + 1e-9) for v in values]
    found = [f"the hidden input value {v!s}" for v in values if abs(v) in exact]
    for i in range(len(values) - 1):
        if np.any(near[i][:-1] & near[i + 1][1:]):
            found.append(f"the hidden input values {values[i]!s}, {values[i + 1]!s}")
    return found


def hidden_verdict_lines(assignment: str) -> set[str]:
    """Lines only the hidden tests' verdicts have (below `# —— 判定 ——`): never in a kernel."""
    source = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
    kernel = "\n".join(c.source for c in verdict.kernel_notebook(source).cells)
    visible = "\n".join(c.source for c in source.cells if verdict.is_test(c) and verdict.HIDDEN_BEGIN not in c.source)
    lines = set()
    for cell in source.cells:
        if verdict.is_test(cell) and verdict.HIDDEN_BEGIN in cell.source:
            below = split_test_cell(cell.source).split(VERDICT_MARKER, 1)[1]
            lines |= {line.strip() for line in below.splitlines()}
    known = {line.strip() for line in (kernel + "\n" + visible).splitlines()}
    return {line for line in lines - known if len(line) > 20 and not line.startswith("#")}


# —— the runs ——


def results_of(out: Path, students) -> dict:
    """Everything a student's grading produced: feedback, autograded notebook, gradebook rows."""
    files = {}
    for student, assignment in students:
        for kind in ("feedback", "course/autograded", "course/feedback", "course/worker-feedback"):
            files[(student, kind)] = tree_digest(out / kind / student / assignment)
    rows = gradebook_rows(course.db_url(out / "course"))
    return {"files": files, "gradebook": {key: rows.get(key) for key in students}}


def protected() -> dict:
    return {"solutions": tree_digest(course.SOLUTIONS), "exercises": tree_digest(course.EXERCISES)}


def planted_files() -> list[Path]:
    """Marker files the write attack tried to leave: anywhere on this machine it might reach."""
    found = set(REPO.rglob("PWNED-by-attack"))
    for place in (Path("/tmp"), Path.home(), REPO.parent):
        found.update(place.glob("PWNED-by-attack"), place.glob("*/PWNED-by-attack"))
    return sorted(found)


def _two_rounds(submitted: Path, out: Path, chosen, run: str, extra=None, fill=None, prepare=None, **options) -> dict:
    """Grade the honest students, snapshot, add the attacks of `run` (`fill`: the lines to fill in,
    by attack), call `prepare(out)`, grade again into `out`."""
    honest = hostile.honest_class(submitted, chosen, extra)

    def graded():
        printed = []
        try:
            return grade.grade(submitted, out, jobs=2, echo=printed.append, **options)
        except grade.Incomplete:
            pytest.fail("\n".join(line for line in printed if "not graded" in line))

    graded()
    before, protected_before = results_of(out, honest), protected()
    hostile.attack_class(submitted, run, fill)
    if prepare:
        prepare(out)
    submissions = tree_digest(submitted)
    outcomes = graded()
    return {
        "out": out,
        "outcomes": {(o.student, o.assignment): o for o in outcomes},
        "before": before,
        "after": results_of(out, honest),
        "protected": (protected_before, protected()),
        "submissions": (submissions, tree_digest(submitted)),
    }


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    """The attacks on the grade, graded locally. The key probe's targets are known once the
    class's secret (first round) and the probe's notebook exist; the notebook's bytes choose the
    key, so the targets go to a file in the kit's folder, which its kernel may read."""
    submitted, out = tmp_path_factory.mktemp("class"), tmp_path_factory.mktemp("graded")
    student, assignment = f"attack-{PROBE}", BY_SLUG[PROBE].assignment
    targets = sandbox.KIT / f".probe-targets-{submitted.parent.name}-{submitted.name}.json"
    keys = []

    def prepare(out):
        keys.append(key_as_graded(submitted, out, student, assignment, tmp_path_factory.mktemp("probe") / "nb.ipynb"))
        targets.write_text(json.dumps(probe_targets(out, keys[0], assignment)))

    try:
        fill = {PROBE: {"TARGETS_FILE": repr(str(targets))}}
        run = _two_rounds(submitted, out, LOCAL, "local", extra=HONEST, fill=fill, prepare=prepare)
    finally:
        targets.unlink(missing_ok=True)
    return run | {"probe_key": keys[0]}


@pytest.fixture(scope="module")
def cluster_run(tmp_path_factory, postgres_server, grading_cluster):
    """The attacks on the machine, graded the distributed way (a Dask scheduler, `python -m
    grader worker`, a PostgreSQL gradebook): they meet the workers and the shared database."""
    submitted, out = tmp_path_factory.mktemp("class"), tmp_path_factory.mktemp("graded")
    settle(grading_cluster)
    cluster = {"scheduler": grading_cluster.address, "tls": grading_cluster.tls}
    cluster["db"] = postgres_server.database("tampering")
    try:
        return _two_rounds(submitted, out, CLUSTER, "cluster", cell_timeout=CLUSTER_CELL_TIMEOUT, **cluster)
    finally:
        settle(grading_cluster)  # an attack may have taken a worker down with it


def outcome(run: dict, student: str, assignment: str):
    return run["outcomes"][(student, assignment)]


def beside_its_base(run: dict, attack) -> tuple:
    """(the attack's outcome, its base's), once the reference beside them has full marks."""
    reference = outcome(run, f"ref-{attack.assignment}", attack.assignment)
    assert reference.score == reference.max_score, "the reference must keep full marks beside the attacks"
    return outcome(run, f"attack-{attack.slug}", attack.assignment), outcome(
        run, attack.base_student, attack.assignment
    )


def autograded(run: dict, student: str, assignment: str):
    return nbformat.read(course.notebook_path(run["out"] / "course" / "autograded" / student, assignment), as_version=4)


def printed(nb) -> str:
    """Everything the kernel printed or displayed as text, in every cell. A stream arrives in
    pieces that may cut a line anywhere: its pieces are joined as they came."""
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                parts.append(out.get("text", ""))
            else:
                parts.append(f"\n{out.get('data', {}).get('text/plain', '')}\n{out.get('evalue', '')}\n")
        parts.append("\n")
    return "".join(parts)


def page(run: dict, student: str, assignment: str) -> str:
    path = run["out"] / "feedback" / student / assignment / f"{assignment}.html"
    return html.unescape(path.read_text(encoding="utf-8"))


def per_test_scores(run: dict, student: str, assignment: str) -> dict[str, float]:
    """{test: points} of a graded student, from the gradebook."""
    (row,) = gradebook_rows(course.db_url(run["out"] / "course"))[(student, assignment)]
    return {test: auto for test, (auto, _) in row.items()}


def full_points(assignment: str) -> dict[str, float]:
    return {t["id"]: t["points"] for t in verdict.test_cells(assignment)}


@pytest.mark.parametrize(
    "text, shown",
    [
        ("x = 0.26182", True),
        ("[0.26182, 1.5]", True),
        ("-0.26182", True),
        (f"{float(np.float32(0.26182)):.9f} with float32's own digits", True),
        (f"{float(np.float32(0.26182))!r} widened to a Python float", True),
        ("2.6182e-01", True),
        ('"iopub.status.idle": "2026-12-07T03:09:20.261827Z"', False),  # CI's false alarm
        ('"shell.execute_reply": "2026-12-07T03:09:00.261820Z"', False),  # the seconds are the value
        ("耗时 0:00:00.261820", False),  # a timedelta
        ("10.26182", False),
        ("0.261821", False),
        ("0.2618", False),
    ],
)
def test_a_hidden_value_is_found_as_a_number_not_inside_one(text, shown):
    assert bool(hidden_values_in(printed_numbers(text), np.float32([0.26182]))) is shown


HIDDEN = np.float32([0.18905339, -1.2345679, 0.01234568, -0.05678901])


@pytest.mark.parametrize(
    "text",
    [
        ch4messages.shown(HIDDEN),  # a message: 6 digits
        repr(HIDDEN),  # NumPy's repr, as a cell's last expression shows it: 8 digits
        str(HIDDEN[2:]),
        ", ".join(f"{v:.6f}" for v in HIDDEN[2:]),
        np.array2string(HIDDEN, precision=6),
        html.escape(json.dumps({"text": f"（得到 {ch4messages.shown(HIDDEN[1:3])}）"})),
    ],
)
def test_two_hidden_neighbours_are_found_rounded_as_they_print(text):
    assert [f for f in hidden_values_in(printed_numbers(text), HIDDEN) if "values" in f], text


def test_rounded_numbers_that_are_not_two_neighbours_are_not_a_leak():
    for text in ("0.189053, 0.0123457", "-1.23457, 0.189053", "0.189053 1.23456", "0.189 -1.23457"):
        assert not hidden_values_in(printed_numbers(text), HIDDEN), text


def test_a_strange_page_is_read_without_an_error():
    page = "1.23456e99999 1e309 1.5e40 " + "1." + "9" * 100_000 + " 1.5e" + "7" * 5000 + " nan inf"
    assert not hidden_values_in(printed_numbers(page), np.float32([0.26182, 1.5]))


def test_the_inputs_a_program_is_given_are_searched_not_only_the_draws():
    """stop_gradient's hidden values test gives its program normal draws times 10 to a drawn power
    (-6 to 6): that array spans ten decades and more; no draw does."""
    decades = [np.ptp(np.log10(np.abs(a[a != 0]))) for a in hidden_inputs("stop_gradient", "0" * 64)]
    assert max(decades) > 10, decades


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_the_values_searched_for_are_the_students_own(assignment):
    """Each assignment has some, and each run of them starts with a value another student's draw
    does not hold (softplus's inputs start with a grid every student gets: a page may print it)."""
    chosen = secret_values(assignment, "0" * 64)
    other = {float(v) for array in hidden_inputs(assignment, "1" * 64) for v in array.ravel()}
    assert chosen and all(len(values) for values in chosen), chosen
    assert not [float(v) for values in chosen for v in values[:1] if float(v) in other], chosen


# —— the sandbox itself ——


def test_the_sandbox_is_available():
    why = sandbox.probe()
    assert why is None, f"make setup installs bubblewrap; grading here would be unsandboxed: {why}"


def test_sandbox_keeps_a_folder_under_tmp_visible(tmp_path):
    """/tmp is a fresh tmpfs inside the sandbox; the kernel's folder, the venv or a checkout under
    /tmp (a CI clone) must still be there, not hidden beneath it."""
    assert str(tmp_path).startswith("/tmp/"), f"this check needs a folder under /tmp, got {tmp_path}"
    tmp_path.chmod(0o755)  # the kernel runs as user nobody
    marker = tmp_path / "marker.txt"
    marker.write_text("visible")
    marker.chmod(0o644)
    probe = [sys.executable, "-c", f"print(open({str(marker)!r}).read())"]
    done = subprocess.run(sandbox.command(tmp_path, {}) + probe, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "visible", f"the folder under /tmp is hidden in the sandbox: {done.stderr[-500:]}"


# —— every attack, in its run ——


def _attack_params(chosen):
    return [pytest.param(a, id=a.slug, marks=[local if a.run == "local" else on_the_cluster]) for a in chosen]


@pytest.mark.parametrize("attack", _attack_params(ATTACKS))
def test_attack_scores_no_more_than_its_base(attack, request):
    run = request.getfixturevalue("local_run" if attack.run == "local" else "cluster_run")
    got, alone = beside_its_base(run, attack)
    if attack.base != "reference":
        assert alone.score < alone.max_score, f"{attack.base} is supposed to be wrong"
    assert got.score <= alone.score, (
        f"{attack.slug} ({attack.kind}): {got.score}/{got.max_score}, more than {attack.base} alone "
        f"({alone.score}): {got.notes}"
    )


@pytest.mark.parametrize("attack", _attack_params(ATTACKS))
def test_attack_leaks_nothing(attack, request):
    """Neither the instructor's autograded notebook (everything the kernel printed) nor the
    student's page holds the secret, the student's key, a hidden input or a line of a hidden
    verdict: the kernel never had them."""
    run = request.getfixturevalue("local_run" if attack.run == "local" else "cluster_run")
    student, assignment = f"attack-{attack.slug}", attack.assignment
    got = outcome(run, student, assignment)
    if not got.graded:  # its kernel died (e.g. it killed what it could): then it must say so, at 0
        assert got.score == 0 and got.notes, f"{attack.slug}: not graded, yet {got.score} points and notes {got.notes}"
        return
    notebook = course.notebook_path(run["out"] / "course" / "autograded" / student, assignment).read_text("utf-8")
    for where, text in (("the autograded notebook", notebook), ("the feedback page", page(run, student, assignment))):
        assert not leaks_in(text, run["out"], student, assignment), (
            f"{attack.slug}: {where} holds {leaks_in(text, run['out'], student, assignment)}"
        )
        lines = [line for line in hidden_verdict_lines(assignment) if line in text]
        assert not lines, f"{attack.slug}: {where} holds hidden verdict lines {lines[:3]}"


def test_every_attack_class_is_covered():
    """The classes of issue #31 and of the threat model, each with at least one attack."""
    named = {
        "str-subclass formatting": "format_string_walk",
        "objects carried back by exceptions": "exception_carried_objects",
        "closure/globals walks to counters": "closure_walk_to_the_jacobian",
        "answer-defined array/buffer protocols": "raw_memory_protocols",
        "the environment": "environment_key_hunt",
        "linecache": "linecache_hidden_source",
        "moved test cells": "moved_test_cell",
        "recorded tracer values": "recorded_tracer_values",
        "programs outside test cells": "programs_outside_tests",
        "repeated programs in a test cell": "programs_repeated",
        "an artifact made from a wrong function": "wrong_function_artifact",
        "an operation outside the allow-list": "refused_op",
        "a custom_call outside the allow-list": "refused_custom_call",
        "the key and the hidden inputs in the kernel": PROBE,
        "patching the libraries in the kernel": "patch_allclose",
        "a custom_vjp look-alike": "custom_vjp_subclass",
        "redefining test-cell names": "shadow_residuals",
        "nbgrader's partial credit": "numeric_last_expression",
        "reading files": "read_secrets",
        "writing files and the gradebook": "write_everywhere",
        "network and processes": "network_and_processes",
        "the host disk": "fill_disk",
        "process flood": "process_flood",
        "outputs of every MIME type": "huge_outputs",
        "HTML and script in outputs": "html_in_outputs",
    }
    assert {kind: BY_SLUG[slug].kind for kind, slug in named.items() if slug in BY_SLUG} == {k: k for k in named}
    assert {a.kind for a in ATTACKS} <= set(named), "an attack class this test does not name"


def test_each_test_of_a_run_is_in_that_runs_group(request):
    """A test that reads a run but sits in another pytest-xdist group would grade the class a
    second time on another worker (minutes), and silently."""
    for item in request.session.items:
        if item.module is not request.module:
            continue
        marked = {mark.args[0] for mark in item.iter_markers("xdist_group")}
        runs = [run for run in RUNS if run in item.fixturenames]
        attack = getattr(item, "callspec", None) and item.callspec.params.get("attack")
        if attack is not None:
            runs = ["local_run" if attack.run == "local" else "cluster_run"]
        assert len(runs) <= 1 and marked == {RUNS[r] for r in runs}, f"{item.name} reads {runs} but is in {marked}"


# —— the local run: the attacks on the grade ——


def _got(run, slug):
    return beside_its_base(run, BY_SLUG[slug])


@local
def test_str_format_walk_rewrites_the_kernel_and_gains_nothing(local_run):
    got, alone = _got(local_run, "format_string_walk")
    text = printed(autograded(local_run, got.student, got.assignment))
    assert "WALKED to ['EXPORT_HELPERS', '_Tests', 'ch4judge', 'jax']" in text, "the walks did not reach the kit"
    assert "REWROTE the kit's programs" in text
    assert (got.score, got.flags) == (alone.score, alone.flags), (got.score, alone.score, got.flags, got.notes)


@local
def test_objects_carried_by_exceptions_only_take_programs_away(local_run):
    """The frames an exception carries lead into the kit while it exports; relabelling a payload
    through them makes a test lose its programs, and the submission is flagged for a person."""
    got, alone = _got(local_run, "exception_carried_objects")
    text = printed(autograded(local_run, got.student, got.assignment))
    assert "CARRIED BACK module ch4check" in text and "relabelled as test_visible_value_grad" in text, text[-2000:]
    assert got.score <= alone.score and "tampering" in got.flags, (got.score, alone.score, got.flags)
    assert any(messages.programs_malformed("test_hidden_random") in note for note in got.notes), got.notes


@local
def test_a_closure_walk_to_the_tests_jacobian_gains_nothing(local_run):
    """colored_jacobian_banded walks from the function a test hands it (v ↦ g(v) + J v) to the
    matrix J it closes over, and returns J's band: no JVP. The judge reads how the program uses
    the Jacobian (one product with 2b+1 tangents, or nothing), so the counting tests fail and it
    scores no more than jacfwd alone."""
    got, alone = _got(local_run, "closure_walk_to_the_jacobian")
    text = printed(autograded(local_run, got.student, got.assignment))
    reached = re.search(r"^REACHED the test namespaces and Jacobians: (.*)$", text, re.MULTILINE)
    assert reached and "([" in reached.group(1) and ", 1)" in reached.group(1), (
        f"the walk reached nothing: {text[-1500:]}"
    )
    lost = {t for t, p in per_test_scores(local_run, got.student, got.assignment).items() if not p}
    assert {"test_jvp_count", "test_hidden_other_bands"} <= lost, sorted(lost)
    assert got.score <= alone.score, f"{got.score}/{got.max_score} against {alone.score} for jacfwd alone: {got.notes}"


@local
def test_raw_memory_through_every_protocol_gains_nothing(local_run):
    got, alone = _got(local_run, "raw_memory_protocols")
    text = printed(autograded(local_run, got.student, got.assignment))
    for protocol in ("__array_interface__", "__array_struct__", "__dlpack__", "__buffer__"):
        assert f"RAW {protocol}: read ok, write ok" in text, f"{protocol} was no raw read/write here: {text[-1500:]}"
    assert "RAW rewrote ch4programs._PURE_STABLEHLO in this kernel: 'REWRITTEN" in text
    assert (got.score, got.flags) == (alone.score, alone.flags), (got.score, alone.score, got.notes)


@local
def test_the_kernel_environment_holds_no_key(local_run):
    got, alone = _got(local_run, "environment_key_hunt")
    text = printed(autograded(local_run, got.student, got.assignment))
    keys = re.search(r"^ENV (\[.*\])$", text, re.MULTILINE)
    assert keys, "the attack did not print its environment"
    names = json.loads(keys.group(1).replace("'", '"'))
    # CH4_SIZES_KEY: what the hidden tests' sizes are drawn from (the kernel exports at them); an
    # HMAC of the secret, from which neither the secret nor the judge's seeds follow
    others = [n for n in names if re.search("SEED|SECRET|KEY|TOKEN", n) and n != SIZES_ENV]
    assert "CH4_GRADING" in names and not others, names
    assert got.score == alone.score


@local
def test_linecache_and_frames_hold_no_hidden_verdict(local_run):
    """The kit keeps test bodies in linecache and the running cell's source is in its frames:
    a graded kernel only ever had the export part of a test, never a verdict."""
    got, alone = _got(local_run, "linecache_hidden_source")
    text = printed(autograded(local_run, got.student, got.assignment))
    bodies = re.findall(TEST_BODY_PRINTED, text, re.M | re.S)
    assert len(bodies) == len(verdict.test_cells(got.assignment)), f"the attack saw {len(bodies)} test bodies"
    assert "FRAME SOURCE" in text, "the attack found no test source in the frames"
    assert not [b for b in bodies if "seed_for(" in b or VERDICT_MARKER in b], "a verdict reached the kernel"
    assert got.score == alone.score


@local
def test_what_the_answer_prints_during_hidden_tests_is_not_in_the_feedback(local_run):
    """The instructor's autograded notebook keeps what the answer printed; the student's page
    keeps only what it printed while visible tests ran (here: the test bodies it found)."""
    got = outcome(local_run, "attack-linecache_hidden_source", "residuals")
    hidden = verdict.hidden_tests(got.assignment)
    counts = {"hidden": 0, "visible": 0}
    for cell in autograded(local_run, got.student, got.assignment).cells:
        test = cell.metadata.get("nbgrader", {}).get("grade_id") if verdict.is_test(cell) else None
        if test is not None:
            one = printed(nbformat.v4.new_notebook(cells=[cell]))
            counts["hidden" if test in hidden else "visible"] += one.count("LINECACHE export")
    assert counts["hidden"] > 0 and counts["visible"] > 0, f"the attack must print in both kinds of test: {counts}"
    shown = page(local_run, got.student, got.assignment)
    assert shown.count("LINECACHE export") == counts["visible"], "what it printed during a hidden test is on the page"
    assert messages.HIDDEN_OUTPUT_DROPPED in shown and verdict.HIDDEN_BEGIN not in shown


@local
def test_a_moved_test_cell_runs_where_it_was_released(local_run):
    """The submitted notebook moved a visible test after the hidden ones: intake puts it back, so
    it runs (and prints) before any hidden test; and the answer only ever saw tracers."""
    got, alone = _got(local_run, "moved_test_cell")
    assert messages.cells_reordered() in got.notes, got.notes
    nb = autograded(local_run, got.student, got.assignment)
    release = answers.release_notebook(got.assignment)
    assert hostile.released_order(nb) == hostile.released_order(release), "the moved cell did not run where released"
    recorded = [line for line in printed(nb).splitlines() if line.startswith("RECORDED")]
    concrete = [line for line in recorded if not ABSTRACT.search(line)]
    assert recorded and not concrete, concrete[:3]
    assert got.score <= alone.score


@local
def test_recorded_call_values_are_only_tracers(local_run):
    got, alone = _got(local_run, "recorded_tracer_values")
    text = printed(autograded(local_run, got.student, got.assignment))
    recorded = [line for line in text.splitlines() if line.startswith("RECORDED")]
    assert len(recorded) > 10, f"the answer recorded too little to prove anything: {recorded}"
    concrete = [part for line in recorded for part in line.split(" | ") if part.startswith("CONCRETE")]
    assert all(ABSTRACT.search(line) for line in recorded), [line for line in recorded if not ABSTRACT.search(line)][:3]
    # Reaching inside a tracer gives a jaxpr variable, or the one constant jax.grad itself seeds
    # the cotangent with (1.0): nothing of an input.
    inside = [part for part in concrete if not ABSTRACT.search(part) and part != "CONCRETE Literal(1.0)"]
    assert not inside, inside[:3]
    assert got.score == alone.score


@local
def test_programs_outside_test_cells_are_not_read_and_are_flagged(local_run):
    """Correct programs for every test, displayed by the answer cell: not a test cell's own
    output, so no test reads them; a person is asked to look (no blanket 0)."""
    got, alone = _got(local_run, "programs_outside_tests")
    assert got.score == alone.score and "tampering" in got.flags, (got.score, alone.score, got.flags)
    assert any(messages.programs_outside_tests() in note for note in got.notes), got.notes
    assert alone.flags == []


@local
def test_repeated_programs_in_a_test_cell_are_not_read(local_run):
    got, alone = _got(local_run, "programs_repeated")
    assert got.score <= alone.score and "tampering" in got.flags, (got.score, alone.score, got.flags)
    assert any(messages.programs_repeated("test_visible_value_grad") in note for note in got.notes), got.notes


@local
def test_an_artifact_from_a_wrong_function_scores_as_that_function(local_run):
    """The interface holds the reference, the test cells' outputs carry programs exported from
    the wrong function: the grade follows the programs, test by test."""
    got, alone = _got(local_run, "wrong_function_artifact")
    assert per_test_scores(local_run, got.student, got.assignment) == per_test_scores(
        local_run, alone.student, alone.assignment
    )
    assert got.score == alone.score < got.max_score and got.flags == [], (got.score, alone.score, got.flags)


@local
@pytest.mark.parametrize(
    "slug, refused, reason",
    [
        ("refused_op", {"test_hidden_random"}, "stablehlo.replica_id"),
        ("refused_custom_call", {"test_visible_value_grad", "test_visible_residuals"}, "xla_ffi_python_cpu_callback"),
    ],
)
def test_the_judge_refuses_a_hand_made_artifact(local_run, slug, refused, reason):
    """A program with an operation or a custom_call outside the allow-list: those tests score 0,
    the others keep their points, the submission is flagged and the refusal named."""
    got, reference = _got(local_run, slug)
    full = full_points(got.assignment)
    expected = {test: 0.0 if test in refused else points for test, points in full.items()}
    assert per_test_scores(local_run, got.student, got.assignment) == expected
    assert got.score == reference.max_score - sum(full[t] for t in refused)
    assert "tampering" in got.flags, got.flags
    assert any(note.startswith("评分程序没有运行") and reason in note for note in got.notes), got.notes


@local
def test_the_kernel_holds_no_key_and_no_hidden_input(local_run):
    """A correct answer that searches its kernel for the course's secret, its own key, every
    test's seed and every hidden input (by hash): its environment, every file it can read, every
    object the garbage collector reaches and, after the hidden tests, its whole writable memory.
    It finds nothing, and keeps full marks."""
    got = outcome(local_run, f"attack-{PROBE}", "residuals")
    drawn = student_key(local_run["out"], got.student, got.assignment)
    assert local_run["probe_key"] == drawn, "the probe looked for another key than the grader drew"
    text = printed(autograded(local_run, got.student, got.assignment))
    scans = dict(re.findall(r"^SCANNED (answer|end) (.*)$", text, re.MULTILINE))
    assert set(scans) == {"answer", "end"}, f"the probe did not finish: {text[-3000:]}"
    counts = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", scans["end"])}
    assert counts.get("environ", 0) > 3 and counts.get("files", 0) > 5 and counts.get("objects", 0) > 100_000, counts
    assert counts.get("memory_MiB", 0) > 50, f"the memory scan read too little: {counts}"
    assert "FOUND" not in text, [line for line in text.splitlines() if "FOUND" in line]
    assert (got.score, got.flags) == (got.max_score, []), (got.score, got.flags, got.notes)


def test_the_probe_would_find_what_it_looks_for():
    """The probe's search, run here on data holding a target: it is no blind scan."""
    code = BY_SLUG[PROBE].parts[0].split('scan_everything("answer")')[0]
    space = {}
    exec(compile(code, "<probe>", "exec"), space)
    secret = "ab" * 32
    array = np.random.default_rng(0).normal(size=64).astype(np.float32)
    space["TARGETS"].update({
        "text": [hashlib.sha256(secret.encode()).hexdigest()],
        "raw": [(int.from_bytes(array.tobytes()[:4], "little"), 16, hashlib.sha256(array.tobytes()[:16]).hexdigest())],
        "sizes": [64],
    })  # fmt: skip
    scan = space["_Scan"]("here")
    scan.text(b"xx " + secret.encode() + b" yy", "text")
    scan.raw(b"\1\2\3" + array.tobytes(), "bytes")
    assert len(scan.found) == 2, scan.found


@local
@pytest.mark.parametrize("student", sorted(HONEST))
def test_honest_python_keeps_full_marks_with_no_flag(local_run, student):
    got = outcome(local_run, student, HONEST[student][0])
    assert got.score == got.max_score and got.flags == [], (got.score, got.flags, got.notes)


@local
@pytest.mark.parametrize(
    "slug", ["custom_vjp_subclass", "shadow_residuals", "patch_allclose", "numeric_last_expression"]
)
def test_what_the_kernel_patches_changes_nothing(local_run, slug):
    """Look-alike rules, names redefined, libraries patched, nbgrader's partial credit from a
    number printed last: the score is its base's exactly."""
    got, alone = _got(local_run, slug)
    assert got.score == alone.score, (got.score, alone.score, got.notes)


@local
def test_a_custom_vjp_look_alike_scores_what_plain_autodiff_scores(local_run):
    """A subclass of jax.custom_vjp around plain autodiff: the tests export the rule's halves
    (there are none), so it scores what the answer without any rule scores."""
    got, alone = _got(local_run, "custom_vjp_subclass")
    assert "isinstance(sin2_save, jax.custom_vjp): True" in printed(autograded(local_run, got.student, got.assignment))
    assert got.score == alone.score < alone.max_score, (got.score, alone.score, got.notes)


@local
def test_the_honest_students_results_stay_as_they_were(local_run):
    assert local_run["after"] == local_run["before"], "other students' results or gradebook rows changed"
    before, after = local_run["protected"]
    assert after == before, "solutions/ or exercises/ changed"


@local
def test_every_student_has_a_row(local_run):
    rows = read_csv(local_run["out"])
    assert set(rows) == set(local_run["outcomes"]), "grades.csv must list every submission"
    header = (local_run["out"] / "grades.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header == "student_id,assignment,score,max_score,flags"


# —— the judge's allow-policy, in this process ——


def _exported(fun, *shapes, **options):
    import jax
    from jax import export

    specs = [jax.ShapeDtypeStruct(shape, np.float32) for shape in shapes]
    return export.export(jax.jit(fun), platforms=["cpu"], **options)(*specs)


def _sum_sin_sq(x):
    import jax.numpy as jnp

    return jnp.sum(jnp.sin(x) ** 2)


def _with_line(exported, line: str):
    """`exported` with one line added at the top of its main function (its MLIR text edited)."""
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir

    lines = exported.mlir_module().splitlines()
    main = next(i for i, text in enumerate(lines) if "func.func public @main" in text)
    lines.insert(main + 1, line)
    with mlir.make_ir_context():
        edited = mlir.module_to_bytecode(ir.Module.parse("\n".join(lines)))
    return dataclasses.replace(exported, mlir_module_serialized=edited)


def _calls_out(x):
    import jax
    import jax.numpy as jnp

    return jnp.sum(jax.ffi.ffi_call("xla_ffi_python_cpu_callback", jax.ShapeDtypeStruct(x.shape, x.dtype))(x))


def _disabled(target="xla_ffi_python_cpu_callback"):
    from jax import export

    return [export.DisabledSafetyCheck.custom_call(target)]


@pytest.mark.parametrize(
    "make, reason",
    [
        (
            lambda: _with_line(_exported(_sum_sin_sq, (8,)), "    %r = stablehlo.replica_id : tensor<ui32>"),
            "replica_id",
        ),
        (
            lambda: _with_line(_exported(_sum_sin_sq, (8,)), "    %t = stablehlo.after_all : !stablehlo.token"),
            "after_all",
        ),
        (lambda: _exported(_calls_out, (8,), disabled_checks=_disabled()), "安全检查"),
        (
            lambda: dataclasses.replace(
                _exported(_calls_out, (8,), disabled_checks=_disabled()), disabled_safety_checks=()
            ),
            "xla_ffi_python_cpu_callback",
        ),
    ],
    ids=["op replica_id", "op after_all", "disabled safety check", "custom_call to a callback"],
)
def test_judge_refuses_a_program_outside_its_policy(make, reason):
    data = bytes(make().serialize())
    with pytest.raises(ch4judge.Refused, match=reason):
        ch4judge.load(data)
    loaded, refusals = ch4judge.load_all({"f": {"program": base64.b64encode(data).decode()}})
    assert "f" not in loaded and len(refusals) == 1 and reason in refusals[0]


def _pure_callback(x):
    import jax
    import jax.numpy as jnp

    return jnp.sum(jax.pure_callback(lambda v: np.asarray(v) * 2, jax.ShapeDtypeStruct(x.shape, x.dtype), x))


def test_judge_loads_an_honest_program_and_a_callback_cannot_be_exported():
    program = ch4judge.load(bytes(_exported(_sum_sin_sq, (8,)).serialize()))
    assert np.isclose(float(program(np.ones(8, np.float32))), 8 * np.sin(1.0) ** 2, rtol=1e-5)
    with pytest.raises(Exception, match="custom calls"):
        _exported(_calls_out, (8,)).serialize()
    with pytest.raises(Exception, match="host_callbacks"):
        _exported(_pure_callback, (8,)).serialize()


# —— no verdict in any kernel, for every converted assignment ——


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_no_verdict_enters_a_graded_kernel(assignment):
    """What nbgrader runs in a graded kernel (`kernel_notebook`) holds no `seed_for`, no verdict
    marker and no line that only a hidden verdict has."""
    source = nbformat.read(course.notebook_path(course.SOLUTIONS, assignment), as_version=4)
    kernel = "\n".join(c.source for c in verdict.kernel_notebook(source).cells)
    assert "seed_for" not in kernel and VERDICT_MARKER not in kernel
    assert not [line for line in hidden_verdict_lines(assignment) if line in kernel]


# —— the distributed run: the attacks on the machine ——


@on_the_cluster
@pytest.mark.parametrize("attack", [a for a in CLUSTER], ids=[a.slug for a in CLUSTER])
def test_attack_reaches_nothing(cluster_run, attack):
    got = outcome(cluster_run, f"attack-{attack.slug}", attack.assignment)
    if not got.graded:
        assert got.score == 0 and got.notes, f"{attack.slug}: not graded, yet {got.score} points and notes {got.notes}"
        return
    text = printed(autograded(cluster_run, got.student, got.assignment))
    # Inside the sandbox the only writable places are its private /tmp and folder, gone afterwards.
    reached = [m.group(0) for m in FORBIDDEN_OUTPUT.finditer(text) if not m.group(0).startswith("WROTE /tmp")]
    assert not reached, f"{attack.claim}: the kernel reached {reached[:5]}"


@on_the_cluster
def test_attacks_change_nothing_outside(cluster_run):
    before, after = cluster_run["protected"]
    assert after == before, "solutions/ or exercises/ changed"
    assert cluster_run["after"] == cluster_run["before"], "other students' results or gradebook rows changed"
    submitted_before, submitted_after = cluster_run["submissions"]
    assert submitted_after == submitted_before, "grading changed the submitted folder"
    assert not planted_files(), f"an attack left files behind: {planted_files()}"
