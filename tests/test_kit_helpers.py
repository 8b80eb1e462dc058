"""The kit's test helpers (`ch4check.TEST_HELPERS`), each way round, and the guard that keeps
their copies out of the test cells: a cell reads input → call → check, the harness is the kit's."""

import ast
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import nbformat
import numpy as np
import pytest
from ch4check import (
    TEST_HELPERS,
    TRUSTED,
    attempt,
    check_close,
    check_no_error,
    free_names,
    grads_error,
    missing_name,
    run_each,
    saved_residuals,
    split_test_cell,
)
from ch4check import test_namespace as namespace_of  # a test_* name would be collected

from grader import course, hostile, verdict


def _boom():
    raise ValueError("boom\nsecond line")


# Evidence helpers: they run in the student's kernel and never raise


def test_run_each_keeps_each_result_and_each_error_apart():
    out = run_each([("ok", lambda: jnp.arange(3, dtype=jnp.float32)), ("bad", _boom)])
    assert out["ok"].dtype == np.float64 and np.array_equal(out["ok"], [0.0, 1.0, 2.0]) and out["ok_error"] is None
    assert out["bad"] is None and out["bad_error"] == "ValueError: boom"


def test_attempt_returns_the_case_or_its_error():
    assert attempt(lambda: {"y": 1.5}) == {"y": 1.5, "error": None}
    assert attempt(_boom) == {"error": "ValueError: boom"}
    assert attempt(lambda: [1.0])["error"].startswith("TypeError")  # a case is a dict of evidence


def _sin_with_jvp(factor):
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return jnp.sin(x), factor * jnp.cos(x) * t

    return f


def test_grads_error_is_none_for_a_right_rule_and_the_numbers_for_a_wrong_one():
    x = (jnp.array([0.3, 0.5]),)
    assert grads_error(_sin_with_jvp(1.0), x, order=1, modes=["fwd", "rev"]) is None
    error = grads_error(_sin_with_jvp(2.0), x, order=1, modes=["fwd"])
    assert error.startswith("AssertionError") and "Mismatch" in error  # more than the (empty) first line
    assert grads_error(lambda v: _boom(), x, order=1).startswith("ValueError: boom")


def test_saved_residuals_counts_array_elements_and_scalars_as_one():
    @jax.custom_vjp
    def g(x):
        return jnp.sum(x**2)

    g.defvjp(lambda x: (jnp.sum(x**2), (jnp.sin(x), jnp.sum(x))), lambda r, ct: (2 * r[0] * ct,))
    assert saved_residuals(g, jnp.ones(64)) == 64 + 1
    assert saved_residuals(lambda x: jnp.sum(x), jnp.ones((3, 4))) == 0


# Verdict helpers: they raise AssertionError with the course's message


def test_missing_name_says_which_and_what_to_do():
    assert missing_name("safe_norm") == "没有找到 safe_norm：请在作答区定义它，并先运行作答区。"
    assert missing_name("a", "b") == "没有找到 a、b：请在作答区定义它们，并先运行作答区。"


def test_check_no_error_passes_none_and_names_the_step_the_error_and_the_hint():
    check_no_error(None, "调用 f")
    with pytest.raises(AssertionError) as failed:
        check_no_error("NameError: name 'f' is not defined", "调用 f", "先运行作答区。")
    assert str(failed.value) == "调用 f 出错（NameError: name 'f' is not defined）：先运行作答区。"
    with pytest.raises(AssertionError) as failed:
        check_no_error("ValueError: x", "在 jit 下求梯度时")
    assert str(failed.value) == "在 jit 下求梯度时出错（ValueError: x）。"  # no space between Chinese characters


def test_check_close_passes_within_numpys_tolerances_only():
    check_close([1.0, 2.0], np.array([1.0, 2.0]) * (1 + 0.9e-5), "值")  # NumPy's defaults: rtol 1e-5
    with pytest.raises(AssertionError):
        check_close([1.0, 2.0], np.array([1.0, 2.0]) * (1 + 1.1e-5), "值")
    check_close(0.0, 0.9e-6, "值", atol=1e-6)
    with pytest.raises(AssertionError):
        check_close(0.0, 1.1e-6, "值", atol=1e-6)


@pytest.mark.parametrize(
    "got,want,kwargs,message",
    [
        (np.zeros(3), np.zeros(4), {}, "jvp 的形状是 (3,)，应为 (4,)。"),
        (np.ones(2), np.zeros(2), {"hint": "应为 0。"}, "jvp 不对（得到 [1. 1.]）：应为 0。"),
        (np.ones(30), np.zeros(30), {}, "jvp 不对。"),  # a long result is not printed
        ([np.nan, 0.0], [0.0, 0.0], {"finite": "不能 0/0。"}, "jvp 出现了 nan/inf（得到 [nan  0.]）：不能 0/0。"),
        ([np.inf, 0.0], [0.0, 0.0], {"finite": True}, "jvp 出现了 nan/inf（得到 [inf  0.]）。"),
        ([np.nan, 0.0], [0.0, 0.0], {}, "jvp 不对（得到 [nan  0.]）。"),  # nan is never close
    ],
    ids=["shape", "values", "long values", "nan with a hint", "inf", "nan without the finite check"],
)
def test_check_close_fails_with_the_case_and_what_it_got(got, want, kwargs, message):
    with pytest.raises(AssertionError) as failed:
        check_close(got, want, "jvp", **kwargs)
    assert str(failed.value) == message


def test_verdict_helpers_still_fail_under_python_O():
    """They raise AssertionError themselves: an `assert` in the kit would vanish under -O."""
    script = (
        "import ch4check\n"
        "for check in (lambda: ch4check.check_no_error('E', 'x'), lambda: ch4check.check_close(1.0, 2.0, 'x')):\n"
        "    try:\n        check()\n    except AssertionError:\n        print('failed')\n"
    )
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, "-O", "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.stdout.split() == ["failed", "failed"], done.stderr[-2000:]


# The helpers reach a test body from the kit only, in the kernel and in the grader alike

TEST_BODIES = [
    (a, c.metadata["nbgrader"]["grade_id"], split_test_cell(c.source))
    for a in course.ASSIGNMENTS
    for c in nbformat.read(course.notebook_path(course.SOLUTIONS, a), as_version=4).cells
    if verdict.is_test(c)
]


def test_a_body_gets_the_kits_helpers_whatever_the_interface_holds():
    body = "check_close(run_each([]), 0.0, 'x')"
    namespace = namespace_of(body, {"safe_norm": object()}, collect=None, seed_for=None)
    assert namespace["check_close"] is check_close and namespace["run_each"] is run_each
    assert "attempt" not in namespace  # only what the body names


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_no_interface_name_can_shadow_a_kit_name(assignment):
    kit = set(TEST_HELPERS) | set(TRUSTED) | {"collect", "seed_for"}
    assert not kit & set(hostile.interface(assignment))


def test_the_grader_judges_with_the_kits_messages():
    evidence = {"test_custom_jvp": {"error": "NameError: name 'safe_norm' is not defined"}}
    result = next(r for r in verdict.judge("safe_norm", evidence, "s") if r.test == "test_custom_jvp")
    assert result.message == missing_name("safe_norm")


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_shadowing_attack_redefines_the_helpers_the_cells_use(assignment):
    used = set().union(*(free_names(body) for a, _, body in TEST_BODIES if a == assignment)) & set(TEST_HELPERS)
    assert used, "every exercise's cells use the kit's helpers"
    attack = ast.parse(hostile.shadowing_attack(assignment).code)
    assert used <= {node.name for node in attack.body if isinstance(node, ast.FunctionDef)}


# No copies creep back into the cells

WRAPPED = {"print_saved_residuals": "saved_residuals", "check_grads": "grads_error"}  # tool -> the kit's helper


def harness_copies(body: str) -> list[str]:
    """What in a test body duplicates the kit: a function named like a helper, a direct call of a
    tool a helper wraps, or an exception turned into evidence text (run_each / attempt do that)."""
    tree = ast.parse(body)
    defs = [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    found = [f"def {name}" for name in defs if name.lstrip("_") in TEST_HELPERS]
    found += [f"{name} instead of {WRAPPED[name]}" for name in sorted(free_names(body) & set(WRAPPED))]
    for handler in (n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler)):
        for node in ast.walk(handler):
            if isinstance(node, ast.Attribute) and node.attr == "__name__" and isinstance(node.value, ast.Call):
                if getattr(node.value.func, "id", None) == "type":
                    found.append(f"type(...).__name__ in an except clause (line {node.lineno})")
    return found


@pytest.mark.parametrize("assignment,test,body", TEST_BODIES, ids=[f"{a}:{t}" for a, t, _ in TEST_BODIES])
def test_no_test_cell_copies_the_kits_harness(assignment, test, body):
    assert not harness_copies(body), f"the kit provides these (ch4check.TEST_HELPERS): {harness_copies(body)}"


@pytest.mark.parametrize(
    "copy",
    [
        "def _run_each(computations):\n    return {}\n",
        "def _count(f, x):\n    with contextlib.redirect_stdout(buf):\n        print_saved_residuals(f, x)\n",
        "def _f():\n    try:\n        pass\n    except Exception as e:\n        return f'{type(e).__name__}: {e}'\n",
    ],
    ids=["a helper's name", "a wrapped tool", "error text"],
)
def test_the_guard_finds_a_copy(copy):
    assert harness_copies(copy)
