"""Wrong: both solvers and the adjoint's backward pass run N_STEPS RK4 steps only when N_STEPS <= 40; at the default N_STEPS = 100 they all take 76 steps of h = T/76. The 100-step checks (1e-5 to the exact solution, 4e-5 to 100-step RK4 at ‖W‖ ≈ 10, gradients to 1e-4 on gentle inputs) all accept a 76-step solver, and 76/100 meets the ¾ work ratio."""

N_STEPS = 100
T_END = 1.0


def _steps():
    return N_STEPS if N_STEPS <= 40 else (3 * N_STEPS) // 4 + 1


def rk4(field, y, h):
    k1 = field(y)
    k2 = field(y + 0.5 * h * k1)
    k3 = field(y + 0.5 * h * k2)
    k4 = field(y + h * k3)
    return y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def odeint_unrolled(z0, W):
    n = _steps()
    return jax.lax.fori_loop(0, n, lambda i, z: rk4(lambda v: jnp.tanh(W @ v), z, T_END / n), z0)


@jax.custom_vjp
def odeint_adjoint(z0, W):
    return odeint_unrolled(z0, W)


def fwd(z0, W):
    zT = odeint_unrolled(z0, W)
    return zT, (zT, W)


def bwd(res, g):
    zT, W = res
    d = zT.shape[0]
    n = _steps()

    def backward_field(y):
        z, a = y[:d], y[d : 2 * d]
        u = W @ z
        s = a * (1.0 - jnp.tanh(u) ** 2)
        return jnp.concatenate([-jnp.tanh(u), W.T @ s, jnp.outer(s, z).ravel()])

    y = jnp.concatenate([zT, g, jnp.zeros(d * d, zT.dtype)])
    y = jax.lax.fori_loop(0, n, lambda i, y: rk4(backward_field, y, T_END / n), y)
    return y[d : 2 * d], y[2 * d :].reshape(d, d)


odeint_adjoint.defvjp(fwd, bwd)
