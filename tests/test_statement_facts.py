"""What an exercise statement says about JAX holds on the pinned version, measured with the
reference solution: a statement that teaches a fact is held to it like a chapter cell's 🧪 check.

* ode_adjoint: the adjoint re-integrates z backwards, which is stable on the tests' systems and
  breaks on stiff ones (its ⚠️ paragraph and the numbers in it);
* softplus: XLA on CPU flushes subnormal results to zero, so the forward value is 0 for x in about
  [-104, -87.3] however it is written (requirement 3), and the hand-written stable formula's
  autodiff gives 0 at x = 0 (why a rule is asked for).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from proof import answers


def _reference(assignment):
    space = {"jax": jax, "jnp": jnp, "np": np}
    exec(answers.reference_answer(assignment), space)  # the course's own reference solution
    return space


@pytest.fixture(scope="module")
def ode_gradients():
    """Relative error of dL/dW, adjoint against unrolled (L = ‖z(T)‖²), for the reference."""
    ref = _reference("ode_adjoint")

    def grad_of(solve):
        return jax.jit(jax.grad(lambda z0, W: jnp.sum(solve(z0, W) ** 2), argnums=1))

    adjoint, unrolled = grad_of(ref["odeint_adjoint"]), grad_of(ref["odeint_unrolled"])

    def relative_error(z0, W):
        got, want = np.asarray(adjoint(z0, W), np.float64), np.asarray(unrolled(z0, W), np.float64)
        if not np.any(want) and not np.any(got):
            return 0.0  # tanh saturated to ±1 in float32: both gradients are exactly 0, and agree
        return float(np.linalg.norm(got - want) / np.linalg.norm(want))

    return relative_error


def test_ode_adjoint_is_stable_on_the_systems_the_tests_draw(ode_gradients):
    """'倒着积分是稳定的，参考解的伴随梯度与展开求导相差约 1e-6，测试要求 1e-4 以内': W is 0.5–1 times a
    standard normal matrix (the visible tests' 0.8 and 0.9, the hidden tests' uniform(0.5, 1.0))."""
    rng = np.random.default_rng(0)
    errors = []
    for _ in range(40):
        d = int(rng.choice([3, 4, 5, 6, 7]))
        W = (rng.uniform(0.5, 1.0) * rng.normal(size=(d, d))).astype(np.float32)
        errors.append(ode_gradients(rng.normal(size=d).astype(np.float32), W))
    assert max(errors) < 1e-5, f"the adjoint drifts from the unrolled gradient on the tests' systems: {max(errors):.1e}"


def test_ode_adjoint_breaks_on_stiff_systems(ode_gradients):
    """The ⚠️ paragraph: W = Q·diag(-λ, -1, -0.5)·Qᵀ, same RK4 and 100 steps, random Q and z0 (8 draws):
    λ = 10 stays within about 1e-4; λ = 30 ranges from 1e-5 to 0.4; λ = 60 is mostly above 0.2."""

    def errors(lam):
        out = []
        for seed in range(8):
            rng = np.random.default_rng(seed)
            Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
            z0 = rng.normal(size=3).astype(np.float32)
            out.append(ode_gradients(z0, (Q @ np.diag([-lam, -1.0, -0.5]) @ Q.T).astype(np.float32)))
        return np.array(out)

    mild, stiff, stiffer = errors(10.0), errors(30.0), errors(60.0)
    assert mild.max() < 1e-4, mild
    assert stiff.min() < 1e-4 and 0.1 < stiff.max() < 1.0, stiff
    assert np.sum(stiffer > 0.2) >= 5, stiffer


def test_softplus_subnormal_results_are_flushed_to_zero():
    """Requirement 3: for x in about [-104, -87.3] the exact softplus is below 2^-126 (subnormal) and
    XLA on CPU returns 0; just above -87.3 it is normal and returned; below -104 it rounds to 0 anyway."""
    softplus = jax.jit(lambda x: jnp.logaddexp(x, 0.0))
    exact = lambda x: np.log1p(np.exp(np.float64(np.float32(x))))  # noqa: E731
    tiny, half_smallest = 2.0**-126, 2.0**-150
    assert float(softplus(np.float32(-87.3))) > 0 and exact(-87.3) > tiny
    inside = np.linspace(-103.9, -87.34, 200).astype(np.float32)
    assert np.all(np.asarray(softplus(inside)) == 0.0)
    assert all(half_smallest < exact(x) < tiny for x in (-103.9, -95.0, -87.34))
    assert exact(-104.0) < half_smallest
    assert 0.9e-30 < exact(-69.0) < 1.1e-30  # where the absolute tolerance 1e-30 takes over


def test_softplus_hand_written_stable_formula_has_the_wrong_gradient_at_zero():
    """'自己把稳定式写出来……再交给自动微分，x = 0 处的梯度却是 0，而不是 σ(0) = 0.5'."""
    stable = lambda x: jnp.maximum(x, 0.0) + jnp.log1p(jnp.exp(-jnp.abs(x)))  # noqa: E731
    assert float(jax.grad(stable)(0.0)) == 0.0
    assert float(jax.grad(lambda x: jnp.logaddexp(x, 0.0))(0.0)) == 0.5
    assert float(jax.grad(_reference("softplus")["softplus_prod"])(0.0)) == 0.5
