"""Violates: the backward pass takes N_STEPS RK4 steps: it integrates the augmented state in N_STEPS // 5 steps five times as long (at 100 steps the gradient is still within 1e-4, and the work still grows with N_STEPS)."""

N_STEPS = 100
T_END = 1.0


def f(z, W):
    return jnp.tanh(W @ z)


def _rk4(F, y, h):
    k1 = F(y)
    k2 = F(y + h / 2 * k1)
    k3 = F(y + h / 2 * k2)
    k4 = F(y + h * k3)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def odeint_unrolled(z0, W):
    h = T_END / N_STEPS
    return jax.lax.fori_loop(0, N_STEPS, lambda _, z: _rk4(lambda z: f(z, W), z, h), z0)


@jax.custom_vjp
def odeint_adjoint(z0, W):
    return odeint_unrolled(z0, W)


def _fwd(z0, W):
    zT = odeint_unrolled(z0, W)
    return zT, (zT, W)


def _bwd(res, g):
    zT, W = res
    d = zT.shape[0]

    def F(y):
        z, a = y[:d], y[d : 2 * d]
        fz, vjp_fn = jax.vjp(f, z, W)
        da, dW = vjp_fn(a)
        return jnp.concatenate([-fz, da, dW.ravel()])

    steps = max(1, N_STEPS // 5)
    y0 = jnp.concatenate([zT, g, jnp.zeros(d * d, W.dtype)])
    y = jax.lax.fori_loop(0, steps, lambda _, y: _rk4(F, y, T_END / steps), y0)
    return y[d : 2 * d], y[2 * d :].reshape(d, d)


odeint_adjoint.defvjp(_fwd, _bwd)
