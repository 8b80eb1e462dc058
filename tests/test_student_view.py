"""What a student sees while working (no grader involved): the test cells run in their own
namespace, export the student's functions and judge them right there through the judge's own
policy, and say ✅ when they pass. Any honest Python runs as written (nothing is scanned or
refused). A failure reads as its Chinese message alone, first under the cell; the traceback is
collapsed below it."""

import os
import re
import subprocess
import sys

import ch4judge
import ch4validate
import nbformat
import pytest
from helpers import HONEST_UNUSUAL
from nbclient import NotebookClient

from grader import REPO, course, nbtools
from grader.kernels import sandbox
from proof import answers

pytestmark = pytest.mark.xdist_group("student-view")


ASSIGNMENT = "residuals"


def run(answer: str, raw: dict | None = None, assignment: str = ASSIGNMENT):
    """{grade_id: the cell's outputs as text}; `raw`, if given, gets {grade_id: the outputs}."""
    nb = answers.with_answer(answers.release_notebook(assignment), answer)
    NotebookClient(
        nb, extra_arguments=course.KERNEL_ARGS, kernel_name="python3", allow_errors=True, timeout=120
    ).execute()
    outputs = {}
    for cell in nb.cells:
        if cell.cell_type == "code":
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            outputs[gid] = "\n".join(o.get("text", "") or f"{o.get('ename')}: {o.get('evalue')}" for o in cell.outputs)
            if raw is not None:
                raw[gid] = cell.outputs
    return outputs


@pytest.fixture(autouse=True)
def headless(monkeypatch):
    for key, value in nbtools.HEADLESS_ENV.items():
        monkeypatch.setenv(key, value)


VISIBLE = ("test_visible_value_grad", "test_visible_residuals")


def test_passing_tests_say_so():
    outputs = run(answers.reference_answer(ASSIGNMENT))
    for test in VISIBLE:
        assert f"✅ {test} 通过" in outputs[test], outputs[test]
    assert "隐藏测试：评分时才运行" in outputs["test_hidden_random"]
    assert outputs["answer"] == "", outputs["answer"]


def run_all(nb) -> dict:
    """Run All as JupyterLab does it: stop at an error, except in a cell tagged raises-exception
    (nbclient and JupyterLab both send stop_on_error=False for those). {grade_id or index: text}."""
    NotebookClient(nb, extra_arguments=course.KERNEL_ARGS, kernel_name="python3", timeout=300).execute()
    return {
        cell.metadata.get("nbgrader", {}).get("grade_id", index): "\n".join(
            o.get("text", "") or f"{o.get('ename')}: {o.get('evalue')}" for o in cell.outputs
        )
        for index, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
    }


def test_run_all_goes_on_past_a_failing_test_and_ends_with_a_summary():
    """safe_norm's wrong_single_where fails test_visible_zero alone: the test after it still runs and
    passes, and the last cell lists every visible test with its result and points, the message's
    first line for the failed one, and the hidden tests left for grading. A cell run after the tests
    (it may have changed the answer) makes their results out of date: a second summary says so."""
    wrong = next(e.answer for e in answers.entries("safe_norm") if e.slug == "single_where")
    nb = answers.with_answer(answers.release_notebook("safe_norm"), wrong)
    summary = nb.cells[-1]
    nb.cells += [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell(summary.source)]
    outputs = run_all(nb)
    assert "❌ test_visible_zero 未通过：" in outputs["test_visible_zero"]
    assert "✅ test_visible_check_grads 通过" in outputs["test_visible_check_grads"], (
        "the test after the failing one did not run"
    )
    message = outputs["test_visible_zero"].split("未通过：", 1)[1].splitlines()[0]
    assert outputs["summary"].splitlines() == [
        "📋 测试小结（每个测试单元格在本内核里最近一次运行的结果）：",
        "  ✅ test_visible_scales（可见测试 1，3 分）",
        f"  ❌ test_visible_zero（可见测试 2，2 分）：{message}",
        "  ✅ test_visible_check_grads（可见测试 3，2 分）",
        "可见测试：2 个通过（5 分），1 个未通过（2 分）。另有隐藏测试 2 个（7 分），评分时才运行。",
        "每个未通过的测试，完整的说明在它自己的单元格下面。",
    ], outputs["summary"]
    later = outputs[len(nb.cells) - 1].splitlines()
    assert later[1] == "  ✅ test_visible_scales（可见测试 1，3 分）（之后运行过别的单元格，结果可能已过时）", later
    assert later[-1] == "有的结果可能已过时：改过作答区之后，请从头运行全部单元格。", later


def test_run_all_on_a_blank_answer_runs_every_test_and_says_the_missing_name_once():
    """The blank release: the answer cell raises NotImplementedError, Run All goes on (the answer
    cell is tagged too), every visible test fails for the missing name, the summary says it once."""
    outputs = run_all(answers.release_notebook("safe_norm"))
    assert outputs["answer"].startswith("NotImplementedError"), outputs["answer"]
    lines = outputs["summary"].splitlines()
    failed = [line for line in lines if line.startswith("  ❌")]
    assert len(failed) == 3 and "没有找到 safe_norm" in failed[0], lines
    assert all(line.endswith("：同上") for line in failed[1:]), lines
    total = "可见测试：0 个通过（0 分），3 个未通过（7 分）。另有隐藏测试 2 个（7 分），评分时才运行。"
    assert lines[-2] == total, lines


UNUSUAL = HONEST_UNUSUAL + (
    '\n\nprint("作答区运行了", os.getcwd() != "", Registry.kinds, describe({"kind": "save"}),'
    ' getattr(jax, "_src") is not None)\n'
)


def test_honest_python_the_old_rules_refused_runs_as_written():
    outputs = run(answers.reference_answer(ASSIGNMENT) + UNUSUAL)
    assert outputs["answer"] == "作答区运行了 True ['Save'] save True\n", outputs["answer"]
    for test in VISIBLE:
        assert f"✅ {test} 通过" in outputs[test], outputs[test]


def test_redefined_test_names_do_not_reach_the_tests():
    """A wrong answer that redefines the kit's names (and isinstance) still meets the real tests."""
    wrong = next(e for e in answers.entries(ASSIGNMENT) if e.slug == "recompute_saves_sin2x").answer
    forger = """


class _Passes(dict):
    def __getitem__(self, name):
        return lambda *args: True

    def __contains__(self, name):
        return True


def programs(*args, **kwargs):
    return _Passes()


def check_close(*args, **kwargs):
    return None


def attempt(compute, *args, **kwargs):
    return True


def isinstance(*args):
    return True


export = export_split = seed_for = sizes_for = programs
"""
    outputs = run(wrong + forger)
    assert "✅ test_visible_value_grad 通过" in outputs["test_visible_value_grad"]  # its values are right
    assert "TestFailed: ❌ test_visible_residuals 未通过" in outputs["test_visible_residuals"], outputs[
        "test_visible_residuals"
    ]


CJK = re.compile(r"[\u4e00-\u9fff]")


def shown_first(outputs) -> tuple[str, str]:
    """(what a failed cell's error output shows, the collapsed traceback below it)."""
    errors = [o for o in outputs if o.output_type == "error"]
    assert len(errors) == 1, f"expected one error output, got {[o.output_type for o in outputs]}"
    after = outputs[outputs.index(errors[0]) + 1 :]
    collapsed = "".join(o.get("data", {}).get("text/html", "") for o in after)
    return "\n".join(errors[0].traceback), collapsed


# A Python `if` on an array in the forward rule, what a graded call runs: sin2_recompute cannot be
# traced, so no test can export it.
UNTRACEABLE = """


@jax.custom_vjp
def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _untraceable_fwd(x):
    if jnp.sum(x) > 1e9:
        return jnp.zeros(()), x
    return jnp.sum(jnp.sin(x) ** 2), x


sin2_recompute.defvjp(_untraceable_fwd, lambda x, g: (g * jnp.sin(2.0 * x),))
"""


def test_a_failure_shows_the_verdict_alone_and_the_traceback_collapsed():
    """wrong_recompute_saves_sin2x fails test_visible_residuals; a function that cannot be traced
    fails the tests that export it, saying so. Each error output is the Chinese message itself."""
    wrong = next(e for e in answers.entries(ASSIGNMENT) if e.slug == "recompute_saves_sin2x").answer
    raw: dict = {}
    run(wrong, raw)
    untraceable: dict = {}
    run(answers.reference_answer(ASSIGNMENT) + UNTRACEABLE, untraceable)
    cases = [
        (
            raw["test_visible_residuals"],
            "❌ test_visible_residuals 未通过：n = 64 时 sin2_recompute 保存的残差不正好是 x 本身",
        ),
        (untraceable["test_visible_value_grad"], "❌ test_visible_value_grad 未通过：导出 sin2_recompute 时出错"),
    ]
    for outputs, first_line in cases:
        shown, collapsed = shown_first(outputs)
        assert shown.startswith(first_line) and CJK.search(shown.splitlines()[0]), f"shown first:\n{shown}"
        for kit_detail in ("Traceback", "run_cell_magic", "ch4check", "ch4judge", "Could not get source"):
            assert kit_detail not in shown, f"the error output shows {kit_detail!r}:\n{shown}"
        assert collapsed.startswith("<details>") and "Traceback" in collapsed, f"no collapsed traceback:\n{shown}"
        assert "Could not get source" not in collapsed, "the test body has no source"
    shown = shown_first(untraceable["test_visible_value_grad"])[0]
    assert "TracerBoolConversionError" in shown and ch4judge.EXPORT_HINT in shown, shown


def test_make_check_prints_each_message_whole_and_no_kernel_warning(tmp_path):
    """`make check` is `python -m ch4validate`: wrong_grad_approx_large_x fails test_visible_jit_vmap
    with a message that shows eleven values; all of it is printed, and nothing from the kernel."""
    wrong = next(e for e in answers.entries("softplus") if e.slug == "grad_approx_large_x").answer
    path = tmp_path / "softplus.ipynb"
    nbformat.write(answers.with_answer(answers.release_notebook("softplus"), wrong), path)
    done = check(tmp_path, path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert not done.stderr.strip(), f"the terminal got more than the verdicts:\n{done.stderr}"
    lines = done.stdout.splitlines()
    first = next((i for i, line in enumerate(lines) if "❌ test_visible_jit_vmap 未通过：" in line), None)
    assert first is not None and "（得到 [" in lines[first], done.stdout
    assert any(line.rstrip().endswith("]）。") for line in lines[first : first + 6]), f"cut short:\n{done.stdout}"


def check(cache_home, *paths):
    """`make check` on `paths`, its compilation cache under `cache_home`."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    command = [sys.executable, "-m", "ch4validate", *map(str, paths)]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)


def test_make_check_runs_side_by_side_and_a_warm_cache_changes_no_verdict(tmp_path):
    """Two notebooks, a wrong answer and the reference, checked together twice: the first run fills
    the student's compilation cache, the second loads from it, and both print the same verdicts
    in the order the notebooks were given."""
    wrong = next(e for e in answers.entries("softplus") if e.slug == "grad_approx_large_x").answer
    paths = [tmp_path / "wrong" / "softplus.ipynb", tmp_path / "right" / "softplus.ipynb"]
    for path, answer in zip(paths, (wrong, answers.reference_answer("softplus")), strict=True):
        path.parent.mkdir()
        nbformat.write(answers.with_answer(answers.release_notebook("softplus"), answer), path)
    cold = check(tmp_path / "cache", *paths)
    cached = list((tmp_path / "cache" / "ch4-autodiff" / "jax").iterdir())
    assert cached, "the first check kept no compiled program"
    warm = check(tmp_path / "cache", *paths)
    assert cold.returncode == warm.returncode == 1, cold.stdout + warm.stdout
    # the progress lines ("   … ") say how long each run took, which depends on the machine's load
    said = [[line for line in done.stdout.splitlines() if not line.startswith("   … ")] for done in (cold, warm)]
    assert said[0] == said[1], f"a warm cache changed what the student reads:\n{cold.stdout}\n{warm.stdout}"
    results = [line for line in cold.stdout.splitlines() if line.startswith(("✅", "❌"))]
    assert results[0].startswith(f"❌ {paths[0]}") and results[1] == f"✅ {paths[1]}：可见测试全部通过", cold.stdout


def test_make_check_runs_one_by_one_where_there_is_no_fork(monkeypatch, tmp_path, capsys):
    """Students on macOS and Windows use make check too: no process pool there, the same report."""
    paths = [tmp_path / f"{name}.ipynb" for name in ("a", "b")]
    for path in paths:
        path.write_text("{}")
    monkeypatch.setattr(ch4validate.sys, "platform", "darwin")
    monkeypatch.setattr(ch4validate.multiprocessing, "get_context", lambda *_: pytest.fail("a process pool"))
    monkeypatch.setattr(ch4validate, "check", lambda path: [] if path.stem == "a" else ["说明"])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert ch4validate.main([str(p) for p in paths]) == 1
    results = [line for line in capsys.readouterr().out.splitlines() if line.startswith(("✅", "❌"))]
    assert results == [f"✅ {paths[0]}：可见测试全部通过", f"❌ {paths[1]}：1 处未通过"]


def test_graded_kernels_get_no_compilation_cache():
    """The cache is the student's own convenience: a graded kernel's environment is built from an
    allow-list that does not pass it on, whatever the grading machine's environment says."""
    env = sandbox.kernel_env({**os.environ, **ch4validate.compile_cache()})
    assert not [key for key in env if "CACHE" in key], env


def test_a_make_check_kernel_forked_from_the_preloaded_server_behaves_as_a_cold_one(tmp_path, monkeypatch):
    """`make check` forks its kernels from a server that imported ipykernel and JAX once
    (kit/ch4fork.py). Such a kernel is a process of its own, in the notebook's folder, imports the
    student's module from there, draws its own random numbers, and gives the verdicts a cold
    kernel gives."""
    import ch4fork

    assert ch4fork.available()
    (tmp_path / "helper.py").write_text("VALUE = 41\n")
    probe = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import os, sys, numpy, helper\n"
        "print(os.getcwd(), os.getpid(), helper.VALUE + 1, numpy.random.rand(), 'jax' in sys.modules, os.getppid())"
    )])  # fmt: skip

    def probed(manager):
        nb = nbformat.from_dict(probe)
        options = {"kernel_manager_class": manager} if manager else {}
        NotebookClient(nb, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}, **options).execute()
        return nb.cells[0].outputs[0]["text"].split()

    first, second, cold = probed(ch4fork.ForkKernelManager), probed(ch4fork.ForkKernelManager), probed(None)
    assert first[0] == second[0] == cold[0] == str(tmp_path), (first, cold)
    assert first[2] == second[2] == "42" and first[4] == second[4] == "True", first
    assert len({first[1], second[1], str(os.getpid())}) == 3, "the kernels are not processes of their own"
    assert first[3] != second[3], "two forked kernels drew the same random numbers"
    assert first[5] == second[5] == str(ch4fork.ForkServer._process.pid) != cold[5], "not forked from the server"

    wrong = next(e for e in answers.entries("softplus") if e.slug == "grad_approx_large_x").answer
    path = tmp_path / "softplus.ipynb"
    nbformat.write(answers.with_answer(answers.release_notebook("softplus"), wrong), path)
    forked = ch4validate.check(path)
    monkeypatch.setattr(ch4fork, "available", lambda: False)
    assert forked and forked == ch4validate.check(path), forked


def test_make_check_says_once_what_a_blank_answer_is_missing(tmp_path):
    """Every test of a blank answer fails for the same reason: one line names every missing name."""
    path = tmp_path / "ode_adjoint.ipynb"
    nbformat.write(answers.release_notebook("ode_adjoint"), path)
    done = check(tmp_path, path)
    lines = [line for line in done.stdout.splitlines() if line.startswith("   · ")]
    assert done.returncode == 1 and len(lines) == 1, done.stdout
    names = ("N_STEPS", "odeint_unrolled", "odeint_adjoint")
    assert "还没有作答：没有找到" in lines[0] and all(name in lines[0] for name in names), lines[0]


def test_a_slow_check_says_which_test_it_is_running(capsys, monkeypatch):
    """Past SLOW seconds a notebook prints a line as each visible test starts (hidden tests are
    empty in the release and not counted); before that it stays quiet."""
    path = course.notebook_path(course.EXERCISES, "ode_adjoint")
    progress = ch4validate._Progress(path)
    progress.close()  # its thread would print too: here the clock is the test's
    cells = nbformat.read(path, as_version=4).cells
    tests = [c for c in cells if c.source.lstrip().startswith("%%ch4test")]
    progress.cell_started(tests[0], cells.index(tests[0]))
    assert capsys.readouterr().out == "", "quiet while it is quick"
    monkeypatch.setattr(progress, "start", progress.start - ch4validate.SLOW)
    for index, cell in enumerate(cells[cells.index(tests[0]) + 1 :], cells.index(tests[0]) + 1):
        progress.cell_started(cell, index)
        progress.cell_finished()
    shown = capsys.readouterr().out.splitlines()
    assert progress.total == 4 and [line.split("正在运行第 ")[1][:3] for line in shown] == ["2/4", "3/4", "4/4"], shown
    ids = [c.metadata["nbgrader"]["grade_id"] for c in tests[1:4]]
    assert [line.split(" 个测试 ")[1].split("（")[0] for line in shown] == ids, shown


def test_a_cell_that_runs_long_is_named_after_a_few_seconds_and_again_while_it_runs(capsys):
    """Whatever the notebook has said, a cell that runs SLOW seconds without a line is named (a test
    by its id, the answer cell as such), then named again every AGAIN seconds until it ends."""
    path = course.notebook_path(course.EXERCISES, "residuals")
    cells = nbformat.read(path, as_version=4).cells
    answer = next(i for i, c in enumerate(cells) if c.metadata.get("nbgrader", {}).get("solution"))
    test = next(i for i, c in enumerate(cells) if c.source.lstrip().startswith("%%ch4test") and i > answer)
    slow, again = ch4validate.SLOW, ch4validate.AGAIN
    for index, after in ((answer, (slow - 1, slow, slow + 1)), (test, (slow, slow + again - 1, slow + again))):
        progress = ch4validate._Progress(path)
        progress.close()  # its thread would print too: here the clock is the test's
        progress.cell_started(cells[index], index)
        start = progress.running[1]
        for seconds in after:
            progress.tick(start + seconds)
        progress.cell_finished()
        progress.tick(start + 1000)  # nothing runs: nothing to say
    grade_id = cells[test].metadata["nbgrader"]["grade_id"]
    assert capsys.readouterr().out.splitlines() == [
        f"   … residuals：正在运行作答区（已 {slow:.0f} 秒）",
        f"   … residuals：正在运行测试 {grade_id}（已 {slow:.0f} 秒）",
        f"   … residuals：仍在运行测试 {grade_id}（已 {slow + again:.0f} 秒；要停下，按 Ctrl+C）",
    ]


def test_ctrl_c_ends_make_check_with_one_line_and_no_kernel_left(tmp_path):
    """An endless loop in a visible test (while tracing, tests/fixtures/endless/residuals.py): make
    check names the test after SLOW seconds; Ctrl+C (SIGINT to the terminal's process group) ends it
    with one line, and nothing of it keeps running."""
    import signal
    import threading
    import time

    import psutil

    endless = (REPO / "tests" / "fixtures" / "endless" / "residuals.py").read_text(encoding="utf-8")
    paths = [tmp_path / "endless" / "residuals.ipynb", tmp_path / "blank" / "safe_norm.ipynb"]  # two: the pool too
    for path, nb in zip(paths, (answers.with_answer(answers.release_notebook("residuals"), endless),
                                answers.release_notebook("safe_norm")), strict=True):  # fmt: skip
        path.parent.mkdir()
        nbformat.write(nb, path)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}  # also marks every process of this check
    check = subprocess.Popen(
        [sys.executable, "-m", "ch4validate", *map(str, paths)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True,
    )  # fmt: skip
    shown, give_up = [], threading.Timer(300, os.killpg, (check.pid, signal.SIGKILL))
    give_up.start()  # should the line never come
    for line in check.stdout:  # until it names the test that does not end
        shown.append(line)
        if "正在运行测试 test_visible_residuals" in line:
            break
    give_up.cancel()
    os.killpg(check.pid, signal.SIGINT)  # what Ctrl+C sends: the whole foreground process group
    rest, errors = check.communicate(timeout=60)
    shown += rest.splitlines(keepends=True)
    assert check.returncode == 130 and shown[-1].strip() == ch4validate.STOPPED, "".join(shown)
    assert errors == "", errors
    assert "正在运行测试 test_visible_residuals（已 " in "".join(shown)

    def ours():
        found = []
        for process in psutil.process_iter():
            try:
                if process.environ().get("XDG_CACHE_HOME") == env["XDG_CACHE_HOME"]:
                    found.append(process)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass
        return found

    deadline = time.monotonic() + 30
    while ours() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not ours(), [p.cmdline() for p in ours()]
