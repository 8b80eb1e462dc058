"""The programs channel and the judge, piece by piece (no kernels here: the kit's export half runs
in this process, as a graded kernel runs it).

Every test cell of every exercise follows one convention (kit/ch4check.py): above the line
`# —— 判定 ——` it exports the student's functions with one `programs` call labelled with the
cell's own id, and names no input and no key; below it the verdict draws its inputs from
`seed_for` and judges. The grader relies on it: kernels run the cells cut at that line
(`verdict.kernel_source`), the programs leave as one cell output per test
(`verdict.read_programs`), and the judge (`python -m ch4judge`, in a sandbox of its own) runs
each whole cell on them with inputs only it can draw.
"""

import ast
import base64
import json
import os
import re
import subprocess
import sys
from types import SimpleNamespace

import ch4check
import ch4judge
import nbformat
import pytest
from ch4protocol import (
    GRADING_ENV,
    MIME,
    SIZES_ENV,
    VERDICT_MARKER,
    derive_seed,
    free_names,
    sizes_key,
    split_body,
    split_test_cell,
)

from grader import REPO, course, messages
from grader.judging import verdict
from grader.judging.verdict import HIDDEN_BEGIN, HIDDEN_END
from grader.kernels import sandbox
from proof import answers

TEST_CELLS = [
    (a, c.metadata["nbgrader"]["grade_id"], c.source)
    for a in course.ASSIGNMENTS
    for c in nbformat.read(course.notebook_path(course.SOLUTIONS, a), as_version=4).cells
    if verdict.is_test(c)
]


def _calls(tree, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == name]


@pytest.mark.parametrize("assignment,test,source", TEST_CELLS, ids=[f"{a}:{t}" for a, t, _ in TEST_CELLS])
def test_cell_follows_the_convention(assignment, test, source):
    assert source.splitlines()[0] == "%%ch4test", "a test cell starts with %%ch4test (its own namespace)"
    lines = [line.strip() for line in source.splitlines()]
    assert lines.count(VERDICT_MARKER) == 1, f"exactly one line {VERDICT_MARKER!r}"
    export_part, verdict_part = split_body(split_test_cell(source))
    kernel = verdict.kernel_source(split_test_cell(source))
    # the export: one `programs` call with the cell's own id, and nothing a kernel could learn from
    labels = [c.args[0].value for c in _calls(ast.parse(kernel), "programs") if isinstance(c.args[0], ast.Constant)]
    assert labels == [test] and len(_calls(ast.parse(kernel), "programs")) == 1, (
        f"exactly one programs(...) labelled {test!r} in the export part, got {labels}"
    )
    assert "programs" not in free_names(verdict_part), "the verdict part exports nothing"
    assert "seed_for" not in free_names(kernel) and "seed_for" not in kernel, "the kernel's part names seed_for"
    assert not re.search(r"\brandom\b|default_rng", kernel), "the kernel's part draws numbers"
    assert not [n for n in ast.walk(ast.parse(kernel)) if isinstance(n, ast.Assert)], "an assert runs in the kernel"
    # the verdict: inputs from the cell's own seed, never from an unseeded generator
    seeds = [c.args[0].value for c in _calls(ast.parse(verdict_part), "seed_for")]
    assert set(seeds) <= {test}, f"seeds drawn for another test: {seeds}"
    assert not re.search(r"default_rng\(\s*\)", source), "unseeded inputs: the judge could not reproduce them"
    if HIDDEN_BEGIN in source:  # the whole test, export and verdict, is inside the hidden block
        begin, end, marker = lines.index(HIDDEN_BEGIN), lines.index(HIDDEN_END), lines.index(VERDICT_MARKER)
        assert begin < marker < end and kernel.rstrip().endswith(HIDDEN_END)
        after = [line for line in lines[end + 1 :] if line and not line.startswith("#")]
        assert not after, f"code after the hidden block: {after}"


def test_kernel_source_cuts_exactly_the_verdict():
    body = "x = 1\n_p = programs('t', {})\n# —— 判定 ——\nassert seed_for('t')\n"
    assert verdict.kernel_source(body) == "x = 1\n_p = programs('t', {})"
    hidden = f"# c\n{HIDDEN_BEGIN}\n_p = programs('t', {{}})\n  {VERDICT_MARKER}  \nassert 0\n{HIDDEN_END}"
    assert verdict.kernel_source(hidden) == f"# c\n{HIDDEN_BEGIN}\n_p = programs('t', {{}})\n{HIDDEN_END}"
    for broken in ("_p = programs('t', {})", f"{VERDICT_MARKER}\na\n{VERDICT_MARKER}"):
        with pytest.raises(ValueError, match="exactly one line"):
            verdict.kernel_source(broken)
        with pytest.raises(ValueError, match="exactly one line"):
            split_body(broken)


def test_seeds_differ_by_secret_and_test():
    assert derive_seed("s", "t1") == derive_seed("s", "t1")
    assert len({derive_seed("s", "t1"), derive_seed("s", "t2"), derive_seed("r", "t1")}) == 3


def test_a_students_kernel_has_no_key_to_draw_from():
    """While a student works, `seed_for` is fresh randomness each call: no key, nothing to learn."""
    assert len({ch4check.seed_for("test_hidden_random") for _ in range(4)}) == 4
    assert not [name for name in vars(ch4check) if "secret" in name.lower() or name == "derive_seed"]


# ---------------------------------------------------------------------------------------------
# read_programs: only a test cell's own single, well-formed payload counts


def _notebook(*cells):
    nb = nbformat.v4.new_notebook()
    for grade_id, outputs in cells:
        cell = nbformat.v4.new_code_cell("pass", outputs=outputs)
        if grade_id:
            cell.metadata["nbgrader"] = {"grade": True, "grade_id": grade_id, "points": 1}
        nb.cells.append(cell)
    return nb


PROGRAM = base64.b64encode(b"a program").decode()


def _out(payload, kind="display_data"):
    data = {MIME: payload, "text/plain": "🔒"}
    if kind == "execute_result":
        return nbformat.v4.new_output(kind, data=data, execution_count=1)
    return nbformat.v4.new_output(kind, data=data)


def _payload(test, **programs):
    return _out({"test": test, "programs": programs or {"f": {"program": PROGRAM}}})


def test_programs_are_read_only_from_their_own_test_cell():
    error = {"g": {"error": "NameError: name 'g' is not defined"}}
    result = _out({"test": "t3", "programs": error}, "execute_result")
    nb = _notebook(("t1", [_payload("t1")]), ("t2", []), ("t3", [result]))
    found, anomalies = verdict.read_programs(nb)
    assert found == {"t1": {"f": {"program": PROGRAM}}, "t3": error} and not anomalies  # t2 never got there


MALFORMED = {
    "not a dict": "programs",
    "no programs": {"test": "t1"},
    "programs a list": {"test": "t1", "programs": [PROGRAM]},
    "item not a dict": {"test": "t1", "programs": {"f": PROGRAM}},
    "two kinds": {"test": "t1", "programs": {"f": {"program": PROGRAM, "error": "x"}}},
    "unknown kind": {"test": "t1", "programs": {"f": {"evidence": PROGRAM}}},
    "not text": {"test": "t1", "programs": {"f": {"program": 7}}},
    "not base64": {"test": "t1", "programs": {"f": {"program": "not base64!"}}},
    "no label": {"programs": {"f": {"program": PROGRAM}}},
}


@pytest.mark.parametrize(
    "cells,anomaly",
    [
        ([(None, [_payload("t1")]), ("t1", [])], messages.programs_outside_tests()),
        ([("t1", [_payload("t1"), _payload("t1")])], messages.programs_repeated("t1")),
        ([("t1", [_payload("t2")]), ("t2", [])], messages.programs_malformed("t1")),
        *[([("t1", [_out(payload)])], messages.programs_malformed("t1")) for payload in MALFORMED.values()],
    ],
    ids=["outside a test cell", "twice", "labelled with another test", *[f"malformed: {k}" for k in MALFORMED]],
)
def test_misplaced_or_malformed_programs_are_an_anomaly_and_not_read(cells, anomaly):
    found, anomalies = verdict.read_programs(_notebook(*cells))
    assert found == {} and anomalies == [anomaly]


def test_programs_beyond_the_size_cap_are_not_read(monkeypatch):
    monkeypatch.setattr(verdict, "MAX_PAYLOAD_CHARS", 100)
    nb = _notebook(("t1", [_payload("t1")]), ("t2", [_payload("t2", f={"program": PROGRAM * 10})]))
    found, anomalies = verdict.read_programs(nb)
    assert set(found) == {"t1"} and anomalies == [messages.programs_malformed("t2")]


# ---------------------------------------------------------------------------------------------
# The judge, on programs the kit exported here as a graded kernel exports them

ASSIGNMENT = "residuals"
WRONG = "recompute_saves_sin2x"  # fails the two residual tests only


def kernel_payloads(assignment: str, answer: str) -> dict[str, dict]:
    """{test: the payload its cell leaves}: the kernel version of the source notebook with
    `answer`, its cells run in this process the way a graded kernel runs them (CH4_GRADING=1, the
    sizes key of the secret "key" the judge is given below, the setup cell and `%%ch4test` through
    the kit, outputs caught where IPython would show them)."""
    nb = verdict.kernel_notebook(answers.with_answer(verdict._source(assignment), answer))
    user, shown = {}, []
    events = SimpleNamespace(callbacks={"pre_run_cell": []}, register=lambda *a: None)
    shell = SimpleNamespace(
        user_ns=user, register_magic_function=lambda *a, **k: None, set_custom_exc=lambda *a: None, events=events
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(GRADING_ENV, "1")
        patch.setenv(SIZES_ENV, sizes_key("key"))
        patch.setattr("IPython.get_ipython", lambda: shell)
        patch.setattr("IPython.display.display", lambda data, raw: shown.append(data))
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            if verdict.is_test(cell):
                ch4check._ch4test("", split_test_cell(cell.source))
            else:
                exec(compile(cell.source, "<cell>", "exec"), user)
    return {data[MIME]["test"]: data[MIME] for data in shown}


@pytest.fixture(scope="module")
def exported():
    """The reference's and a wrong answer's payloads, and how the judge scores each."""
    reference = kernel_payloads(ASSIGNMENT, answers.reference_answer(ASSIGNMENT))
    wrong_answer = next(e for e in answers.entries(ASSIGNMENT) if e.slug == WRONG).answer
    wrong = kernel_payloads(ASSIGNMENT, wrong_answer)
    judged = {}
    for name, payloads in (("reference", reference), ("wrong", wrong)):
        results, refusals = verdict.judge(ASSIGNMENT, {t: p["programs"] for t, p in payloads.items()}, "key")
        assert not refusals, refusals
        judged[name] = {r.test: r for r in results}
    return SimpleNamespace(reference=reference, wrong=wrong, judged=judged)


def test_the_reference_exports_every_test_and_the_judge_gives_full_marks(exported):
    tests = [test for _, test, _ in [t for t in TEST_CELLS if t[0] == ASSIGNMENT]]
    assert list(exported.reference) == tests, "every test cell, hidden ones included, exports in order"
    programs = [item for payload in exported.reference.values() for item in payload["programs"].values()]
    assert programs and all(set(item) in ({"program"}, {"program", "backward"}) for item in programs)
    assert all(r.passed and r.points == r.max_points for r in exported.judged["reference"].values())


def test_judges_sharing_a_cache_folder_judge_as_judges_without_one(exported, tmp_path):
    """The grader's judges keep XLA's compiled programs in a folder per grading process
    (kit/ch4judge.keep_compiled_programs): sandboxed judges, as user nobody, write it, and their
    verdicts on the right answer and on a wrong one, judged twice each, are those of a judge
    without it."""
    cache = verdict.new_cache(tmp_path)
    for name, payloads in (("reference", exported.reference), ("wrong", exported.wrong)):
        programs = {t: p["programs"] for t, p in payloads.items()}
        twice = [verdict.judge(ASSIGNMENT, programs, "key", cache=cache) for _ in range(2)]
        assert twice == [(list(exported.judged[name].values()), [])] * 2, name
    assert len(list(cache.iterdir())) > 5, "the judges wrote no compiled programs"


LOAD_TWICE = """
import io, json, sys
import ch4judge
import ch4programs
from jax._src import monitoring
counts = {}
monitoring.register_event_listener(lambda event, **_: counts.__setitem__(event, counts.get(event, 0) + 1))
job = json.load(sys.stdin)
ch4judge.judge(job, out=io.StringIO())
first = dict(counts)
ch4programs._loaded.clear()
ch4judge.jax.clear_caches()  # only the folder is left to remember the programs
ch4judge.judge(job, out=io.StringIO())
second = {k.rsplit("/", 1)[-1]: counts.get(k, 0) - first.get(k, 0) for k in counts if "compilation_cache" in k}
print(json.dumps(second))
"""


def test_a_second_judge_loads_every_program_from_the_cache_folder(exported, tmp_path):
    """What makes the folder worth having: a judge that finds a program there loads it instead of
    compiling it. Two judges in one process, its in-memory caches emptied between them."""
    programs = {t: p["programs"] for t, p in exported.reference.items()}
    job = {"secret": "key", "cache": str(tmp_path), "tests": verdict.test_cells(ASSIGNMENT), "programs": programs}
    env = {**os.environ, "PYTHONPATH": str(sandbox.KIT), "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, "-c", LOAD_TWICE], input=json.dumps(job), capture_output=True, text=True,
                          env=env, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    second = json.loads(done.stdout.splitlines()[-1])
    assert second.get("cache_hits", 0) > 5 and second.get("cache_misses", 0) == 0, second


def test_a_wrong_answers_programs_score_as_that_wrong_answer(exported):
    failed = {t for t, r in exported.judged["wrong"].items() if not r.passed}
    assert failed == {"test_visible_residuals", "test_hidden_residuals"}, failed
    message = exported.judged["wrong"]["test_visible_residuals"].message
    assert "sin2_recompute 保存的残差不正好是 x 本身" in message, message


def test_a_forged_payload_for_one_test_raises_no_other(exported):
    """Programs that pass the residual tests (the reference's) sit in the notebook three times:
    inside test_visible_value_grad's own payload under the names the residual tests read, in a cell
    that is not a test, and in another test's cell under their own label; test_hidden_cotangent's
    cell carries the reference's payload beside its own. None of it reaches another test: each
    test scores at most what the wrong answer's own programs score, and the anomalies say where
    the stray payloads were."""
    ref, wrong = exported.reference, exported.wrong
    vehicle = "test_visible_value_grad"
    smuggled = {"test": vehicle, "programs": dict(wrong[vehicle]["programs"])}
    for test, payload in ref.items():  # under the names the other tests read them by (beside its own)
        if test != vehicle:
            for name, program in payload["programs"].items():
                smuggled["programs"].setdefault(name, program)
    cells = {
        vehicle: [_out(smuggled)],
        "test_visible_residuals": [_out(wrong["test_visible_residuals"])],
        "test_hidden_random": [_out(wrong["test_hidden_random"])],
        "test_hidden_cotangent": [_out(wrong["test_hidden_cotangent"]), _out(ref["test_hidden_cotangent"])],
        "test_hidden_residuals": [_out(ref["test_visible_residuals"])],  # labelled test_visible_residuals
    }
    nb = _notebook((None, [_out(ref["test_visible_residuals"]), _out(ref["test_hidden_residuals"])]), *cells.items())
    found, anomalies = verdict.read_programs(nb)
    assert sorted(anomalies) == sorted([
        messages.programs_outside_tests(),
        messages.programs_repeated("test_hidden_cotangent"),
        messages.programs_malformed("test_hidden_residuals"),
    ])  # fmt: skip
    results, refusals = verdict.judge(ASSIGNMENT, found, "key")
    assert not refusals
    got = {r.test: r for r in results}
    baseline = exported.judged["wrong"]
    raised = [t for t in got if got[t].points > baseline[t].points]
    assert not raised, f"forged programs raised {raised}"
    assert not got["test_visible_residuals"].passed and not got["test_hidden_residuals"].passed
    assert got["test_visible_residuals"].message == baseline["test_visible_residuals"].message
    assert got[vehicle].passed, "the smuggled programs did not stop the test they rode in"
    assert got["test_hidden_residuals"].message == ch4judge.NO_PROGRAM  # its cell's payload was not its own


def test_the_judge_fails_every_test_without_programs():
    results, refusals = verdict.judge(ASSIGNMENT, {}, "key")
    assert results and not refusals and all(r.points == 0 and not r.passed for r in results)
    assert all(ch4judge.NO_PROGRAM in r.message for r in results), [r.message for r in results]


def test_a_refused_program_fails_its_test_and_is_reported(exported):
    programs = {t: dict(p["programs"]) for t, p in exported.reference.items()}
    programs["test_visible_value_grad"]["sin2_save"] = {"program": base64.b64encode(b"forged").decode()}
    results, refusals = verdict.judge(ASSIGNMENT, programs, "key")
    assert [r.test for r in results if not r.passed] == ["test_visible_value_grad"]
    assert len(refusals) == 1 and refusals[0].startswith("sin2_save：程序无法反序列化"), refusals


# The judge is a process of its own: probe it with test cells of this module's making.

PROBE = f"""_p = programs("probe", {{"f": lambda: 1 / 0}})
{VERDICT_MARKER}
import json, os, socket
assert False, json.dumps({{
    "pid": os.getpid(), "uid": os.getuid(), "seed": seed_for("probe"), "env": dict(os.environ),
    "net": [name for _, name in socket.if_nameindex()], "solutions": os.path.exists({str(course.SOLUTIONS)!r}),
    "repo": sorted(os.listdir({str(REPO)!r})), "exported": "f" in _p, "reason": _p.reason("f"),
}})
"""


def _probe_cells(*bodies, hidden=False):
    return lambda assignment: [{"id": test, "points": 1.0, "body": body, "hidden": hidden} for test, body in bodies]


def test_verdicts_run_in_a_sandbox_of_their_own_on_inputs_only_the_judge_draws(monkeypatch):
    assert sandbox.probe() is None, f"no sandbox here: {sandbox.probe()}"
    monkeypatch.setenv("CH4_TEST_SECRET", "grader-only")
    monkeypatch.setattr(verdict, "test_cells", _probe_cells(("probe", PROBE)))
    [result], refusals = verdict.judge(ASSIGNMENT, {"probe": {"f": {"error": "ValueError: x"}}}, "the-key")
    facts = json.loads(result.message)
    assert facts["seed"] == derive_seed("the-key", "probe"), "the judge draws inputs from the key it was handed"
    assert facts["pid"] != os.getpid() and facts["uid"] == sandbox.NOBODY, facts
    assert facts["net"] == ["lo"] and not facts["solutions"], facts
    assert set(facts["repo"]) <= {"kit", ".venv"}, f"the judge sees the repository: {facts['repo']}"  # read-only mounts
    assert "CH4_TEST_SECRET" not in facts["env"] and "the-key" not in json.dumps(facts["env"]), facts["env"]
    assert GRADING_ENV not in facts["env"]
    # the judge exports nothing: the program is what the kernel sent (here: its export's error)
    assert not facts["exported"] and facts["reason"] == "ValueError: x" and not refusals


def test_each_verdict_that_hangs_is_cut_off_at_its_limit_and_the_others_are_judged(monkeypatch):
    """Each hanging verdict costs its own limit and its own points, however many there are: the judge
    is started again after each, on the tests after it (three rounds at most, once: the last test
    was never judged)."""

    def cell(test, verdict_part):
        return test, f"_p = programs({test!r}, {{}})\n{VERDICT_MARKER}\n{verdict_part}\n"

    hangs = ["slow1", "slow2", "slow3"]
    cells = [cell("first", "assert seed_for('first') > 0"), *(cell(t, "while True:\n    pass") for t in hangs)]
    monkeypatch.setattr(verdict, "test_cells", _probe_cells(*cells, cell("last", "pass")))
    results, _ = verdict.judge(ASSIGNMENT, {}, "key", timeout=3)  # below the course's limit: 3 s of CPU each
    assert [(r.test, r.passed) for r in results] == [("first", True), *((t, False) for t in hangs), ("last", True)]
    assert [r.message for r in results[1:-1]] == [messages.test_timed_out(t, 3) for t in hangs]
    assert course.time_limit(ASSIGNMENT, "slow1").verdict > 3, "the limit the test relies on is not the smaller one"


def test_a_verdict_slowed_by_a_busy_machine_is_not_cut_off(monkeypatch):
    """The limit is the judge's CPU, not the clock: a verdict that takes longer than it in wall
    time without computing (as on a machine busy with other work) is judged; a hang that computes
    is cut off (above)."""
    cell = f"_p = programs('waits', {{}})\n{VERDICT_MARKER}\nimport time\ntime.sleep(8)\n"
    monkeypatch.setattr(verdict, "test_cells", _probe_cells(("waits", cell)))
    [result], _ = verdict.judge(ASSIGNMENT, {}, "key", timeout=4)
    assert result.passed, result.message


def _run_python(*args: str, stdin: str = "") -> str:
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    done = subprocess.run(
        [sys.executable, *args], input=stdin, capture_output=True, text=True, cwd=REPO, env=env, timeout=300
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_verdicts_still_fail_under_python_O():
    """`python -O` strips assert statements, and the verdicts are asserts: test bodies are
    compiled with optimize=0, so a failing test fails under any interpreter flag. Here the plain
    `assert` of ode_adjoint's test_interface decides: its program failed to export."""
    assert _run_python("-O", "-c", "assert False\nprint('stripped')") == "stripped"  # -O really strips
    test = next(t for t in verdict.test_cells("ode_adjoint") if t["id"] == "test_interface")
    error = {"error": "TypeError: not a number"}
    job = json.dumps({"secret": "s", "tests": [test], "programs": {test["id"]: {"constants": error}}})
    for flags in (["-O"], ["-OO"]):
        line = json.loads(_run_python(*flags, "-m", "ch4judge", stdin=job))
        assert line["test"] == "test_interface" and line["passed"] is False, (flags, line)
        assert "应是实数" in line["message"], line["message"]
