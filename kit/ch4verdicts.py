"""What the exercises' test cells check with: the references and the method checks they share.

A test cell says only what it checks (CONTRIBUTING.md, "Test cells"); the code that several of
its cells need lives here, once, and reaches a test body by name like the other verdict helpers
(``ch4judge.VERDICT_HELPERS``). Everything here runs on the judge's side of a test: NumPy float64
references, and the *method* checks. Each measures the property its method exists for on the
programs of the graded call itself (``export_split``: the forward and the backward pass
``jax.vjp`` made in one trace, whose values are the ones graded), never on anything the answer
names or supplies besides (docs/methods.md has the table):

- the adjoint's and implicit differentiation's backward pass: memory that does not grow with the
  number of steps (the same answer exported at N_STEPS = 100 and 400 holds exactly as many numbers),
  work a small multiple of the forward pass's (``ch4dataflow``: operations times the iterations they
  ran, counted as the programs run), and the forward pass really does the steps it is asked for;
- a custom rule uses what it is given: the backward pass runs on *substituted* residuals (other
  values of the arrays the method names, found in whatever layout the answer keeps them) and must
  return what the method predicts from them.

A hidden test passes ``reveal=False``: its messages name no number (kit/ch4messages.py, ``Hidden``).
"""

import ch4dataflow
import jax
import numpy as np
from ch4messages import attempt, check_close, program
from ch4programs import located_numbers, residual_numbers, with_numbers
from ch4references import (
    REFERENCES,
    fast_rotations,
    rk4_adjoint_vjp,
    rk4_program,
    rk4_vjp,
    soft_values64,
    soft_values_vjp64,
    value_iteration,
)

# ---------------------------------------------------------------------------------------------
# ode_adjoint: references in float64


def solution(programs, name: str, doing: str, hint: str):
    """The function's value (z0, W ↦ z(T); R, P, γ ↦ V*) from the test's split `name` (its forward
    pass), or, when that one did not export (a backward rule that cannot be traced, reverse mode
    through a while_loop), from `name alone` (the plain function): a broken backward pass does not
    cost the forward tests."""
    if name in programs:
        return programs[name].value
    return program(programs, f"{name} alone", doing, hint)


# ---------------------------------------------------------------------------------------------
# The method's properties, measured on the graded call's programs (`Split`) by ch4dataflow:
# memory that does not grow with the steps, work a small multiple of the function's.

# A backward pass may do at most this many times the work of the function itself (numbers handled,
# each loop body once per iteration it ran), the function's work measured on the course's own
# program for it, so an answer cannot raise its allowance by padding its forward pass. Measured:
# correct adjoints do 4-9 times RK4's work (23 with a dense jax.jacobian per stage, d = 5), correct
# implicit differentiation 0.1-1 times value iteration's (29 with dense Jacobians of T with respect
# to every input, S, A = 6, 3); one forward-mode pass or one finite difference per input entry does
# 56-62 (d = 5) and 280-515 (S, A = 6, 3) times, fixed-length unrolled loops differentiated with
# checkpoints 40 and more.
WORK_RATIO = 40
FORWARD_RATIO = 20  # soft_values' forward pass against value iteration, at γ ≥ 0.95


def reference_work(function, *args) -> float:
    """The work (ch4dataflow) of the course's own JAX `function` on `args`: what the function the
    exercise asks for costs when computed the plain way."""
    from jax import export

    specs = [jax.ShapeDtypeStruct(np.shape(a), np.asarray(a).dtype) for a in args]
    known, counting = ch4dataflow.counting(export.export(jax.jit(function))(*specs))
    return known if counting is None else float(jax.jit(counting.call)(*args)[-1])


def unmeasurable(what: str) -> AssertionError:
    return AssertionError(
        f"{what}的计算量量不出来：循环的条件里不能再有循环或分支，程序也不能大到调用全部展开后超过几十万个运算。"
    )


def check_work_ratio(backward: float, function: float, what: str, reveal: bool = True) -> None:
    """The backward pass costs at most WORK_RATIO times the function (4.1's cheap gradient). The
    message writes the constant as text: a hidden test's message is made of the course's text only."""
    if backward > WORK_RATIO * function:
        measured = f"（约 {backward / max(function, 1.0):.0f} 倍）" if reveal else ""
        raise AssertionError(
            f"{what}的反向过程做的计算超过函数本身的 40 倍{measured}："
            "反向模式的梯度只要函数本身的几倍计算（4.1）；"
            "对每个输入分量各做一次前向模式或有限差分（哪怕用 vmap 或 lax.map 并起来），"
            "计算量就是分量个数乘以整个函数；反向过程里的 while_loop 若停止条件在 float32 的舍入误差下达不到，"
            "也会一直跑到次数上限。"
        )


# The adjoint's backward pass keeps W and a few vectors, and holds a few times d² + d numbers (a
# dense Jacobian per stage d³): generous backstops beside growth, which is the measure.
RESIDUAL_VECTORS, HELD_BACKSTOP = 4, 16


def check_adjoint_method(full, short, steps: int, d: int, args, cotangent, what: str, reveal: bool = True) -> None:
    """`full` and `short` are the graded call exported at N_STEPS = 100 and at `steps` (fewer). The
    adjoint's backward pass keeps and holds exactly as much at both (flat means equal: a checkpoint
    every few steps, or log N of them, grows); both passes do the steps they are asked for (the
    work grows with N_STEPS); the backward pass costs at most WORK_RATIO times RK4 itself; and a
    generous backstop on what it keeps and holds."""
    for name, a, b in (("保存的残差", short.kept, full.kept), ("反向过程同时占着的数", short.bwd.held, full.bwd.held)):
        if a != b:
            counts = f"（N_STEPS = {steps} 时 {a} 个，100 时 {b} 个）" if reveal else ""
            raise AssertionError(
                f"{what}{name}随步数变化{counts}：伴随法的反向过程只带着 (z, a, W̄) 从 z(T) 倒着积分，"
                "内存与步数无关；保存轨迹、每隔几步存一个检查点、在反向里重跑求解器再求导，都会随步数增长"
                "（反向里也不要建长度为 N_STEPS 的数组，比如时间点：方程不显含 t，用不着）。"
            )
    limits = (("保存的残差", full.kept, d * d + RESIDUAL_VECTORS * d),
              ("反向过程同时占着的数", full.bwd.held, HELD_BACKSTOP * (d**3 + d * d + d)))  # fmt: skip
    for name, count, limit in limits:
        if count > limit:
            counts = f"（d = {d} 时 {count} 个，上限 {limit}）" if reveal else ""
            raise AssertionError(f"{what}{name}太多了{counts}：伴随法只需要保存 W 和 z(T) 这样的几个向量。")
    try:
        works = {n: split.work(args, cotangent) for n, split in ((steps, short), (100, full))}
    except ch4dataflow.Unmeasurable:
        raise unmeasurable(what) from None
    expected = 100 / steps
    for part, index in (("前向", 0), ("反向", 1)):
        if works[100][index] < 0.75 * expected * works[steps][index]:
            ratio = f"（只多了 {works[100][index] / max(works[steps][index], 1.0):.1f} 倍）" if reveal else ""
            change = f"N_STEPS 从 {steps} 改成 100，" if reveal else "N_STEPS 改大以后，"
            raise AssertionError(
                f"{change}{what}{part}的计算量没有跟着增长{ratio}：N_STEPS 要在调用时读取（全局变量），"
                "前向走 N_STEPS 步，伴随法的反向也倒着走 N_STEPS 步。"
            )
    for n, when in ((steps, "步数较小时"), (100, "N_STEPS = 100 时")):
        check_work_ratio(works[n][1], reference_work(rk4_program(n), *args), when + what, reveal)
    drawn_from_z0 = np.random.default_rng(np.frombuffer(np.asarray(args[0], np.float32).tobytes(), np.uint32))
    for split, n in ((short, steps), (full, 100)):  # both counts: a method may switch on N_STEPS
        check_adjoint_scheme(split, n, d, drawn_from_z0, what)


# Rotations of ω ≈ 25 at 20 to 40 steps (ω ≈ 50 at 100): the adjoint's VJP and the unrolled solver's
# differ by 1e-2 to 0.16 (at least 1.1e-2 at 100; 90 steps instead of 100 by 4.6e-3), float32's rounding of the
# adjoint is 1.4e-6 (measured on 40 draws).
SCHEME_OMEGA, SCHEME_TOLERANCE = (25.0, 50.0), 1e-4
SCHEME_MESSAGES = {  # what an answer is told whose VJP is the other scheme's
    True: "不是题目规定的伴随法算出的：在步长较大的输入上，对增广状态 (z, a, W̄) 从 z(T) 倒着走 N_STEPS 步 RK4 的结果"
    "与“对前向的每一步反向求导”明显不同（伴随法有它自己的截断误差），而这里的结果不是前者。"
    "保存或重算前向轨迹再逐步求导、用别的积分格式或别的步数倒着积分，都不是这个做法。",
    False: "不是对 N_STEPS 步 RK4 逐步反向求导的结果：在步长较大的输入上，连续伴随法有它自己的截断误差，与“直接对"
    "展开的求解器求导”明显不同，而 odeint_unrolled 要的是后者：它的求导交给 JAX 自动微分，不能借用 odeint_adjoint。",
}


def check_adjoint_scheme(split, steps: int, d: int, rng, what: str, adjoint: bool = True):
    """The VJP is the one asked for: RK4 on (z, a, W̄) back from z(T), `steps` steps (`adjoint`), else
    reverse mode through each forward step. On fast inputs they differ by far more than rounding."""
    z0, W = fast_rotations(rng, d, SCHEME_OMEGA[steps >= 100])
    g = rng.normal(size=d).astype(np.float32)
    schemes = [np.concatenate([v.ravel() for v in f(z0, W, g, steps)]) for f in (rk4_adjoint_vjp, rk4_vjp)]
    want, other = schemes if adjoint else schemes[::-1]
    if np.linalg.norm(other - want) < 20 * SCHEME_TOLERANCE * np.linalg.norm(want):
        raise RuntimeError("course bug: inputs that do not tell the adjoint from the unrolled solver")
    _, cotangents = attempt(lambda: split.vjp((z0, W), g), f"{what}在另一组输入上做 jax.vjp")
    got = np.concatenate([np.asarray(v, np.float64).ravel() for v in cotangents])
    if got.shape != want.shape or not np.linalg.norm(got - want) < SCHEME_TOLERANCE * np.linalg.norm(want):
        raise AssertionError(f"{what}的 VJP {SCHEME_MESSAGES[adjoint]}")


# ---------------------------------------------------------------------------------------------
# residuals: each rule keeps exactly what it names, in any layout, and uses what it is given

# What sin2_save's backward pass may compute with: arithmetic on the residuals and the cotangent,
# moving and reshaping arrays. No sine, cosine, exponential, root or any other function: the
# point of saving sin x and cos x is that the backward pass only multiplies them.
ARITHMETIC = frozenset(
    {f"stablehlo.{name}" for name in (
        "add subtract multiply divide negate abs constant broadcast broadcast_in_dim reshape convert "
        "transpose slice dynamic_slice concatenate gather select compare reduce dot_general dot maximum "
        "minimum clamp iota pad reverse dynamic_update_slice scatter return real imag complex"
        " is_finite and or not xor sign floor ceil round_nearest_even round_nearest_afz case if select_and_scatter"
        " optimization_barrier"  # jax.checkpoint's identity that keeps XLA from merging recomputation
    ).split()}
    | {"func.func", "func.return", "func.call", "builtin.module", "sdy.mesh", "chlo.square"}
)  # fmt: skip


def check_sin2_rules(name: str, split, x, rng, reveal: bool = True) -> None:
    """`name` is "sin2_save" (residuals: exactly sin x and cos x) or "sin2_recompute" (exactly x).
    Runs the graded call's forward pass on x, checks the numbers it keeps are exactly those (in any
    layout: separate arrays, stacked on any axis, a tuple, a dict, one complex array), then runs
    its backward pass on other values put in their places and requires what the method predicts:
    2g·S·C from (S, C), g·sin 2X from X. sin2_save's backward pass may only do arithmetic
    (``ARITHMETIC``). `x` from ``sin2_inputs``; or a tuple of parts of one when `split` calls the
    function once per part in one trace and stacks the results, or a matrix of such rows when
    `split` is ``jax.vmap`` of the function (then each call or row keeps its own)."""
    several = isinstance(x, tuple) or np.ndim(x) == 2
    parts = [np.asarray(v, np.float32) for v in (x if several else (x,))]
    sizes, x64 = [v.size for v in parts], np.concatenate(parts).astype(np.float64)
    n, args = x64.size, ((tuple(parts),) if isinstance(x, tuple) else (np.asarray(x, np.float32),))
    at = (
        ("同一次追踪里调用多次时 " if isinstance(x, tuple) else "vmap 下 " if several else f"n = {n} 时 ")
        if reveal
        else ""
    )
    _, residuals = attempt(lambda: split.fwd(*args), f"{at}运行 {name}")
    leaves = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(residuals)]
    numbers = residual_numbers(leaves)
    g = (rng.choice([-1.0, 1.0], size=len(parts)) * rng.uniform(0.5, 3.0, size=len(parts))).astype(np.float32)
    g_each = np.repeat(g, sizes).astype(np.float64)  # the cotangent of the call each number belongs to
    if name == "sin2_save":
        located = located_numbers(numbers, np.concatenate([np.sin(x64), np.cos(x64)]))
        if located is None:
            raise AssertionError(
                f"{at}sin2_save 保存的残差不正好是 sin x 和 cos x："
                "题目要求前向时算好 sin x 和 cos x 存下来（怎么摆放都可以），反向只用它们；多存别的数组（比如 x）、"
                "存 2·sin x 这样的变形、或者只存 x 在反向里重算，都不是这个做法。"
            )
        S, C = rng.uniform(-2.0, 2.0, size=n), rng.uniform(-2.0, 2.0, size=n)  # off the unit circle
        replacement, told = np.concatenate([S, C]), "换成另外两个数组 S、C "
        want = 2.0 * g_each * S.astype(np.float32) * C.astype(np.float32)
        functions = sorted({op for op, _ in split.bwd.operations} - ARITHMETIC)
        if functions:  # the program's operations: nothing of a hidden input
            raise AssertionError(
                f"sin2_save 的反向过程里算了 {'、'.join(f.split('.')[-1] for f in functions)}："
                "保存 sin x 和 cos x 就是为了反向时只做乘法，不再计算三角函数、指数、开方这类函数。"
            )
    else:
        located = located_numbers(numbers, x64)
        if located is None:
            raise AssertionError(
                f"{at}sin2_recompute 保存的残差不正好是 x 本身：题目要求只存输入 x"
                "（存 sin 2x 或 sin x、cos x 就是把反向要用的量提前算好了，那是 sin2_save 的做法）。"
            )
        replacement, told = rng.uniform(-8.0, 8.0, size=n), "换成另一个数组 X "
        want = g_each * np.sin(2.0 * replacement.astype(np.float32).astype(np.float64))
    for value, (leaf, position) in zip(replacement, located, strict=True):
        numbers[leaf][position] = value
    given = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(residuals), with_numbers(leaves, numbers))
    cotangent = g if several else g[0]
    back = attempt(lambda: split.bwd(given, cotangent), f"{at}把残差{told}后运行 {name} 的反向过程")
    got = np.concatenate([np.ravel(v) for v in back[0]]) if several else back[0]
    check_close(got, want, f"{at}残差{told}后 {name} 的反向过程", atol=1e-5 * np.abs(g_each), rtol=1e-5, reveal=reveal,
                hint="反向要用它收到的残差算梯度：sin2_save 从 S、C 得到 2g·S·C，sin2_recompute 从 X 得到 g·sin 2X；"
                "忽略某个残差、改用别的量重算，结果都会不一样。")  # fmt: skip


# ---------------------------------------------------------------------------------------------
# safe_norm

LINEAR_RULE = (
    "切向量规则必须对 t 线性，JAX 才能转置它；函数也要能在 jax.jit 下追踪（不能用 Python 的 if 判断数组的值）。"
)
# Where ‖x‖² is a normal float32 (1.2e-38 to 3.4e38) and so are the squares of a 5-vector's entries: a unit
# vector scaled by 1e-18, 1e-17, ... 1e19 (attack round 10 zeroed the gradient above 1e18, where none was tested).
SCALES = tuple(10.0**k for k in range(-18, 20))


def check_scales(split, jvp, x, what: str, reveal: bool = True, rng=None) -> None:
    """The gradient of ‖x‖ is x/‖x‖ at every scale where ‖x‖² is a normal float32, and so is the
    JVP along t, xᵀt/‖x‖: an ε added to the norm, or small vectors treated as zero, change it at
    small scales; a norm that overflows changes it at large ones. `x`: entries of similar size.
    `split` is the graded call (``export_split``), `jvp` its forward mode (``export_jvp``). With
    `rng`, one scale drawn in each decade from 1e-17 to 1e19 instead of SCALES (a decade skipped fails; below
    1e-17 a 512-vector's entries square to subnormals, which XLA on CPU flushes to zero)."""
    x64 = np.asarray(x, np.float64)
    unit = x64 / np.linalg.norm(x64)
    t = np.asarray(np.sign(x64) * 0.5 + 0.25, np.float32)
    for scale in SCALES if rng is None else 10.0 ** (np.arange(-17, 19) + rng.uniform(0.0, 1.0, 36)):
        point = (unit * scale).astype(np.float32)
        where = f"x 的大小为 {scale:.0e} 时" if reveal else "x 很大或很小时"
        _, (grad,) = attempt(
            lambda point=point: split.vjp((point,), np.float32(1.0)), f"{where}对 {what} 求梯度", LINEAR_RULE
        )
        check_close(grad, unit, f"{where} {what} 的梯度", rtol=1e-5, atol=1e-6, finite=True, reveal=reveal,
                    hint="梯度 x/‖x‖ 与 x 的大小无关：不要给范数加 ε，也不要把小向量当成 0；"
                    "只有 x = 0 时才是 0。")  # fmt: skip
        _, tangent = attempt(lambda point=point: jvp(point, t), f"{where}对 {what} 做 JVP", LINEAR_RULE)
        check_close(tangent, float(unit @ t), f"{where} {what} 的 JVP", rtol=1e-5, atol=1e-6, finite=True,
                    reveal=reveal, hint="JVP 是 xᵀt/‖x‖，与 x 的大小无关。")  # fmt: skip


def check_grads_fwd_rev(f, f_jvp, x, where: str = "", reveal: bool = True) -> None:
    """``check_grads`` in reverse and forward mode at x with eps = 1e-3 (in float32 the default step
    fails about 1 input in 200 even for a right rule; with 1e-3 none of 3000 did). `f` a function
    JAX differentiates by the graded call's own backward pass (``as_function``), `f_jvp` the
    exported ``jax.jvp``. A hidden test names the mode that disagreed, not the numbers."""
    from jax.test_util import check_grads, check_jvp

    where, dtype = (f"{where} " if where else ""), np.asarray(x).dtype
    # In x's precision: an answer that returns float64 from float32 inputs meets float32's differences.
    same = lambda tree: jax.tree_util.tree_map(lambda v: v if v.dtype == dtype else v.astype(dtype), tree)  # noqa: E731
    for mode, run in (
        ("rev", lambda: check_grads(lambda v: same(f(v)), (x,), order=1, modes=["rev"], eps=1e-3)),
        ("fwd", lambda: check_jvp(lambda v: same(f(v)), lambda xs, ts: same(tuple(f_jvp(*xs, *ts))), (x,), eps=1e-3)),
    ):
        doing = f"{where}check_grads（{mode}）"
        try:
            attempt(run, doing, LINEAR_RULE)
        except AssertionError as err:
            text = str(err).strip()
            if text.startswith((doing + "出错", doing + " 出错")):
                raise  # the program failed to run, which is not a disagreement with finite differences
            if not reveal:
                raise AssertionError(f"{where}check_grads（fwd+rev）未通过：{mode} 模式与有限差分不符") from None
            raise AssertionError(f"{where}check_grads（fwd+rev）未通过：{text}") from None


def as_function(split):
    """The graded call as a function JAX differentiates in reverse mode by its own backward pass
    (``jax.grad``, ``check_grads``): the value from the forward program, the VJP from the backward."""

    @jax.custom_vjp
    def call(*args):
        return split.value(*args)

    call.defvjp(lambda *args: split.fwd(*args), lambda residuals, cotangent: tuple(split.bwd(residuals, cotangent)))
    return call


# ---------------------------------------------------------------------------------------------
# coloring


def check_jvp_count(products: list[int], others: list[str], b: int, what: str) -> None:
    """How the program used J, the Jacobian the test function multiplies its input by (J @ v):
    only by products (`others` empty), one of them pushing exactly 2b+1 tangents at once, besides
    at most two that evaluate the function itself (one vector each)."""
    pushed = [p for p in products if p > 1]
    if others:
        raise AssertionError(
            f"{what}：程序除了 JVP 还用别的方式读了雅可比矩阵（{'、'.join(others[:3])}）：要只靠 2b+1 个 JVP 得到它，"
            "不能用反向模式（jax.vjp / jacrev），也不要把 JVP 放进 lax.cond、while_loop 这类控制流里。"
        )
    if pushed != [2 * b + 1] or len(products) - len(pushed) > 2:
        raise AssertionError(
            f"{what}：JVP 推切向量的方式不对（每次推的个数：{'、'.join(str(p) for p in products)}），"
            f"应当用 jax.vmap 一次推完 2b+1 = {2 * b + 1} 个着色种子：jacfwd 推 n 个，"
            "在 Python 循环里逐个调用 jax.jvp 就是分成了 2b+1 次。"
        )


# ---------------------------------------------------------------------------------------------
# clip_global_norm


# ---------------------------------------------------------------------------------------------
# soft_values: the soft Bellman equation V = T(V), T(V)_s = log Σ_a exp(R_sa + γ Σ_t P_sat V_t)

ACCURACY = 2e-4
SOLVE_HINT = (
    "反向规则要在 V* 处解 (I − ∂T/∂V)ᵀ v = g（g 是传入的余切，注意转置），再把 v 经 T 对 R、P、γ 的偏导送回；"
    "有限差分、只对最后一步或截断的几步求导，在 γ 接近 1 时都不够准；反向若用迭代解这个方程，它每步的误差也只乘 γ，"
    "要像前向一样用相对的停止条件迭代到 float32 的精度（绝对容差、几百步的上限在 γ 接近 1 时不够）。"
)


def check_soft_values(got, R, P, gamma, label: str, reveal: bool = True) -> None:
    """V* a program gave against the float64 solution, to ACCURACY of its largest entry."""
    want = soft_values64(R, P, gamma)[0]
    check_close(
        got,
        want,
        f"{label}的 V*",
        rtol=0.0,
        atol=ACCURACY * float(np.max(np.abs(want))),
        finite=True,
        reveal=reveal,
        hint="迭代要收敛到 float32 的精度：停在相邻两步之差 δ 时，离 V* 还有约 γδ/(1 − γ)。",
    )


def check_soft_values_vjp(got, R, P, gamma, g, label: str, reveal: bool = True) -> None:
    """The VJP (R̄, P̄, γ̄) a program gave for cotangent g against the float64 implicit-function
    gradient, each to ACCURACY of its largest entry."""
    wants = soft_values_vjp64(R, P, gamma, g)  # γ̄ is a sum whose terms may cancel: scaled by their sizes
    V = soft_values64(R, P, gamma)[0]
    scales = np.max(np.abs(wants[0])), np.max(np.abs(wants[1])), np.sum(np.abs(wants[0]) * np.abs(np.asarray(P) @ V))
    for part, want, scale, name in zip(got, wants, scales, ("R", "P", "γ"), strict=True):
        check_close(part, want, f"{label}对 {name} 的梯度", rtol=0.0, atol=ACCURACY * float(scale),
                    hint=SOLVE_HINT, finite=True, reveal=reveal)  # fmt: skip


def implicit_n(states: int, actions: int) -> int:
    """soft_values' inputs and output: n = S²A + SA + S + 1 numbers."""
    return states * states * actions + states * actions + states + 1


# A backstop on what a backward pass keeps (a few copies of the inputs and V*) and holds (dense
# Jacobians of T with respect to every input are honest and hold about 4n² numbers at S, A = 6, 3).
KEPT_BACKSTOP, HELD_BACKSTOP_N, HELD_BACKSTOP_N2 = 8, 64, 8


def check_implicit_method(split, states: int, actions: int, args, cotangent, what: str, reveal: bool = True) -> None:
    """Implicit differentiation's backward pass: its work at most WORK_RATIO times value iteration's
    on the same inputs (at γ = 0.5 that is a few dozen steps, so differentiating a fixed unrolled
    loop, or one re-run per input entry, costs far more), and a generous backstop on what it keeps
    (KEPT_BACKSTOP·n) and holds (HELD_BACKSTOP_N·n + HELD_BACKSTOP_N2·n²)."""
    n = implicit_n(states, actions)
    for name, count, limit in (
        ("保存的残差", split.kept, KEPT_BACKSTOP * n),
        ("反向过程同时占着的数", split.bwd.held, HELD_BACKSTOP_N * n + HELD_BACKSTOP_N2 * n * n),
    ):
        if count > limit:
            counts = f"（S = {states}、A = {actions} 时 {count} 个，上限 {limit}）" if reveal else ""
            raise AssertionError(
                f"{what}{name}太多了{counts}：隐式求导的反向过程只要输入和解 V*，解一个 S×S 的线性方程组；"
                "保存迭代过程（哪怕存在固定大小的数组里）不是这个做法。"
            )
    try:
        forward, backward = split.work(args, cotangent)
    except ch4dataflow.Unmeasurable:
        raise unmeasurable(what) from None
    function = reference_work(value_iteration, *args)
    check_work_ratio(backward, function, what, reveal)
    # Near γ = 1 value iteration itself takes hundreds of steps, so a forward pass that converges
    # costs a few times it (a fixed 3 000 steps ≤ 6×); one that pushes a tangent per input entry
    # through the iteration costs n times it (attack round 12 kept dV*/dθ as its residual).
    if float(args[2]) >= 0.95 and forward > FORWARD_RATIO * function:
        measured = f"（约 {forward / max(function, 1.0):.0f} 倍）" if reveal else ""
        raise AssertionError(
            f"{what}的前向过程做的计算超过值迭代本身的 20 倍{measured}：前向只要把值迭代跑到收敛；"
            "在前向里对每个输入分量各推一个切向量（前向模式）或各做一次有限差分，计算量就是分量个数乘以整个迭代。"
        )


HELPERS = (
    *REFERENCES, solution, check_adjoint_method, check_adjoint_scheme, check_sin2_rules, check_scales, as_function,
    check_grads_fwd_rev, check_jvp_count, check_soft_values, check_soft_values_vjp, implicit_n, check_implicit_method,
)  # fmt: skip
# What a test body may name from here (ch4judge.VERDICT_HELPERS): the helpers, and the hint they share.
NAMES = {**{f.__name__: f for f in HELPERS}, "LINEAR_RULE": LINEAR_RULE}
