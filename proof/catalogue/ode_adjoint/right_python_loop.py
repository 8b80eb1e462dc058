"""Correct: plain Python loops, separate z / a / W_bar variables, derivatives of f from jax.vjp."""

N_STEPS = 100
T_END = 1.0


def f(z, W):
    return jnp.tanh(W @ z)


def odeint_unrolled(z0, W):
    h = T_END / N_STEPS
    z = z0
    for _ in range(N_STEPS):
        k1 = f(z, W)
        k2 = f(z + h / 2 * k1, W)
        k3 = f(z + h / 2 * k2, W)
        k4 = f(z + h * k3, W)
        z = z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return z


def _adjoint_rhs(z, a, W):
    """Right-hand side of the augmented system in reversed time."""
    fz, vjp_fn = jax.vjp(f, z, W)
    da, dW = vjp_fn(a)
    return -fz, da, dW


@jax.custom_vjp
def odeint_adjoint(z0, W):
    return odeint_unrolled(z0, W)


def _fwd(z0, W):
    zT = odeint_unrolled(z0, W)
    return zT, (zT, W)


def _bwd(res, g):
    z, W = res
    a, W_bar = g, jnp.zeros_like(W)
    h = T_END / N_STEPS
    for _ in range(N_STEPS):
        z1, a1, w1 = _adjoint_rhs(z, a, W)
        z2, a2, w2 = _adjoint_rhs(z + h / 2 * z1, a + h / 2 * a1, W)
        z3, a3, w3 = _adjoint_rhs(z + h / 2 * z2, a + h / 2 * a2, W)
        z4, a4, w4 = _adjoint_rhs(z + h * z3, a + h * a3, W)
        z = z + h / 6 * (z1 + 2 * z2 + 2 * z3 + z4)
        a = a + h / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
        W_bar = W_bar + h / 6 * (w1 + 2 * w2 + 2 * w3 + w4)
    return a, W_bar


odeint_adjoint.defvjp(_fwd, _bwd)
