"""What the method checks measure, proven both ways (kit/ch4dataflow.py, kit/ch4judge.py): the
numbers a program holds at once, each counted once however often it is passed; the work a program
does, each loop body counted once per iteration it actually ran; that the counting program computes
what the program does; and that a hidden test's message carries no number. No kernels here."""

import functools
import re

import ch4dataflow
import ch4judge
import ch4messages
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ch4check import export, export_split, f32
from ch4protocol import sizes_key, sizes_seed
from jax import export as jax_export


def _program(fun, *specs) -> ch4judge.Program:
    return ch4judge.load(export(fun, *specs))


def _exported(fun, *specs):
    return jax_export.deserialize(bytearray(export(fun, *specs)))


# ---------------------------------------------------------------------------------------------
# Memory: numbers held at once


def _trajectory(x):
    """Holds 100 states at once (stacked) before reducing them."""
    return jnp.stack([x * i for i in range(100)]).sum(0)


def test_a_value_passed_many_times_is_counted_once_and_hides_nothing():
    """The count an answer could steer: a value handed a thousand times to a jitted helper. The
    helper's arguments are its caller's values, so they add nothing; the trajectory still shows."""
    helper = jax.jit(lambda *args: args[0] * 1.0)

    def fooled(x):
        states = jnp.stack([x * i for i in range(100)])
        return helper(*([states] * 1000)).sum(0)

    plain, fooling = (ch4dataflow.peak_live_elements(_exported(f, f32(5))) for f in (_trajectory, fooled))
    assert plain >= 100 * 5 and fooling >= plain, (plain, fooling)
    assert fooling <= plain + 2 * 100 * 5  # the helper's own product, once


def test_what_a_callee_makes_counts_on_top_of_what_is_live_around_it():
    inner = jax.jit(lambda x: jnp.stack([x * i for i in range(50)]).sum(0))
    held = ch4dataflow.peak_live_elements(_exported(lambda x: inner(x) + x, f32(4)))
    assert held >= 50 * 4


def test_a_composite_is_counted_as_the_decomposition_it_runs():
    """`jax.lax.composite` runs its decomposition, a function of the program (attack round 10 hid a
    trajectory and a per-entry backward pass in one): what it holds and does counts as a call's."""
    hidden = jax.lax.composite(_trajectory, name="ch4.hidden")
    plain, wrapped = (_exported(f, f32(5)) for f in (_trajectory, hidden))
    assert "stablehlo.composite" in wrapped.mlir_module()
    assert ch4dataflow.peak_live_elements(wrapped) >= ch4dataflow.peak_live_elements(plain) >= 100 * 5
    loop = lambda x: jax.lax.fori_loop(0, 40, lambda i, y: jnp.sin(y), x)  # noqa: E731
    x = np.ones(8, np.float32)
    hidden_work, plain_work = _work(jax.lax.composite(loop, name="ch4.loop"), x)[1], _work(loop, x)[1]
    assert plain_work >= 40 * 8 and 0.9 < hidden_work / plain_work < 1.2, (hidden_work, plain_work)


def test_numbers_are_counted_whatever_their_dtype():
    with jax.enable_x64(True):
        wide = ch4dataflow.peak_live_elements(_exported(lambda x: _trajectory(x.astype(jnp.float64)), f32(5)))
    narrow = ch4dataflow.peak_live_elements(_exported(_trajectory, f32(5)))
    assert abs(wide - narrow) <= 10, (wide, narrow)  # the same states, a cast more


def test_a_loop_carry_is_held_once_whatever_the_trip_count():
    def looped(n):
        return ch4dataflow.peak_live_elements(
            _exported(lambda x: jax.lax.fori_loop(0, n, lambda i, y: jnp.sin(y), x), f32(6))
        )

    assert looped(10) == looped(1000)


# ---------------------------------------------------------------------------------------------
# Work: what runs, counted as it runs


def _work(fun, *args):
    program = _program(fun, *(f32(*np.shape(a)) for a in args))
    return program.counted(*args)


def test_a_loops_body_counts_once_per_iteration_it_ran():
    x = np.ones(8, np.float32)
    works = [_work(lambda x, n=n: jax.lax.fori_loop(0, n, lambda i, y: jnp.sin(y) * 2.0, x), x)[1] for n in (10, 40)]
    assert 3.5 < works[1] / works[0] < 4.1, works


def test_a_while_loops_trip_count_is_read_by_running_it():
    """The same program: its loop runs until a value decided by the input."""

    def halve_until(x, limit):
        return jax.lax.while_loop(lambda y: jnp.max(y) > limit, lambda y: y * 0.5, x)

    program = _program(halve_until, f32(8), f32())
    x = np.full(8, 1024.0, np.float32)
    (_, short), (out_long, long) = program.counted(x, np.float32(100.0)), program.counted(x, np.float32(1e-3))
    np.testing.assert_array_equal(out_long, halve_until(x, np.float32(1e-3)))  # it computes what the program does
    assert long > 3 * short, (short, long)
    assert program.known_work is None  # a loop: not known without running


def test_a_branch_counts_the_side_that_ran():
    heavy = lambda x: jax.lax.fori_loop(0, 100, lambda i, y: jnp.sin(y), x)  # noqa: E731
    program = _program(lambda x, p: jax.lax.cond(p > 0, heavy, lambda x: x + 1.0, x), f32(8), f32())
    x = np.ones(8, np.float32)
    assert program.counted(x, np.float32(1.0))[1] > 50 * program.counted(x, np.float32(-1.0))[1]


def test_nested_loops_and_called_functions_multiply_and_add():
    body = jax.jit(lambda y: jnp.cos(y))
    inner = lambda y: jax.lax.fori_loop(0, 5, lambda j, z: body(z), y)  # noqa: E731
    nested = _work(lambda x: jax.lax.fori_loop(0, 20, lambda i, y: inner(y), x), np.ones(4, np.float32))[1]
    flat = _work(lambda x: jax.lax.fori_loop(0, 100, lambda i, y: jnp.cos(y), x), np.ones(4, np.float32))[1]
    assert 0.8 < nested / flat < 1.5, (nested, flat)


def test_work_is_known_without_running_when_nothing_loops_and_then_nothing_compiles():
    split = ch4judge.Split(*(ch4judge.load(p) for p in export_split(lambda x: jnp.sum(jnp.sin(x) ** 2), f32(6))))
    forward, backward = split.work((np.ones(6, np.float32),), np.float32(1.0))
    assert forward > 0 and backward > 0
    assert split.fwd._jitted._cache_size() == 0 and split.bwd._jitted._cache_size() == 0  # neither ran


def test_one_pass_per_input_entry_costs_the_entries_times_one():
    """What the cheap-gradient check exists for: k forward-mode passes cost about k times one,
    one after another (lax.map) or batched (vmap: the primal computed once, the k tangents pushed
    together, so it grows with k as well)."""

    def solve(x):
        return jax.lax.fori_loop(0, 50, lambda i, y: jnp.tanh(y @ jnp.ones((24, 24))), x)

    x = np.ones(24, np.float32)
    one = _work(lambda x: jax.jvp(solve, (x,), (jnp.ones(24),))[1], x)[1]
    by_map = _work(lambda x: jax.lax.map(lambda t: jax.jvp(solve, (x,), (t,))[1], jnp.eye(24)[:6]), x)[1]
    by_vmap = {k: _work(lambda x, k=k: jax.vmap(lambda t: jax.jvp(solve, (x,), (t,))[1])(jnp.eye(24)[:k]), x)[1]
               for k in (6, 24)}  # fmt: skip
    assert 5 * one < by_map < 7 * one, (one, by_map)
    assert by_vmap[24] > 3 * by_vmap[6], by_vmap


def test_a_loop_tested_by_a_loop_cannot_be_measured():
    def hidden_work(x):
        def cond(y):  # the work hides in the condition, which could not pass a counter out
            return jax.lax.fori_loop(0, 1000, lambda i, z: jnp.sin(z), y).sum() > 1e9

        return jax.lax.while_loop(cond, lambda y: y + 1.0, x)

    program = _program(hidden_work, f32(3))
    with pytest.raises(ch4judge.Unmeasurable):
        program.counted(np.ones(3, np.float32))
    np.testing.assert_allclose(program(np.ones(3, np.float32)), np.ones(3))  # it still runs, uncounted


@pytest.mark.parametrize("holder", ["reduce", "reduce_window"])
def test_a_loop_inside_a_reductions_body_cannot_be_measured(holder):
    """Counters go through loops and branches only; a loop inside the body of any other operation
    with a region would run uncounted (attack round 10 hid a backward pass in a reduction)."""

    def body(a, b):
        return jax.lax.fori_loop(0, 1000, lambda i, z: jnp.sin(z), a + b)

    def hidden_work(x):
        if holder == "reduce":
            return jax.lax.reduce(x, np.float32(0.0), body, (0,))
        return jax.lax.reduce_window(x, np.float32(0.0), body, (2,), (1,), "VALID")

    exported = _exported(hidden_work, f32(4))
    assert f"stablehlo.{holder}" in exported.mlir_module() and "stablehlo.while" in exported.mlir_module()
    with pytest.raises(ch4judge.Unmeasurable, match=f"inside stablehlo.{holder}"):
        ch4dataflow.counting(exported)


def _lowered_as(name, lower):
    """A primitive lowered by hand to one StableHLO operation (attack round 13 wrote such lowerings
    to find operations whose work `_cost` under-counted)."""
    from jax._src import core
    from jax.extend.core import Primitive
    from jax.interpreters import mlir

    primitive = Primitive(name)
    primitive.def_abstract_eval(lambda *avals: core.ShapedArray(avals[-1].shape, avals[0].dtype))  # the last input's
    mlir.register_lowering(primitive, lower)
    return primitive.bind


def _result_type(ctx):
    from jax._src.lib.mlir import ir
    from jax.interpreters import mlir

    return ir.RankedTensorType.get(ctx.avals_out[0].shape, mlir.dtype_to_ir_type(ctx.avals_out[0].dtype))


def _hand_lowered_products():
    from jax._src.lib.mlir import ir
    from jax.extend.mlir.dialects import stablehlo as hlo

    def solve(ctx, a, b):
        true, false = ir.BoolAttr.get(True), ir.BoolAttr.get(False)
        return [hlo.TriangularSolveOp(a, b, true, true, false, hlo.TransposeAttr.get("NO_TRANSPOSE")).result]

    dot = _lowered_as("ch4_plain_dot", lambda ctx, a, b: [hlo.DotOp(_result_type(ctx), a, b).result])
    triangular = _lowered_as("ch4_plain_solve", solve)
    factor = _lowered_as("ch4_plain_cholesky", lambda ctx, a: [hlo.CholeskyOp(a, lower=ir.BoolAttr.get(True)).result])
    return {"stablehlo.dot": dot, "stablehlo.triangular_solve": triangular,
            "stablehlo.cholesky": lambda a, b: factor(a + b)}  # fmt: skip


_N = 32


def _chain(v):  # 40 sines, one after another, on every number a scatter updates
    return functools.reduce(lambda y, _: jnp.sin(y) + y, range(40), v)


def _wide(v):  # an array of _N numbers made from the one number a scatter updates (attack round 14)
    return jnp.sum(jnp.exp(jnp.broadcast_to(v, (_N,)) * jnp.arange(_N, dtype=v.dtype)))


_WINDOWED = {
    "reduce_window": lambda a, b: jax.lax.reduce_window(a, 0.0, jax.lax.add, (1, _N), (1, 1), [(0, 0), (_N - 1, 0)]),
    "scatter": lambda a, b: a.at[jnp.arange(_N)].apply(_chain),
    "scatter of arrays": lambda a, b: a.at[jnp.arange(_N)].apply(_wide),
}  # fmt: skip


@pytest.mark.parametrize("name", ["stablehlo.dot", "stablehlo.triangular_solve", "stablehlo.cholesky", *_WINDOWED])
def test_every_product_solve_and_window_counts_its_multiply_adds(name):
    """An operation that reads n² numbers and does n³ multiply-adds counts n³ (at least a third of
    it), written by hand or by JAX: attack round 13 hid per-entry work in a hand-written `stablehlo.dot`,
    which was counted as the numbers it read. A window as long as the row, and a scatter's update
    region, run per number too, and a region's work is its operations' own, arrays it makes included."""
    fun = {**_hand_lowered_products(), **_WINDOWED}[name]
    a = np.tril(np.random.default_rng(0).normal(size=(_N, _N))).astype(np.float32) + _N * np.eye(_N, dtype=np.float32)
    program = _program(fun, f32(_N, _N), f32(_N, _N))
    assert name.split(".")[-1].split()[0] in program.exported.mlir_module()
    work = program.counted(a, np.ones((_N, _N), np.float32))[1]
    assert work >= _N**3 / 3, (name, work, _N**3)


def test_an_einsum_written_by_hand_is_refused():
    """JAX writes every product as dot_general; StableHLO's einsum is not among the operations the
    measures count, so a program holding one is refused."""
    from jax._src.lib.mlir import ir
    from jax.extend.mlir.dialects import stablehlo as hlo

    def lower(ctx, a, b):
        return [hlo.EinsumOp(_result_type(ctx), a, b, ir.StringAttr.get("ij,jk->ik")).result]

    einsum = _lowered_as("ch4_plain_einsum", lower)
    with pytest.raises(ch4judge.Refused, match="einsum"):
        _program(lambda a, b: einsum(a, b), f32(4, 4), f32(4, 4))


def test_the_counting_program_meets_the_same_policy():
    program = _program(lambda x: jax.lax.fori_loop(0, 3, lambda i, y: y * 2.0, x), f32(2))
    _, counting, _ = program._counting
    assert counting is not None  # and _counting ran _check on it without a refusal


# ---------------------------------------------------------------------------------------------
# What a hidden test may say


def test_a_hidden_tests_failure_names_no_number():
    hidden = ch4messages.Hidden("# 🧪 隐藏测试：梯度\ncheck_close(g, w, '随机点上的梯度')", ch4judge.kit_pieces())
    ch4messages.current = hidden
    try:
        with pytest.raises(AssertionError) as failed:
            ch4messages.check_close(np.array([np.nan, 123456.789]), np.zeros(2), "随机点上的梯度", finite=True)
    finally:
        ch4messages.current = None
    message = hidden.final(str(failed.value))
    assert message == str(failed.value) and not re.search(r"\d", message), message


def test_the_gate_replaces_a_message_that_spells_a_number():
    hidden = ch4messages.Hidden("# 🧪 隐藏测试：值\nassert False, '值不对'", ch4judge.kit_pieces())
    assert hidden.final("值不对") == "值不对"
    for leak in ("值不对（x = 0.4231）", "值不对 1e-3", "值不对" + "：" * 3 + "7"):
        replaced = hidden.final(leak)
        assert replaced.startswith("隐藏测试未通过") and not re.search(r"\d", replaced.replace("🧪", "")), replaced


def test_no_kit_piece_is_made_of_digits_and_signs():
    """Pieces of digits, signs and exponents could be joined into any number; punctuation without a
    digit cannot, and joins course text."""
    pieces = ch4judge.kit_pieces()
    assert "：" in pieces
    assert not [p for p in pieces if re.search(r"\d", p) and not re.search(r"[^\W\deE_]", p)]
    assert ch4messages.text_pieces("x = f'{a}1e-3' + '12' + ' ' + 'n = 3 时'") == {" ", "n = 3 时", "x", "a"}


# ---------------------------------------------------------------------------------------------
# Sizes drawn for hidden tests


def test_the_kernel_and_the_judge_draw_the_same_sizes_and_the_key_tells_nothing_back(monkeypatch):
    import ch4check
    from ch4protocol import GRADING_ENV, SIZES_ENV

    secret = "a submission's secret"
    monkeypatch.setenv(GRADING_ENV, "1")
    monkeypatch.setenv(SIZES_ENV, sizes_key(secret))
    kernel = ch4check.sizes_for("test_hidden_x").integers(0, 10**9, size=4)
    judge = np.random.default_rng(sizes_seed(sizes_key(secret), "test_hidden_x")).integers(0, 10**9, size=4)
    np.testing.assert_array_equal(kernel, judge)
    other = np.random.default_rng(sizes_seed(sizes_key("another secret"), "test_hidden_x")).integers(0, 10**9, size=4)
    assert not np.array_equal(kernel, other)
    assert secret not in sizes_key(secret)


def test_a_graded_kernel_without_its_key_refuses_to_draw(monkeypatch):
    import ch4check
    from ch4protocol import GRADING_ENV, SIZES_ENV

    monkeypatch.setenv(GRADING_ENV, "1")
    monkeypatch.delenv(SIZES_ENV, raising=False)
    with pytest.raises(RuntimeError, match="sizes key"):
        ch4check.sizes_for("test_hidden_x")


def test_the_work_ratios_message_states_the_constant_it_checks():
    """A hidden test's message may hold only course text, so the constant is written out in it."""
    import inspect

    import ch4verdicts

    assert ch4verdicts.WORK_RATIO == 40 and "超过函数本身的 40 倍" in inspect.getsource(ch4verdicts.check_work_ratio)
