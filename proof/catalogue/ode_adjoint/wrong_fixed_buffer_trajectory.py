"""Violates: memory independent of the steps: the backward rule re-runs the forward RK4 into a trajectory buffer of a fixed 128 rows (not N_STEPS) and differentiates each step discretely, so its memory is the same at 25 and 100 steps only because the buffer is oversized."""

N_STEPS = 100
T_END = 1.0
_MAX_STEPS = 128


def f(z, W):
    return jnp.tanh(W @ z)


def _rk4_step(z, W, h):
    k1 = f(z, W)
    k2 = f(z + h / 2 * k1, W)
    k3 = f(z + h / 2 * k2, W)
    k4 = f(z + h * k3, W)
    return z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def odeint_unrolled(z0, W):
    h = T_END / N_STEPS
    return jax.lax.fori_loop(0, N_STEPS, lambda _, z: _rk4_step(z, W, h), z0)


@jax.custom_vjp
def odeint_adjoint(z0, W):
    return odeint_unrolled(z0, W)


def _fwd(z0, W):
    return odeint_unrolled(z0, W), (z0, W)


def _bwd(res, g):
    z0, W = res
    n, h = N_STEPS, T_END / N_STEPS
    buf = jnp.zeros((_MAX_STEPS, z0.shape[0]), z0.dtype)

    def store(i, carry):
        z, buf = carry
        return _rk4_step(z, W, h), buf.at[i].set(z)

    _, buf = jax.lax.fori_loop(0, n, store, (z0, buf))

    def back(k, carry):
        a, W_bar = carry
        z = buf[n - 1 - k]
        _, vjp_fn = jax.vjp(lambda z, W: _rk4_step(z, W, h), z, W)
        a, dW = vjp_fn(a)
        return a, W_bar + dW

    return jax.lax.fori_loop(0, n, back, (g, jnp.zeros_like(W)))


odeint_adjoint.defvjp(_fwd, _bwd)
