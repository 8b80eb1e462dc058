"""The kit's helpers, each way round: the export half a kernel runs (kit/ch4check.py: `export`,
`export_split`, `export_jvp`, `programs`), the judge's allow-policy on what arrives (kit/ch4judge.py:
`load`, `load_all`, `Programs`, `Split`) and the verdict helpers a test body reads (`attempt`,
`check_close` and `Program.jvp_products`). No kernels here; what the programs hold and compute
(kit/ch4dataflow.py) is proven in tests/test_measures.py.

A refused program is made the way a forger would: a real exported module whose text is edited
and serialized again (`jax.export` itself refuses to export a host callback), or a program
exported for another platform."""

import ast
import base64
import dataclasses
import os
import subprocess
import sys

import ch4check
import ch4dataflow
import ch4judge
import ch4programs
import jax
import jax.numpy as jnp
import nbformat
import numpy as np
import pytest
from ch4check import EXPORT_HELPERS, export, export_jvp, export_split, f32
from ch4judge import (
    CALLBACK_HINT,
    EXPORT_HINT,
    NO_PROGRAM,
    TRUSTED,
    UNSUPPORTED_HINT,
    VERDICT_HELPERS,
    Programs,
    Refused,
    attempt,
    check_close,
    load,
    load_all,
    missing_name,
    program,
)
from ch4protocol import EXPORT_HELPER_NAMES, GRADING_ENV, MIME, free_names, split_test_cell
from jax import export as jax_export

from grader import course
from grader.judging import verdict
from proof import answers

X = np.linspace(-2.0, 2.0, 7).astype(np.float32)


def _boom():
    raise ValueError("boom\nsecond line")


def _sum_sin_sq(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _custom(residuals, x_of):
    """A custom_vjp of Σ sin² x whose forward rule keeps `residuals(x)` (any container), from
    which its backward rule takes x back with `x_of`."""

    @jax.custom_vjp
    def f(x):
        return _sum_sin_sq(x)

    def fwd(x):
        return _sum_sin_sq(x), residuals(x)

    def bwd(res, g):
        return (g * jnp.sin(2.0 * x_of(res)),)

    f.defvjp(fwd, bwd)
    return f


# ---------------------------------------------------------------------------------------------
# Export and load: what a kernel hands out is what the judge runs


def test_export_round_trips_a_function_and_its_derivative():
    program = load(export(_sum_sin_sq, f32(7), vjp=True))
    assert program.in_shapes == [(7,)] and program.out_shapes == [()]
    np.testing.assert_allclose(program(X), np.sum(np.sin(X.astype(np.float64)) ** 2), rtol=1e-6)
    np.testing.assert_allclose(jax.grad(program)(X), np.sin(2.0 * X.astype(np.float64)), rtol=1e-5, atol=1e-6)
    value, pull = jax.vjp(program, X)
    np.testing.assert_allclose(pull(np.float32(-2.5))[0], -2.5 * np.sin(2.0 * X.astype(np.float64)), rtol=1e-5)


def test_a_program_exported_without_its_derivative_cannot_be_differentiated():
    program = load(export(_sum_sin_sq, f32(7)))
    assert program(X).shape == ()
    with pytest.raises(Exception, match="No VJP"):
        jax.grad(program)(X)


def test_export_split_is_the_calls_forward_and_backward_pass_from_one_trace():
    """Whatever container a custom rule keeps its residuals in, the forward program returns them as
    flat leaves after the value, and the backward program takes them back with the cotangent."""
    f = _custom(lambda x: {"inner": (jnp.sin(x), {"x": x}), "total": jnp.sum(x)}, lambda r: r["inner"][1]["x"])
    split = ch4judge.Split(*(load(program) for program in export_split(f, f32(7))))
    value, residuals = split.fwd(X)
    assert isinstance(residuals, tuple) and sorted(np.shape(r) for r in residuals) == [(), (7,), (7,)]
    assert split.kept == 15 and split.residual_shapes == [np.shape(r) for r in residuals]
    np.testing.assert_allclose(value, np.sum(np.sin(X) ** 2), rtol=1e-6)
    _, (grad,) = split.vjp((X,), np.float32(-1.75))
    np.testing.assert_allclose(grad, -1.75 * np.sin(2.0 * X.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_export_split_reads_what_the_call_runs_not_what_the_function_carries():
    """Plain autodiff of the naive formula with a correct rule hung on it as attributes: the
    programs are the naive formula's, which overflows."""

    def naive(x):
        return jnp.sum(jnp.log1p(jnp.exp(x)))

    naive.fwd = lambda x: (jnp.sum(jnp.logaddexp(x, 0.0)), x)
    naive.bwd = lambda x, g: (g * jax.nn.sigmoid(x),)
    split = ch4judge.Split(*(load(program) for program in export_split(naive, f32(3))))
    value, _ = split.fwd(np.array([100.0, 200.0, 0.0], np.float32))
    assert not np.isfinite(value)


def test_export_split_takes_what_the_forward_pass_keeps_however_it_was_made():
    """A custom rule's backward pass takes exactly its residuals; autodiff through a loop's takes
    every step's; both compute the VJP."""
    f = _custom(lambda x: (x,), lambda r: r[0])
    looped = lambda x: jax.lax.fori_loop(0, 50, lambda i, y: jnp.sin(y), x).sum()  # noqa: E731
    rule, loop = (ch4judge.Split(*(load(p) for p in export_split(g, f32(7)))) for g in (f, looped))
    assert rule.bwd.in_shapes == [(7,), ()] and rule.kept == 7  # the residual x, then the cotangent
    assert loop.kept >= 50 * 7 and loop.bwd.held > 20 * rule.bwd.held
    want = jax.vjp(looped, X)[1](np.float32(2.0))[0]
    np.testing.assert_allclose(loop.vjp((X,), np.float32(2.0))[1][0], want, rtol=1e-6)
    got = rule.vjp((X,), np.float32(-1.75))[1][0]
    np.testing.assert_allclose(got, -1.75 * np.sin(2.0 * X.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_export_jvp_is_the_calls_forward_mode():
    t = np.arange(7, dtype=np.float32)
    _, tangent = load(export_jvp(_sum_sin_sq, f32(7)))(X, t)
    np.testing.assert_allclose(tangent, np.sin(2.0 * X.astype(np.float64)) @ t, rtol=1e-5)


def test_exported_keeps_each_error_to_its_own_name():
    payload = ch4check._exported({"ok": lambda: export(jnp.sin, f32(3)), "bad": _boom, 7: _boom})
    assert set(payload) == {"ok", "bad", "7"} and set(payload["ok"]) == {"program"}
    assert payload["bad"] == {"error": "ValueError: boom"}  # the class and the first line only
    base64.b64decode(payload["ok"]["program"], validate=True)


def test_an_undefined_interface_name_fails_its_test_with_the_missing_name():
    """`_Undefined` stands for an interface name the answer has not defined: using it raises the
    NameError Python would, inside the thunk, so only the tests that need it fail, with its name."""
    undefined = ch4check._Undefined("sin2_save")
    payload = ch4check._exported(
        {"fwd": lambda: export_split(undefined, f32(3)), "call": lambda: export(undefined, f32(3))}
    )
    loaded, refusals = load_all(payload)
    assert not refusals and loaded == {n: "NameError: name 'sin2_save' is not defined" for n in ("fwd", "call")}
    for name in ("fwd", "call"):
        with pytest.raises(AssertionError) as failed:
            Programs(loaded)[name]
        assert str(failed.value) == missing_name("sin2_save")


def test_programs_says_why_a_program_is_missing():
    loaded, _ = load_all({"ok": {"program": base64.b64encode(export(jnp.sin, f32(3))).decode()},
                          "bad": {"error": "ConcretizationTypeError: float(x)"}})  # fmt: skip
    programs = Programs(loaded)
    assert isinstance(programs["ok"], ch4judge.Program) and "ok" in programs and programs.reason("ok") == ""
    assert "bad" not in programs and programs.reason("bad") == "ConcretizationTypeError: float(x)"
    assert "other" not in programs and programs.reason("other") == NO_PROGRAM
    messages = {
        "bad": f"导出 bad 时出错（ConcretizationTypeError: float(x)）：{EXPORT_HINT}",
        "other": "没有收到 other 的程序。",
    }
    for name, message in messages.items():
        with pytest.raises(AssertionError) as failed:
            programs[name]
        assert str(failed.value) == message
    nothing = Programs(None)  # the test cell never got to its export
    with pytest.raises(AssertionError) as failed:
        nothing["ok"]
    assert str(failed.value) == NO_PROGRAM and "ok" not in nothing and nothing.reason("ok") == NO_PROGRAM


def test_an_export_that_fails_on_a_host_callback_is_told_so_not_the_tests_method_hint():
    """A test's hint names its method ("反向模式不能穿过 lax.while_loop"); an answer whose export failed
    because it calls back to the host must hear that instead (soft_values, attack round 9a)."""
    on_host = lambda x: jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)  # noqa: E731
    loaded, _ = load_all(ch4check._exported({"f": lambda: export_split(on_host, f32(3))}))
    assert "callback" in Programs(loaded).reason("f")
    with pytest.raises(AssertionError) as failed:
        program(Programs(loaded), "f", "对 f 做 jax.vjp（导出）", "要用隐函数定理写反向过程")
    assert str(failed.value).endswith("：" + CALLBACK_HINT) and "隐函数定理" not in str(failed.value)
    jax_limit = "NotImplementedError: open an issue at https://github.com/google/jax !!"  # what JAX 0.12 raised
    unsupported = Programs(load_all({"f": {"error": jax_limit}})[0])
    with pytest.raises(AssertionError) as failed:  # JAX's own limit (gmres as custom_root's tangent_solve, round 10)
        program(unsupported, "f", "对 f 做 jax.vjp（导出）", "要用隐函数定理写反向过程")
    assert str(failed.value).endswith("：" + UNSUPPORTED_HINT) and "隐函数定理" not in str(failed.value)
    made = Programs(load_all(ch4check._exported({"f": lambda: export_split(jnp.sin, f32(3))}))[0])
    assert program(made, "f", "对 f 做 jax.vjp（导出）", "要用隐函数定理写反向过程") is made["f"]


def test_programs_while_grading_hands_the_programs_out_and_runs_no_verdict(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda data, raw: shown.append(data))
    monkeypatch.setenv(GRADING_ENV, "1")
    assert ch4check.programs("test_x", {"f": lambda: export(jnp.sin, f32(3)), "g": _boom}) is None
    [data] = shown
    assert set(data) == {MIME, "text/plain"} and "test_x" in data["text/plain"]
    assert data[MIME]["test"] == "test_x" and data[MIME]["programs"]["g"] == {"error": "ValueError: boom"}
    assert isinstance(load(base64.b64decode(data[MIME]["programs"]["f"]["program"])), ch4judge.Program)


def test_programs_while_a_student_works_loads_them_through_the_judges_policy(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda data, raw: shown.append(data))
    monkeypatch.delenv(GRADING_ENV, raising=False)
    programs = ch4check.programs("test_x", {"f": lambda: export(jnp.sin, f32(3))})
    assert not shown and isinstance(programs["f"], ch4judge.Program)
    np.testing.assert_allclose(programs["f"](X[:3]), np.sin(X[:3]), rtol=1e-6)
    with pytest.raises(ch4check.TestFailed, match="评分程序拒绝了导出的程序"):
        ch4check.programs("test_x", {"f": lambda: _replica_id_program().serialize()})


# ---------------------------------------------------------------------------------------------
# The allow-policy: a program outside it is refused before anything runs it


def _sine():
    return jax_export.export(jax.jit(jnp.sin), platforms=["cpu"])(f32(4))


SINE = "%0 = stablehlo.sine %arg0 : tensor<4xf32>"


def edited(exported, old: str, new: str):
    """`exported` with `old` replaced by `new` in its module's text: parsed and serialized again,
    as anyone can do by hand (the module's bytes are what a program is)."""
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir

    text = exported.mlir_module()
    assert old in text, text
    with mlir.make_ir_context():
        module = ir.Module.parse(text.replace(old, new, 1))
        data = mlir.module_to_bytecode(module)
    return dataclasses.replace(exported, mlir_module_serialized=data)


def _before_sine(*lines: str):
    """The sine program with `lines` put in before its one operation."""
    return edited(_sine(), SINE, "\n    ".join([*lines, SINE]))


def _instead_of_sine(operation: str):
    """The sine program whose result comes from `operation` (on %arg0) instead."""
    return edited(_sine(), SINE, f"%0 = {operation}")


def _replica_id_program():
    return _before_sine("%r = stablehlo.replica_id : tensor<ui32>")


def _derivative_with_replica_id(exported):
    return edited(
        _sine().vjp(), "%0 = stablehlo.cosine", "%r = stablehlo.replica_id : tensor<ui32>\n    %0 = stablehlo.cosine"
    )


CALLBACK = "xla_ffi_python_cpu_callback"  # what jax.pure_callback lowers to on CPU
VECTOR = "(tensor<4xf32>) -> tensor<4xf32>"
OUTFEED = (
    '"stablehlo.outfeed"(%arg0, %tk) {outfeed_config = ""} : (tensor<4xf32>, !stablehlo.token) -> !stablehlo.token'
)


def _exported_for(*platforms, **kwargs):
    return jax_export.export(jax.jit(jnp.sin), platforms=list(platforms), **kwargs)(f32(4))


FORGED = {
    "a host callback": (
        lambda: _instead_of_sine(f"stablehlo.custom_call @{CALLBACK}(%arg0) {{api_version = 4 : i32}} : {VECTOR}"),
        f"不允许的外部函数 '{CALLBACK}'",
    ),
    "an unknown custom_call": (
        lambda: _instead_of_sine(f"stablehlo.custom_call @my_kernel(%arg0) : {VECTOR}"),
        "不允许的外部函数 'my_kernel'",
    ),
    "a replica id": (_replica_id_program, "不运行的操作 stablehlo.replica_id"),
    "an outfeed": (
        lambda: _before_sine("%tk = stablehlo.create_token : !stablehlo.token", f"%of = {OUTFEED}"),
        "不运行的操作 stablehlo.",
    ),
    "a disallowed op in its derivative only": (
        lambda: dataclasses.replace(_sine(), _get_vjp=_derivative_with_replica_id),
        "不运行的操作 stablehlo.replica_id",
    ),
    "another platform": (lambda: _exported_for("tpu"), "('tpu',)"),
    "CPU and another platform": (lambda: _exported_for("cpu", "cuda"), "('cpu', 'cuda')"),
    "a safety check switched off": (
        lambda: _exported_for("cpu", disabled_checks=[jax_export.DisabledSafetyCheck.custom_call("x")]),
        "关掉了导出时的安全检查",
    ),
    "several devices": (lambda: dataclasses.replace(_sine(), nr_devices=2), "多个设备"),
    # values the measures cannot count (attack round 11: a tape linked into tuples held "nothing",
    # a dimension known only at run time counted -2**63 numbers)
    "a tuple": (
        lambda: _before_sine("%t = stablehlo.tuple %arg0, %arg0 : tuple<tensor<4xf32>, tensor<4xf32>>"),
        "形状不固定的值或元组（tuple<tensor<4xf32>, tensor<4xf32>>）",
    ),
    "a dimension known at run time": (
        lambda: _before_sine(
            "%s = stablehlo.constant dense<4> : tensor<1xi32>",
            "%d = stablehlo.dynamic_broadcast_in_dim %arg0, %s, dims = [0]"
            " : (tensor<4xf32>, tensor<1xi32>) -> tensor<?xf32>",
        ),
        "形状不固定的值或元组（tensor<?xf32>）",
    ),
}


def test_jax_export_itself_refuses_host_callbacks():
    """So no honest export holds one: a callback in a program was put there by hand."""

    def calls_back(x):
        return jax.pure_callback(lambda v: np.asarray(v) * 2, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    with pytest.raises(NotImplementedError, match="host_callbacks"):
        export(calls_back, f32(4))
    unchecked = [jax_export.DisabledSafetyCheck.custom_call(CALLBACK)]
    with pytest.raises(NotImplementedError, match="host_callbacks"):
        jax_export.export(jax.jit(calls_back), platforms=["cpu"], disabled_checks=unchecked)(f32(4))


def test_debug_prints_are_left_out_of_a_program_and_still_print_in_the_kernel(capfd):
    """A student who debugs with jax.debug.print (in a custom rule, under vmap, with its derivative)
    loses nothing: the program computes the same and holds no callback; the same function, called
    by the student afterwards, still prints."""

    @jax.custom_vjp
    def noisy(x):
        jax.debug.print("值 {v}", v=jnp.sum(x))
        return jnp.sum(jnp.sin(x) ** 2)

    def rule(x):
        jax.debug.print("前向 {m}", m=jnp.max(x))
        return noisy(x), x

    def back(x, g):
        jax.debug.callback(lambda v: print("反向", v), jnp.min(x))
        return (g * jnp.sin(2.0 * x),)

    noisy.defvjp(rule, back)
    program = load(export(noisy, f32(7), vjp=True))
    assert CALLBACK not in program.exported.mlir_module() and not program.exported.unordered_effects
    np.testing.assert_allclose(program(X), np.sum(np.sin(X.astype(np.float64)) ** 2), rtol=1e-6)
    np.testing.assert_allclose(jax.grad(program)(X), np.sin(2.0 * X.astype(np.float64)), rtol=1e-5, atol=1e-6)
    split = ch4judge.Split(*(load(p) for p in export_split(noisy, f32(7))))
    np.testing.assert_allclose(split.vjp((X,), np.float32(2.0))[1][0], 2.0 * np.sin(2.0 * X), rtol=1e-5, atol=1e-6)
    batched = load(export(jax.vmap(jax.grad(noisy)), f32(3, 7)))
    np.testing.assert_allclose(batched(np.stack([X] * 3)), np.stack([np.sin(2.0 * X)] * 3), rtol=1e-5, atol=1e-6)
    capfd.readouterr()
    jax.block_until_ready(jax.jit(jax.grad(noisy))(X))
    jax.effects_barrier()
    printed = capfd.readouterr().out
    assert "前向" in printed and "反向" in printed, printed


@pytest.mark.parametrize("forged", FORGED, ids=list(FORGED))
def test_load_refuses_a_program_outside_the_policy(forged):
    make, reason = FORGED[forged]
    data = bytes(make().serialize(vjp_order=1 if "derivative" in forged else 0))
    jax_export.deserialize(bytearray(data))  # a well-formed program: only the policy stops it
    with pytest.raises(Refused) as refused:
        load(data)
    assert reason in str(refused.value), str(refused.value)


def test_the_edited_modules_are_otherwise_the_real_program():
    """The control: the same edit with an allowed op loads and runs, so the refusals above are the
    policy's doing, not a broken module."""
    negated = edited(_sine(), SINE, f"%n = stablehlo.negate %arg0 : tensor<4xf32>\n    {SINE}")
    program = load(bytes(negated.serialize()))
    np.testing.assert_allclose(program(X[:4]), np.sin(X[:4]), rtol=1e-6)
    assert "stablehlo.negate" in [name for name, _ in program.operations]


def test_load_accepts_linear_algebra_through_lapack():
    program = load(export(lambda a: jnp.linalg.solve(a, jnp.ones(3)), f32(3, 3)))
    targets = {a.get("call_target_name", "") for name, a in program.operations if name == "stablehlo.custom_call"}
    assert targets and all(t.strip('"').startswith("lapack_") for t in targets), targets
    a = np.eye(3, dtype=np.float32) * 2
    np.testing.assert_allclose(program(a), np.full(3, 0.5), rtol=1e-6)


@pytest.mark.parametrize(
    "data,reason",
    [(b"not a program", "无法反序列化"), ("text", "不是字节串"), (b"\0" * (ch4programs.MAX_PROGRAM_BYTES + 1), "过大")],
    ids=["garbage", "not bytes", "too large"],
)
def test_load_refuses_what_is_not_a_program(data, reason):
    with pytest.raises(Refused, match=reason):
        load(data)


def test_load_all_refuses_each_bad_item_on_its_own():
    good = base64.b64encode(export(jnp.sin, f32(3))).decode()
    forged = base64.b64encode(_replica_id_program().serialize()).decode()
    payload = {"good": {"program": good}, "forged": {"program": forged}, "text": {"program": "not base64!"},
               "shape": {"programs": good}, "list": [good], "error": {"error": "E: x" * 200}}  # fmt: skip
    loaded, refusals = load_all(payload)
    assert set(loaded) == {"good", "error"} and isinstance(loaded["good"], ch4judge.Program)
    assert len(loaded["error"]) == 400  # an export's error text is capped
    assert sorted(r.split("：")[0] for r in refusals) == ["forged", "list", "shape", "text"], refusals


# ---------------------------------------------------------------------------------------------
# Verdict helpers: they raise AssertionError with the course's message


def test_missing_name_says_which_and_what_to_do():
    assert missing_name("safe_norm") == (
        "没有找到 safe_norm：还没有作答，或者作答区没有运行成功。请在作答区定义它，并先运行作答区。"
    )
    assert missing_name("a", "b") == (
        "没有找到 a、b：还没有作答，或者作答区没有运行成功。请在作答区定义它们，并先运行作答区。"
    )


def test_attempt_returns_the_value_or_names_the_step_the_error_and_the_hint():
    assert attempt(lambda: 1.5, "调用 f") == 1.5
    with pytest.raises(AssertionError) as failed:
        attempt(_boom, "调用 f", "先运行作答区。")
    assert str(failed.value) == "调用 f 出错（ValueError: boom）：先运行作答区。"
    with pytest.raises(AssertionError) as failed:
        attempt(lambda: ch4judge.Programs(None)["f"], "在 jit 下求梯度时")
    assert str(failed.value) == NO_PROGRAM, "a verdict's own failure passes through unchanged"

    def raises_x():
        raise TypeError("x")

    with pytest.raises(AssertionError) as failed:
        attempt(raises_x, "在 jit 下求梯度时")
    assert str(failed.value) == "在 jit 下求梯度时出错（TypeError: x）。"  # no space between Chinese characters


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
        (np.ones(2), np.zeros(2), {"hint": "应为 0。"}, "jvp 不对（得到 [1, 1]）：应为 0。"),
        (np.ones(30), np.zeros(30), {}, "jvp 不对。"),  # a long result is not printed
        (np.ones(2), np.zeros(2), {"reveal": False}, "jvp 不对。"),  # a hidden test's values are not printed
        ([np.nan, 0.0], [0.0, 0.0], {"finite": "不能 0/0。"}, "jvp 出现了 nan/inf（得到 [nan, 0]）：不能 0/0。"),
        ([np.inf, 0.0], [0.0, 0.0], {"finite": True}, "jvp 出现了 nan/inf（得到 [inf, 0]）。"),
        ([np.nan, 0.0], [0.0, 0.0], {}, "jvp 不对（得到 [nan, 0]）。"),  # nan is never close
    ],
    ids=["shape", "values", "long values", "hidden values", "nan with a hint", "inf", "nan without the finite check"],
)
def test_check_close_fails_with_the_case_and_what_it_got(got, want, kwargs, message):
    with pytest.raises(AssertionError) as failed:
        check_close(got, want, "jvp", **kwargs)
    assert str(failed.value) == message


def _uses(answer, n: int = 7, evaluate: bool = True) -> tuple[list[int], list[str]]:
    """`Program.jvp_products` of `answer(f, x)` exported with J as input number 1, where f is the
    coloring tests' kind of function, v ↦ sin v + J v (`evaluate`), or v ↦ J v."""
    if evaluate:
        program = load(export(lambda x, J: answer(lambda v: jnp.sin(v) + J @ v, x), f32(n), f32(n, n)))
    else:
        program = load(export(lambda x, J: answer(lambda v: J @ v, x), f32(n), f32(n, n)))
    return program.jvp_products(1)


EYE = np.eye(7, dtype=np.float32)
SEEDS = (np.arange(7)[None, :] % 3 == np.arange(3)[:, None]).astype(np.float32)  # 3 colours


def test_jvp_products_count_the_tangents_of_each_use_of_the_jacobian():
    """Evaluating f reads J once with one vector; each JVP reads it with its tangents (the primal
    product is dropped when the JVP's value is not used)."""

    def vmapped(f, x):
        return jax.vmap(lambda s: jax.jvp(f, (x,), (s,))[1])(SEEDS)

    assert _uses(lambda f, x: f(x)) == ([1], [])  # called, not differentiated
    assert _uses(lambda f, x: jax.jvp(f, (x,), (jnp.ones(7),))[1]) == ([1], [])
    assert _uses(lambda f, x: jax.jvp(f, (x,), (jnp.ones(7),))) == ([1, 1], [])  # the value too
    assert _uses(vmapped) == ([3], [])
    assert _uses(lambda f, x: jax.jit(vmapped, static_argnums=0)(f, x)) == ([3], [])  # through func.call
    assert _uses(lambda f, x: jax.vmap(jax.linearize(f, x)[1], in_axes=1, out_axes=1)(SEEDS.T)) == ([3], [])
    assert _uses(lambda f, x: jax.jacfwd(f)(x)) == ([7], [])
    assert _uses(lambda f, x: [jax.jvp(f, (x,), (s,))[1] for s in SEEDS]) == ([1, 1, 1], [])  # a Python loop
    J = np.random.default_rng(0).normal(size=(7, 7)).astype(np.float32)
    program = load(export(lambda x, J: jax.jacfwd(lambda v: jnp.sin(v) + J @ v)(x), f32(7), f32(7, 7)))
    np.testing.assert_allclose(program(X, J), J + np.diag(np.cos(X)), rtol=1e-6)  # and it computes J
    assert set(EXPORT_HELPERS) == set(EXPORT_HELPER_NAMES)  # what the judge binds to a no-op


def test_reverse_mode_reads_the_jacobian_transposed_and_is_named():
    products, others = _uses(lambda f, x: jax.jacrev(f)(x))
    assert others and all("dot_general" in o or "transpose" in o for o in others), others


def _jacobian_of(f):
    """The J a test function closes over, as a walk through its closures finds it."""
    return next(c.cell_contents for c in f.__closure__ if hasattr(c.cell_contents, "shape"))


def test_every_other_use_of_the_jacobian_is_named():
    def jvp(f, x, s):
        return jax.jvp(f, (x,), (s,))[1]

    cases = {
        "returned as it is": (lambda f, x: _jacobian_of(f), ["func.return"]),
        "masked": (lambda f, x: _jacobian_of(f) * 1.0, ["stablehlo.multiply"]),
        "pushed in a loop": (lambda f, x: jax.lax.map(lambda s: jvp(f, x, s), SEEDS), ["stablehlo.while"]),
        "pushed in a branch": (
            lambda f, x: jax.lax.cond(x[0] > 0, lambda: jvp(f, x, SEEDS[0]), lambda: jnp.zeros(7)),
            ["stablehlo.dot_general in stablehlo.case"],  # the branch reads J from outside it
        ),
        "rows, not columns (J.T @ u)": (lambda f, x: _jacobian_of(f).T @ SEEDS[0], ["stablehlo.transpose"]),
        "rows, not columns (u @ J)": (lambda f, x: SEEDS[0] @ _jacobian_of(f), ["stablehlo.dot_general"]),
        "one tangent per row (batched)": (
            lambda f, x: jnp.einsum("ij,ij->i", _jacobian_of(f), jnp.ones((7, 7))),
            ["stablehlo.dot_general"],
        ),
        "with itself": (lambda f, x: _jacobian_of(f) @ _jacobian_of(f), ["stablehlo.dot_general"] * 2),
    }
    for name, (answer, named) in cases.items():
        products, others = _uses(answer, evaluate=False)
        assert products == [] and others == named, (name, products, others)


def _lax_functions() -> list:
    return [
        getattr(jax.lax, n) for n in sorted(dir(jax.lax)) if not n.startswith("_") and callable(getattr(jax.lax, n))
    ]


def test_no_unary_lax_function_of_the_jacobian_counts_as_a_jvp():
    """Every public jax.lax function that takes the Jacobian alone and exports: none of its uses
    counts as a pushed tangent (from the library itself, not from a hand list)."""
    tried = []
    for fn in _lax_functions():

        def answer(f, x, fn=fn):
            return fn(_jacobian_of(f))

        try:
            products, others = _uses(answer, evaluate=False)
        except Exception:  # noqa: BLE001 - not a function of one float matrix, or not exportable
            continue
        tried.append(fn.__name__)
        assert products == [], (fn.__name__, products, others)
    assert len(tried) > 40, tried  # the walk above reached the library, not a handful of names


def test_verdict_helpers_still_fail_under_python_O():
    """They raise AssertionError themselves: an `assert` in the kit would vanish under -O."""
    script = (
        "import ch4judge\n"
        "def boom():\n    raise ValueError('x')\n"
        "for check in (lambda: ch4judge.attempt(boom, 'x'), lambda: ch4judge.check_close(1.0, 2.0, 'x'),\n"
        "              lambda: ch4judge.Programs(None)['f']):\n"
        "    try:\n        check()\n    except AssertionError:\n        print('failed')\n"
    )
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    for flag in ("-O", "-OO"):
        command = [sys.executable, flag, "-c", script]
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
        assert done.stdout.split() == ["failed"] * 3, done.stderr[-2000:]


# ---------------------------------------------------------------------------------------------
# A test body's names: the kit's, in the kernel and in the judge alike

TEST_BODIES = [
    (a, c.metadata["nbgrader"]["grade_id"], split_test_cell(c.source))
    for a in course.ASSIGNMENTS
    for c in nbformat.read(course.notebook_path(course.SOLUTIONS, a), as_version=4).cells
    if verdict.is_test(c)
]


def test_a_body_gets_the_kits_helpers_and_real_builtins():
    import builtins

    body = "check_close(attempt(lambda: np.ones(2), 'x'), 1.0, 'x')"
    space = ch4judge.namespace(body, {"safe_norm": object()})
    assert space["check_close"] is check_close and space["attempt"] is attempt and space["np"] is np
    assert space["__builtins__"] is builtins
    assert "as_function" not in space and "jnp" not in space  # only what the body names


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_no_interface_name_can_shadow_a_kit_name(assignment):
    """The kernel puts the interface into each body's namespace after the kit's names."""
    kit = set(VERDICT_HELPERS) | set(TRUSTED) | set(EXPORT_HELPERS) | {"programs", "seed_for"}
    assert not kit & set(answers.interface(assignment))


def test_the_grader_judges_with_the_kits_messages():
    """The export of an undefined function arrives as its NameError; the judge turns it into the
    kit's message, as JupyterLab does."""
    error = {"error": "NameError: name 'sin2_save' is not defined"}
    names = [f"{name} n={n}" for name in ("sin2_save", "sin2_recompute") for n in (64, 37)]
    results, refusals = verdict.judge("residuals", {"test_visible_residuals": dict.fromkeys(names, error)}, "s")
    result = next(r for r in results if r.test == "test_visible_residuals")
    assert result.message == missing_name("sin2_save") and not refusals


# No copies of the kit creep back into the cells

HELPERS = set(VERDICT_HELPERS) | set(EXPORT_HELPERS) | {"programs", "seed_for"}


def harness_copies(body: str) -> list[str]:
    """What in a test body duplicates the kit: a function named like a helper, jax.export used
    directly (the export helpers do that, with the kit's platform and derivative), or an exception
    turned into text (attempt does that)."""
    tree = ast.parse(body)
    defs = [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    found = [f"def {name}" for name in defs if name.lstrip("_") in HELPERS]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("export", "serialize", "deserialize"):
            if isinstance(node.value, ast.Name) and node.value.id in ("jax", "jax_export", "export"):
                found.append(f"{node.value.id}.{node.attr} (line {node.lineno})")
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("jax.export"):
            found.append(f"from {node.module} import (line {node.lineno})")
    for handler in (n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler)):
        for node in ast.walk(handler):
            if isinstance(node, ast.Attribute) and node.attr == "__name__" and isinstance(node.value, ast.Call):
                if getattr(node.value.func, "id", None) == "type":
                    found.append(f"type(...).__name__ in an except clause (line {node.lineno})")
    return found


@pytest.mark.parametrize("assignment,test,body", TEST_BODIES, ids=[f"{a}:{t}" for a, t, _ in TEST_BODIES])
def test_no_test_cell_copies_the_kits_harness(assignment, test, body):
    assert not harness_copies(body), f"the kit provides these (ch4check / ch4judge): {harness_copies(body)}"
    assert free_names(body) & HELPERS, "a test body exports and judges through the kit"


@pytest.mark.parametrize(
    "copy",
    [
        "def _attempt(compute, doing):\n    return compute()\n",
        "_p = jax.export.export(jax.jit(f))(x)\n",
        "from jax.export import export as ex\n",
        "def _f():\n    try:\n        pass\n    except Exception as e:\n        return f'{type(e).__name__}: {e}'\n",
    ],
    ids=["a helper's name", "jax.export itself", "jax.export imported", "error text"],
)
def test_the_check_finds_a_copy(copy):
    assert harness_copies(copy)


def test_the_judge_compiles_a_program_once_however_many_tests_export_it():
    """Equal bytes give the same checked Program (its compilation is shared); the judge keeps a
    bounded number of them (a student's kernel exports new programs all day)."""
    data = bytes(_sine().serialize())
    first = ch4judge.load(data)
    assert ch4judge.load(bytes(data)) is first
    x = jnp.arange(4.0, dtype=jnp.float32)
    assert np.array_equal(first(x), jnp.sin(x))
    compiled = first._jitted._cache_size()
    ch4judge.load(data)(x)
    assert first._jitted._cache_size() == compiled == 1
    for k in range(ch4programs._KEEP):  # as many other programs as it keeps: the first is gone
        ch4judge.load(bytes(jax_export.export(jax.jit(lambda x, k=k: x + k), platforms=["cpu"])(f32(4)).serialize()))
    assert ch4judge.load(data) is not first


def test_a_forged_list_of_kept_inputs_cannot_hide_the_jacobian():
    """JAX passes the inputs a program keeps in index order: a program that lists them in another
    order (so the count would read x's uses instead of J's) is named, not counted."""
    exported = jax_export.deserialize(bytearray(export(lambda x, J: J @ x, f32(7), f32(7, 7))))
    assert ch4dataflow.jvp_products(exported, 1) == ([1], [])
    swapped = dataclasses.replace(exported, module_kept_var_idx=(1, 0))
    assert ch4dataflow.jvp_products(swapped, 1) == ([], ["inputs kept out of order"])
    dropped = dataclasses.replace(exported, module_kept_var_idx=(1,))
    assert ch4dataflow.jvp_products(dropped, 1) == ([], ["inputs kept that the program does not take"])
